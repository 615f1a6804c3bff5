//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// Device is one CUDA GPU with its primary context, a cuBLAS handle and
// outcore's kernels loaded. Its methods are safe for one goroutine at a
// time (the trainer's); every call makes the context current on its
// thread first.
type Device struct {
	Name         string
	Ordinal      int
	CC           [2]int // compute capability
	DriverVer    int    // cuDriverGetVersion (e.g. 13000)
	NVRTCVersion [2]int
	MemTotal     int64

	drv   *driverAPI
	rtc   *nvrtcAPI
	blas  *cublasAPI
	ctx   unsafe.Pointer
	funcs map[string]unsafe.Pointer
	sms   int
	stage *staging // pinned host staging (staging.go), allocated on first use
}

// Buf is a device allocation of float32 or int32 elements.
type Buf struct {
	Ptr   uint64
	Bytes int64
}

var (
	openOnce sync.Once
	openDev  *Device
	openErr  error
)

// Open returns GPU 0, loading the driver, NVRTC and cuBLAS with dlopen and
// compiling the kernels on the first call. Without a usable GPU the error
// says what is missing (ErrUnavailable wraps it).
func Open() (*Device, error) {
	openOnce.Do(func() { openDev, openErr = open(0) })
	return openDev, openErr
}

// ErrUnavailable wraps every reason Open finds no usable GPU.
var ErrUnavailable = errors.New("no usable CUDA GPU")

func unavailable(err error) error { return fmt.Errorf("%w: %v", ErrUnavailable, err) }

func open(ord int) (*Device, error) {
	drv, err := loadDriver()
	if err != nil {
		return nil, unavailable(err)
	}
	if err := drv.err("cuInit", cuInit(drv)); err != nil {
		return nil, unavailable(err)
	}
	var n int
	if err := drv.err("cuDeviceGetCount", cuCount(drv, &n)); err != nil {
		return nil, unavailable(err)
	}
	if n <= ord {
		return nil, unavailable(fmt.Errorf("the driver reports %d GPU(s)", n))
	}
	d := &Device{drv: drv, Ordinal: ord, funcs: map[string]unsafe.Pointer{}}
	if err := d.setup(); err != nil {
		return nil, unavailable(err)
	}
	return d, nil
}

func (d *Device) setup() error {
	drv := d.drv
	var dev int
	if err := drv.err("cuDeviceGet", cuGet(drv, &dev, d.Ordinal)); err != nil {
		return err
	}
	name := make([]byte, 256)
	if err := drv.err("cuDeviceGetName", cuName(drv, name, dev)); err != nil {
		return err
	}
	d.Name = cString(name)
	// CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, MINOR = 76,
	// MULTIPROCESSOR_COUNT = 16
	for i, a := range []int{75, 76} {
		if err := drv.err("cuDeviceGetAttribute", cuAttr(drv, &d.CC[i], a, dev)); err != nil {
			return err
		}
	}
	if err := drv.err("cuDeviceGetAttribute", cuAttr(drv, &d.sms, 16, dev)); err != nil {
		return err
	}
	cuVersion(drv, &d.DriverVer)
	if err := drv.err("cuDevicePrimaryCtxRetain", cuRetain(drv, &d.ctx, dev)); err != nil {
		return err
	}
	setCtx(drv, d.ctx)
	var free int64
	if err := drv.err("cuMemGetInfo", cuMemInfo(drv, &free, &d.MemTotal)); err != nil {
		return err
	}
	rtc, err := loadNVRTC()
	if err != nil {
		return err
	}
	d.rtc = rtc
	d.NVRTCVersion[0], d.NVRTCVersion[1] = rtc.Version()
	ptx, _, err := CompileKernels(rtc, d.CC)
	if err != nil {
		return err
	}
	mod, err := d.loadModule(ptx)
	if err != nil {
		return err
	}
	for _, k := range kernelNames {
		f, err := d.function(mod, k)
		if err != nil {
			return err
		}
		d.funcs[k] = f
	}
	blas, err := loadCublas()
	if err != nil {
		return err
	}
	d.blas = blas
	return nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Alloc returns a zeroed device buffer of n bytes.
func (d *Device) Alloc(n int64) (Buf, error) {
	if n <= 0 {
		n = 4
	}
	var p uint64
	if err := d.drv.err(fmt.Sprintf("cuMemAlloc(%d bytes)", n), cuAlloc(d.drv, &p, n)); err != nil {
		return Buf{}, err
	}
	b := Buf{Ptr: p, Bytes: n}
	return b, d.Zero(b)
}

// Free releases b (a zero Buf is ignored).
func (d *Device) Free(b Buf) {
	if b.Ptr != 0 {
		cuFree(d.drv, b.Ptr)
	}
}

// Zero clears b.
func (d *Device) Zero(b Buf) error {
	return d.drv.err("cuMemsetD8", cuMemset(d.drv, b.Ptr, b.Bytes))
}

// ZeroN clears the first n bytes of b.
func (d *Device) ZeroN(b Buf, n int64) error {
	if n <= 0 {
		return nil
	}
	return d.drv.err("cuMemsetD8", cuMemset(d.drv, b.Ptr, n))
}

// PutF32 copies host floats to the start of b.
func (d *Device) PutF32(b Buf, h []float32) error {
	if len(h) == 0 {
		return nil
	}
	if int64(len(h))*4 > b.Bytes {
		return fmt.Errorf("cuda: %d floats into a %d-byte buffer", len(h), b.Bytes)
	}
	return d.drv.err("cuMemcpyHtoD", cuHtoD(d.drv, b.Ptr, unsafe.Pointer(&h[0]), int64(len(h))*4))
}

// PutI32 copies host int32s to the start of b.
func (d *Device) PutI32(b Buf, h []int32) error {
	if len(h) == 0 {
		return nil
	}
	if int64(len(h))*4 > b.Bytes {
		return fmt.Errorf("cuda: %d ints into a %d-byte buffer", len(h), b.Bytes)
	}
	return d.drv.err("cuMemcpyHtoD", cuHtoD(d.drv, b.Ptr, unsafe.Pointer(&h[0]), int64(len(h))*4))
}

// GetF32 copies the start of b to host floats.
func (d *Device) GetF32(h []float32, b Buf) error {
	if len(h) == 0 {
		return nil
	}
	return d.drv.err("cuMemcpyDtoH", cuDtoH(d.drv, unsafe.Pointer(&h[0]), b.Ptr, int64(len(h))*4))
}

func (d *Device) getBytes(h unsafe.Pointer, b Buf, n int64) error {
	return d.drv.err("cuMemcpyDtoH", cuDtoH(d.drv, h, b.Ptr, n))
}

// Sync waits for every queued kernel and copy.
func (d *Device) Sync() error { return d.drv.err("cuCtxSynchronize", cuSync(d.drv)) }

// MemInfo is the device's free and total memory in bytes.
func (d *Device) MemInfo() (free, total int64, err error) {
	err = d.drv.err("cuMemGetInfo", cuMemInfo(d.drv, &free, &total))
	return free, total, err
}

// arg packs a kernel argument into an 8-byte slot.
type arg = uint64

func f32(v float32) arg { return uint64(math.Float32bits(v)) }
func i32(v int) arg     { return uint64(uint32(int32(v))) }

// launch runs kernel name over n work items with a grid-stride loop.
func (d *Device) launch(name string, n int64, args ...arg) error {
	f := d.funcs[name]
	if f == nil {
		return fmt.Errorf("cuda: no kernel %q", name)
	}
	if n <= 0 {
		return nil
	}
	const threads = 256
	blocks := (n + threads - 1) / threads
	if max := int64(d.sms) * 32; blocks > max {
		blocks = max
	}
	if len(args) > 32 {
		return errArgs
	}
	return d.drv.err("cuLaunchKernel "+name, cuLaunch(d.drv, f, uint32(blocks), 1, threads, args))
}

func (d *Device) loadModule(ptx []byte) (unsafe.Pointer, error) {
	var mod unsafe.Pointer
	return mod, d.drv.err("cuModuleLoadData", cuModuleLoad(d.drv, &mod, ptx))
}

func (d *Device) function(mod unsafe.Pointer, name string) (unsafe.Pointer, error) {
	var f unsafe.Pointer
	return f, d.drv.err("cuModuleGetFunction "+name, cuFunction(d.drv, &f, mod, name))
}

// Gemm is the row-major C = alpha·op(A)·op(B) + beta·C on the device
// (engine/nn Gemm's convention: A is m×k, or k×m when transA; B is k×n,
// or n×k when transB), through cuBLAS's column-major sgemm on the
// transposed problem Cᵀ = op(B)ᵀ·op(A)ᵀ.
func (d *Device) Gemm(transA, transB bool, m, n, k int, alpha float32, a Buf, lda int, b Buf, ldb int, beta float32, c Buf, ldc int) error {
	if m == 0 || n == 0 {
		return nil
	}
	op := func(t bool) int {
		if t {
			return 1 // CUBLAS_OP_T
		}
		return 0
	}
	st := cublasSgemm(d.blas, op(transB), op(transA), n, m, k, alpha, b.Ptr, ldb, a.Ptr, lda, beta, c.Ptr, ldc)
	if st != 0 {
		return fmt.Errorf("cublasSgemm(m=%d n=%d k=%d): status %d", m, n, k, st)
	}
	return nil
}
