//go:build cgo

package cuda

import (
	_ "embed"
	"fmt"
)

// kernelSource is outcore's CUDA C, compiled with NVRTC at first use.
//
//go:embed kernels.cu
var kernelSource string

// kernelNames are the kernels Open resolves from the compiled module.
var kernelNames = []string{"gather_rows", "sage_cat", "sage_cat_back", "add_bias", "fill",
	"relu_drop_fwd", "relu_drop_bwd", "softmax_ce", "adam", "spmm_w", "spmm_w_t", "drop_fwd",
	"head_dots", "gat_alpha", "gat_agg", "gat_agg_t", "head_mean", "head_mean_back", "gat_ds", "gat_del", "att_grad",
	"dz_add_att", "elu_fwd", "elu_bwd"}

// CompileKernels compiles kernels.cu to PTX for compute capability cc
// (the driver turns the PTX into machine code when it loads it).
func CompileKernels(rtc *nvrtcAPI, cc [2]int) (ptx []byte, log string, err error) {
	opts := []string{fmt.Sprintf("--gpu-architecture=compute_%d%d", cc[0], cc[1]), "--std=c++14"}
	ptx, log, err = rtc.compilePTX(kernelSource, "outcore_kernels.cu", opts)
	if err != nil {
		return nil, log, fmt.Errorf("compiling outcore's kernels for compute_%d%d: %w", cc[0], cc[1], err)
	}
	return ptx, log, nil
}

// CheckKernels loads NVRTC alone (no GPU needed) and compiles the kernels
// for compute capability cc, returning NVRTC's version and the PTX size.
// It fails with ErrUnavailable when NVRTC is not installed.
func CheckKernels(cc [2]int) (version [2]int, ptxBytes int, err error) {
	rtc, err := loadNVRTC()
	if err != nil {
		return version, 0, unavailable(err)
	}
	version[0], version[1] = rtc.Version()
	ptx, _, err := CompileKernels(rtc, cc)
	return version, len(ptx), err
}
