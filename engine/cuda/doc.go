// Package cuda runs outcore's training step on an NVIDIA GPU without CUDA
// at build time: it loads the driver API (libcuda.so.1), NVRTC and cuBLAS
// with dlopen (as engine/nn's GEMM seam loads OpenBLAS), declaring the few
// entry points it calls itself, and compiles its kernels (kernels.cu:
// gather, mean aggregation and its scatter-add backward, ReLU+dropout,
// softmax cross-entropy, Adam, GCN's weighted aggregation, GAT's attention
// and its backward, ELU) from embedded CUDA C with NVRTC on first use.
// Dense products go through cuBLAS's sgemm.
//
// A machine without a GPU builds and tests it: Open returns an error
// wrapping ErrUnavailable that says what is missing, and the GPU tests
// skip with that reason; where NVRTC and g++ are installed,
// TestHostEmulation reruns the comparisons with engine/nn against a host
// stand-in for the driver that executes kernels.cu on the CPU
// (testdata/hostcuda). Built without cgo, Open always fails.
//
// Model is engine/nn's GraphSAGE, GCN or GAT model (ReLU or ELU, dropout,
// attention dropout, Adam) with every tensor in device memory; it starts from an
// engine/nn Model's weights and computes its steps to float rounding (the
// dropout bits, the GCN normalisation, the loss and Adam are engine/nn's,
// operation for operation).
package cuda
