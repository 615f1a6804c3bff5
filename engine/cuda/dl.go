//go:build cgo

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// Our own minimal declarations of the CUDA driver API, NVRTC and cuBLAS
// entry points we call (no CUDA headers at build time). All handles are
// pointers, device pointers are 64-bit, every status is an int.
typedef int (*fn_i)(unsigned int);
typedef int (*fn_pi_i)(int*, int);
typedef int (*fn_ci_i_i)(char*, int, int);
typedef int (*fn_pi_i_i)(int*, int, int);
typedef int (*fn_pp_i)(void**, int);
typedef int (*fn_p)(void*);
typedef int (*fn_i_v)(int);
typedef int (*fn_v)(void);
typedef int (*fn_pu_z)(uint64_t*, size_t);
typedef int (*fn_u)(uint64_t);
typedef int (*fn_u_p_z)(uint64_t, const void*, size_t);
typedef int (*fn_p_u_z)(void*, uint64_t, size_t);
typedef int (*fn_u_c_z)(uint64_t, unsigned char, size_t);
typedef int (*fn_pp_p)(void**, const void*);
typedef int (*fn_pp_p_c)(void**, void*, const char*);
typedef int (*fn_launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void*, void**, void**);
typedef int (*fn_i_pcc)(int, const char**);
typedef int (*fn_pz_z)(size_t*, size_t*);
typedef const char* (*fn_nvrtc_err)(int);
// nvrtcCreateProgram(prog*, src, name, numHeaders, headers, includeNames)
typedef int (*fn_nvrtc_create)(void**, const char*, const char*, int, const char**, const char**);
typedef int (*fn_nvrtc_compile)(void*, int, const char**);
typedef int (*fn_nvrtc_size)(void*, size_t*);
typedef int (*fn_nvrtc_get)(void*, char*);
typedef int (*fn_nvrtc_destroy)(void**);
typedef int (*fn_nvrtc_version)(int*, int*);
typedef int (*fn_cublas_create)(void**);
typedef int (*fn_cublas_sgemm)(void*, int, int, int, int, int, const float*, const float*, int,
                               const float*, int, const float*, float*, int);

// The context every call below makes current on its own thread first: Go
// moves goroutines between threads, and a CUDA context is per thread.
static void* g_ctx;
static void* g_ctxset;
static void oc_set_ctx(void* set, void* ctx) { g_ctxset = set; g_ctx = ctx; }
#define CTX if (g_ctx) ((fn_p)g_ctxset)(g_ctx)

static void* oc_open(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static void* oc_sym(void* h, const char* name) { return dlsym(h, name); }
static const char* oc_dlerr(void) { const char* e = dlerror(); return e ? e : "unknown"; }

static int c_cuInit(void* f, unsigned flags) { return ((fn_i)f)(flags); }
static int c_cuDeviceGetCount(void* f, int* n) { return ((int(*)(int*))f)(n); }
static int c_cuDeviceGet(void* f, int* d, int ord) { return ((fn_pi_i)f)(d, ord); }
static int c_cuDeviceGetName(void* f, char* s, int n, int d) { return ((fn_ci_i_i)f)(s, n, d); }
static int c_cuDeviceGetAttribute(void* f, int* v, int attr, int d) { return ((fn_pi_i_i)f)(v, attr, d); }
static int c_cuDevicePrimaryCtxRetain(void* f, void** ctx, int d) { return ((fn_pp_i)f)(ctx, d); }
static int c_cuCtxSetCurrent(void* f, void* ctx) { return ((fn_p)f)(ctx); }
static int c_cuCtxSynchronize(void* f) { CTX; return ((fn_v)f)(); }
static int c_cuMemAlloc(void* f, uint64_t* p, size_t n) { CTX; return ((fn_pu_z)f)(p, n); }
static int c_cuMemFree(void* f, uint64_t p) { CTX; return ((fn_u)f)(p); }
static int c_cuMemcpyHtoD(void* f, uint64_t d, const void* h, size_t n) { CTX; return ((fn_u_p_z)f)(d, h, n); }
static int c_cuMemcpyDtoH(void* f, void* h, uint64_t d, size_t n) { CTX; return ((fn_p_u_z)f)(h, d, n); }
static int c_cuMemsetD8(void* f, uint64_t d, unsigned char v, size_t n) { CTX; return ((fn_u_c_z)f)(d, v, n); }
static int c_cuModuleLoadData(void* f, void** m, const void* img) { CTX; return ((fn_pp_p)f)(m, img); }
static int c_cuModuleGetFunction(void* f, void** fn, void* m, const char* name) { CTX; return ((fn_pp_p_c)f)(fn, m, name); }
static int c_cuMemGetInfo(void* f, size_t* fr, size_t* tot) { CTX; return ((fn_pz_z)f)(fr, tot); }
static int c_cuGetErrorString(void* f, int e, const char** s) { return ((fn_i_pcc)f)(e, s); }
static int c_cuDriverGetVersion(void* f, int* v) { return ((int(*)(int*))f)(v); }
// pinned host memory, streams and asynchronous copies (staging.go)
static int c_cuMemHostAlloc(void* f, void** p, size_t n, unsigned flags) { CTX; return ((int(*)(void**, size_t, unsigned))f)(p, n, flags); }
static int c_cuMemFreeHost(void* f, void* p) { CTX; return ((fn_p)f)(p); }
static int c_cuStreamCreate(void* f, void** s, unsigned flags) { CTX; return ((int(*)(void**, unsigned))f)(s, flags); }
static int c_cuStreamSynchronize(void* f, void* s) { CTX; return ((fn_p)f)(s); }
static int c_cuMemcpyHtoDAsync(void* f, uint64_t d, const void* h, size_t n, void* s) {
	CTX;
	return ((int(*)(uint64_t, const void*, size_t, void*))f)(d, h, n, s);
}

// c_launch builds the kernel parameter array from 8-byte slots: parameter
// i points at args[i] (a kernel's 4-byte int or float parameters read the
// slot's first 4 bytes: the host is little-endian).
static int c_launch(void* f, void* fn, unsigned gx, unsigned gy, unsigned bx, unsigned shmem,
                    int nargs, uint64_t* args) {
	void* params[32];
	if (nargs > 32) return -1;
	for (int i = 0; i < nargs; i++) params[i] = &args[i];
	CTX;
	return ((fn_launch)f)(fn, gx, gy, 1, bx, 1, 1, shmem, NULL, params, NULL);
}

static const char* c_nvrtcGetErrorString(void* f, int e) { return ((fn_nvrtc_err)f)(e); }
static int c_nvrtcVersion(void* f, int* a, int* b) { return ((fn_nvrtc_version)f)(a, b); }
static int c_nvrtcCreateProgram(void* f, void** p, const char* src, const char* name) {
	return ((fn_nvrtc_create)f)(p, src, name, 0, NULL, NULL);
}
static int c_nvrtcCompileProgram(void* f, void* p, int n, const char** opts) { return ((fn_nvrtc_compile)f)(p, n, opts); }
static int c_nvrtcSize(void* f, void* p, size_t* n) { return ((fn_nvrtc_size)f)(p, n); }
static int c_nvrtcGet(void* f, void* p, char* out) { return ((fn_nvrtc_get)f)(p, out); }
static int c_nvrtcDestroyProgram(void* f, void** p) { return ((fn_nvrtc_destroy)f)(p); }

static int c_cublasCreate(void* f, void** h) { CTX; return ((fn_cublas_create)f)(h); }
static int c_cublasSgemm(void* f, void* h, int ta, int tb, int m, int n, int k, float alpha,
                         uint64_t a, int lda, uint64_t b, int ldb, float beta, uint64_t c, int ldc) {
	CTX;
	return ((fn_cublas_sgemm)f)(h, ta, tb, m, n, k, &alpha, (const float*)a, lda, (const float*)b, ldb,
	                            &beta, (float*)c, ldc);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// lib is one dlopen'ed library and the symbols resolved from it.
type lib struct {
	name string
	h    unsafe.Pointer
}

// openFirst dlopens the first of names that loads.
func openFirst(what string, names []string) (*lib, error) {
	var errs []string
	for _, n := range names {
		cs := C.CString(n)
		h := C.oc_open(cs)
		C.free(unsafe.Pointer(cs))
		if h != nil {
			return &lib{name: n, h: h}, nil
		}
		errs = append(errs, C.GoString(C.oc_dlerr()))
	}
	return nil, fmt.Errorf("%s not found (tried %s): %s", what, strings.Join(names, ", "), strings.Join(errs, "; "))
}

// sym resolves name, or records it as missing in *missing.
func (l *lib) sym(name string, missing *[]string) unsafe.Pointer {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	p := C.oc_sym(l.h, cs)
	if p == nil {
		*missing = append(*missing, name)
	}
	return p
}

// The library names tried, newest first (CUDA 13, 12 and 11; the unversioned
// development links last).
var (
	driverNames = []string{"libcuda.so.1", "libcuda.so"}
	nvrtcNames  = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}
	cublasNames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}
)

// nvrtcAPI holds NVRTC's entry points.
type nvrtcAPI struct {
	lib                                                     *lib
	errStr, version, create, compile, ptxSize, ptx, logSize unsafe.Pointer
	log, destroy                                            unsafe.Pointer
}

func loadNVRTC() (*nvrtcAPI, error) {
	l, err := openFirst("NVRTC", nvrtcNames)
	if err != nil {
		return nil, err
	}
	var miss []string
	a := &nvrtcAPI{lib: l,
		errStr: l.sym("nvrtcGetErrorString", &miss), version: l.sym("nvrtcVersion", &miss),
		create: l.sym("nvrtcCreateProgram", &miss), compile: l.sym("nvrtcCompileProgram", &miss),
		ptxSize: l.sym("nvrtcGetPTXSize", &miss), ptx: l.sym("nvrtcGetPTX", &miss),
		logSize: l.sym("nvrtcGetProgramLogSize", &miss), log: l.sym("nvrtcGetProgramLog", &miss),
		destroy: l.sym("nvrtcDestroyProgram", &miss)}
	if len(miss) > 0 {
		return nil, fmt.Errorf("%s lacks %s", l.name, strings.Join(miss, ", "))
	}
	return a, nil
}

func (a *nvrtcAPI) err(what string, st C.int) error {
	if st == 0 {
		return nil
	}
	return fmt.Errorf("%s: NVRTC error %d (%s)", what, int(st), C.GoString(C.c_nvrtcGetErrorString(a.errStr, st)))
}

// Version is NVRTC's major and minor version.
func (a *nvrtcAPI) Version() (int, int) {
	var maj, min C.int
	C.c_nvrtcVersion(a.version, &maj, &min)
	return int(maj), int(min)
}

// compilePTX compiles CUDA C source to PTX with the given options. On a
// compile error the error carries NVRTC's log.
func (a *nvrtcAPI) compilePTX(src, name string, opts []string) (ptx []byte, log string, err error) {
	csrc, cname := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	var prog unsafe.Pointer
	if err := a.err("nvrtcCreateProgram", C.c_nvrtcCreateProgram(a.create, &prog, csrc, cname)); err != nil {
		return nil, "", err
	}
	defer C.c_nvrtcDestroyProgram(a.destroy, &prog)
	copts := C.malloc(C.size_t(len(opts)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(copts)
	optv := unsafe.Slice((**C.char)(copts), len(opts)+1)
	for i, o := range opts {
		optv[i] = C.CString(o)
		defer C.free(unsafe.Pointer(optv[i]))
	}
	st := C.c_nvrtcCompileProgram(a.compile, prog, C.int(len(opts)), (**C.char)(copts))
	var n C.size_t
	if C.c_nvrtcSize(a.logSize, prog, &n) == 0 && n > 1 {
		buf := make([]byte, int(n))
		C.c_nvrtcGet(a.log, prog, (*C.char)(unsafe.Pointer(&buf[0])))
		log = strings.TrimRight(string(buf), "\x00\n")
	}
	if err := a.err("nvrtcCompileProgram", st); err != nil {
		return nil, log, fmt.Errorf("%w\n%s", err, log)
	}
	if err := a.err("nvrtcGetPTXSize", C.c_nvrtcSize(a.ptxSize, prog, &n)); err != nil {
		return nil, log, err
	}
	ptx = make([]byte, int(n))
	if err := a.err("nvrtcGetPTX", C.c_nvrtcGet(a.ptx, prog, (*C.char)(unsafe.Pointer(&ptx[0])))); err != nil {
		return nil, log, err
	}
	return ptx, log, nil
}

// driverAPI holds the CUDA driver API's entry points (the _v2 names where
// the ABI has them).
type driverAPI struct {
	lib                                                       *lib
	init, count, get, name, attr, ctxRetain, ctxSet, sync     unsafe.Pointer
	alloc, free, htod, dtoh, memset, modLoad, modFunc, launch unsafe.Pointer
	memInfo, errStr, version                                  unsafe.Pointer
	hostAlloc, hostFree, streamCreate, streamSync, htodAsync  unsafe.Pointer
}

func loadDriver() (*driverAPI, error) {
	l, err := openFirst("the CUDA driver (libcuda)", driverNames)
	if err != nil {
		return nil, err
	}
	var miss []string
	a := &driverAPI{lib: l,
		init: l.sym("cuInit", &miss), count: l.sym("cuDeviceGetCount", &miss), get: l.sym("cuDeviceGet", &miss),
		name: l.sym("cuDeviceGetName", &miss), attr: l.sym("cuDeviceGetAttribute", &miss),
		ctxRetain: l.sym("cuDevicePrimaryCtxRetain", &miss), ctxSet: l.sym("cuCtxSetCurrent", &miss),
		sync: l.sym("cuCtxSynchronize", &miss), alloc: l.sym("cuMemAlloc_v2", &miss), free: l.sym("cuMemFree_v2", &miss),
		htod: l.sym("cuMemcpyHtoD_v2", &miss), dtoh: l.sym("cuMemcpyDtoH_v2", &miss), memset: l.sym("cuMemsetD8_v2", &miss),
		modLoad: l.sym("cuModuleLoadData", &miss), modFunc: l.sym("cuModuleGetFunction", &miss),
		launch: l.sym("cuLaunchKernel", &miss), memInfo: l.sym("cuMemGetInfo_v2", &miss),
		errStr: l.sym("cuGetErrorString", &miss), version: l.sym("cuDriverGetVersion", &miss),
		hostAlloc: l.sym("cuMemHostAlloc", &miss), hostFree: l.sym("cuMemFreeHost", &miss),
		streamCreate: l.sym("cuStreamCreate", &miss), streamSync: l.sym("cuStreamSynchronize", &miss),
		htodAsync: l.sym("cuMemcpyHtoDAsync_v2", &miss)}
	if len(miss) > 0 {
		return nil, fmt.Errorf("%s lacks %s", l.name, strings.Join(miss, ", "))
	}
	return a, nil
}

func (a *driverAPI) err(what string, st int) error {
	if st == 0 {
		return nil
	}
	var s *C.char
	msg := "unknown"
	if C.c_cuGetErrorString(a.errStr, C.int(st), &s) == 0 && s != nil {
		msg = C.GoString(s)
	}
	return fmt.Errorf("%s: CUDA error %d (%s)", what, int(st), msg)
}

// cublasAPI holds cuBLAS's entry points.
type cublasAPI struct {
	lib           *lib
	create, sgemm unsafe.Pointer
	h             unsafe.Pointer
}

func loadCublas() (*cublasAPI, error) {
	l, err := openFirst("cuBLAS", cublasNames)
	if err != nil {
		return nil, err
	}
	var miss []string
	a := &cublasAPI{lib: l, create: l.sym("cublasCreate_v2", &miss), sgemm: l.sym("cublasSgemm_v2", &miss)}
	if len(miss) > 0 {
		return nil, fmt.Errorf("%s lacks %s", l.name, strings.Join(miss, ", "))
	}
	var h unsafe.Pointer // local: cgo refuses &a.h (a holds Go pointers)
	if st := C.c_cublasCreate(a.create, &h); st != 0 {
		return nil, fmt.Errorf("cublasCreate: status %d", int(st))
	}
	a.h = h
	return a, nil
}

var errArgs = errors.New("cuda: more than 32 kernel arguments")

// Go wrappers of the trampolines above; each returns the CUDA status.

func cuInit(a *driverAPI) int { return int(C.c_cuInit(a.init, 0)) }

func cuCount(a *driverAPI, n *int) int {
	var v C.int
	st := C.c_cuDeviceGetCount(a.count, &v)
	*n = int(v)
	return int(st)
}

func cuGet(a *driverAPI, dev *int, ord int) int {
	var v C.int
	st := C.c_cuDeviceGet(a.get, &v, C.int(ord))
	*dev = int(v)
	return int(st)
}

func cuName(a *driverAPI, buf []byte, dev int) int {
	return int(C.c_cuDeviceGetName(a.name, (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)), C.int(dev)))
}

func cuAttr(a *driverAPI, v *int, attr, dev int) int {
	var x C.int
	st := C.c_cuDeviceGetAttribute(a.attr, &x, C.int(attr), C.int(dev))
	*v = int(x)
	return int(st)
}

func cuVersion(a *driverAPI, v *int) int {
	var x C.int
	st := C.c_cuDriverGetVersion(a.version, &x)
	*v = int(x)
	return int(st)
}

func cuRetain(a *driverAPI, ctx *unsafe.Pointer, dev int) int {
	// a local out-parameter: cgo refuses a pointer into a struct holding Go pointers
	var c unsafe.Pointer
	st := C.c_cuDevicePrimaryCtxRetain(a.ctxRetain, &c, C.int(dev))
	*ctx = c
	return int(st)
}

// setCtx makes ctx the context every later call sets current first.
func setCtx(a *driverAPI, ctx unsafe.Pointer) { C.oc_set_ctx(a.ctxSet, ctx) }

func cuMemInfo(a *driverAPI, free, total *int64) int {
	var f, t C.size_t
	st := C.c_cuMemGetInfo(a.memInfo, &f, &t)
	*free, *total = int64(f), int64(t)
	return int(st)
}

func cuAlloc(a *driverAPI, p *uint64, n int64) int {
	var v C.uint64_t
	st := C.c_cuMemAlloc(a.alloc, &v, C.size_t(n))
	*p = uint64(v)
	return int(st)
}

func cuFree(a *driverAPI, p uint64) int { return int(C.c_cuMemFree(a.free, C.uint64_t(p))) }

func cuMemset(a *driverAPI, p uint64, n int64) int {
	return int(C.c_cuMemsetD8(a.memset, C.uint64_t(p), 0, C.size_t(n)))
}

func cuHtoD(a *driverAPI, d uint64, h unsafe.Pointer, n int64) int {
	return int(C.c_cuMemcpyHtoD(a.htod, C.uint64_t(d), h, C.size_t(n)))
}

func cuDtoH(a *driverAPI, h unsafe.Pointer, d uint64, n int64) int {
	return int(C.c_cuMemcpyDtoH(a.dtoh, h, C.uint64_t(d), C.size_t(n)))
}

// cuHostAlloc allocates n bytes of page-locked host memory (flags 0: the
// context's own, not portable or mapped).
func cuHostAlloc(a *driverAPI, p *unsafe.Pointer, n int64) int {
	var v unsafe.Pointer
	st := C.c_cuMemHostAlloc(a.hostAlloc, &v, C.size_t(n), 0)
	*p = v
	return int(st)
}

func cuHostFree(a *driverAPI, p unsafe.Pointer) int { return int(C.c_cuMemFreeHost(a.hostFree, p)) }

// cuStream creates a stream with CU_STREAM_DEFAULT (0): it synchronises
// with the legacy default stream the kernels run on.
func cuStream(a *driverAPI, s *unsafe.Pointer) int {
	var v unsafe.Pointer
	st := C.c_cuStreamCreate(a.streamCreate, &v, 0)
	*s = v
	return int(st)
}

func cuStreamSync(a *driverAPI, s unsafe.Pointer) int {
	return int(C.c_cuStreamSynchronize(a.streamSync, s))
}

// cuHtoDAsync queues a copy from pinned host memory h on stream s.
func cuHtoDAsync(a *driverAPI, d uint64, h unsafe.Pointer, n int64, s unsafe.Pointer) int {
	return int(C.c_cuMemcpyHtoDAsync(a.htodAsync, C.uint64_t(d), h, C.size_t(n), s))
}

func cuSync(a *driverAPI) int { return int(C.c_cuCtxSynchronize(a.sync)) }

func cuModuleLoad(a *driverAPI, mod *unsafe.Pointer, image []byte) int {
	// the image must be NUL-terminated PTX; copy it to C memory for the call
	cimg := C.CBytes(append(image[:len(image):len(image)], 0))
	defer C.free(cimg)
	var m unsafe.Pointer
	st := C.c_cuModuleLoadData(a.modLoad, &m, cimg)
	*mod = m
	return int(st)
}

func cuFunction(a *driverAPI, fn *unsafe.Pointer, mod unsafe.Pointer, name string) int {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f unsafe.Pointer
	st := C.c_cuModuleGetFunction(a.modFunc, &f, mod, cs)
	*fn = f
	return int(st)
}

func cuLaunch(a *driverAPI, fn unsafe.Pointer, gx, gy, bx uint32, args []uint64) int {
	var p *C.uint64_t
	if len(args) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	return int(C.c_launch(a.launch, fn, C.unsigned(gx), C.unsigned(gy), C.unsigned(bx), 0, C.int(len(args)), p))
}

func cublasSgemm(b *cublasAPI, ta, tb, m, n, k int, alpha float32, a uint64, lda int, bb uint64, ldb int, beta float32, c uint64, ldc int) int {
	return int(C.c_cublasSgemm(b.sgemm, b.h, C.int(ta), C.int(tb), C.int(m), C.int(n), C.int(k), C.float(alpha),
		C.uint64_t(a), C.int(lda), C.uint64_t(bb), C.int(ldb), C.float(beta), C.uint64_t(c), C.int(ldc)))
}
