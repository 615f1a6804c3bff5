//go:build cgo

package nn

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

typedef void (*oc_sgemm_fn)(int, int, int, int, int, int, float, const float*, int,
                            const float*, int, float, float*, int);
typedef void (*oc_setthreads_fn)(int);

static oc_sgemm_fn oc_sgemm_ptr;

// oc_load opens name and resolves cblas_sgemm; returns 0 on success.
static int oc_load(const char* name, int threads) {
	void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) return 1;
	oc_sgemm_fn f = (oc_sgemm_fn)dlsym(h, "cblas_sgemm");
	if (!f) { dlclose(h); return 2; }
	oc_setthreads_fn st = (oc_setthreads_fn)dlsym(h, "openblas_set_num_threads");
	if (st && threads > 0) st(threads);
	oc_sgemm_ptr = f;
	return 0;
}

static const char* oc_dlerror(void) { const char* e = dlerror(); return e ? e : "unknown"; }

// CBLAS enums: CblasRowMajor=101, CblasNoTrans=111, CblasTrans=112.
static void oc_sgemm(int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                     const float* b, int ldb, float beta, float* c, int ldc) {
	oc_sgemm_ptr(101, ta ? 112 : 111, tb ? 112 : 111, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// openblasNames are tried in order by loadOpenBLAS.
var openblasNames = []string{"libopenblas.so.0", "libopenblas.so"}

var (
	obOnce sync.Once
	obLib  string
	obErr  error
)

// loadOpenBLAS dlopens libopenblas once and limits it to threads threads.
func loadOpenBLAS(threads int) (string, error) {
	obOnce.Do(func() {
		var errs []error
		for _, name := range openblasNames {
			cs := C.CString(name)
			rc := C.oc_load(cs, C.int(threads))
			C.free(unsafe.Pointer(cs))
			if rc == 0 {
				obLib = name
				return
			}
			what := "dlopen"
			if rc == 2 {
				what = "dlsym cblas_sgemm"
			}
			errs = append(errs, fmt.Errorf("%s %s: %s", what, name, C.GoString(C.oc_dlerror())))
		}
		obErr = fmt.Errorf("openblas not available: %w", errors.Join(errs...))
	})
	return obLib, obErr
}

func openblasGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := C.int(0), C.int(0)
	if transA {
		ta = 1
	}
	if transB {
		tb = 1
	}
	C.oc_sgemm(ta, tb, C.int(m), C.int(n), C.int(k), C.float(alpha),
		(*C.float)(unsafe.Pointer(&a[0])), C.int(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.int(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.int(ldc))
}
