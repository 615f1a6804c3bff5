package nn

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// GemmEnv names the environment variable that forces a GEMM backend:
// OUTCORE_GEMM=gonum skips OpenBLAS even when it is installed.
const GemmEnv = "OUTCORE_GEMM"

// Backend names returned by GemmBackend.
const (
	BackendOpenBLAS = "openblas"
	BackendGonum    = "gonum"
)

var (
	gemmOnce    sync.Once
	gemmBackend string
	gemmWhy     string
	gemmImpl    func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
)

func initGemm() {
	gemmOnce.Do(func() {
		gemmBackend, gemmImpl = BackendGonum, gonumGemm
		if v := os.Getenv(GemmEnv); v == BackendGonum {
			gemmWhy = GemmEnv + "=gonum"
			return
		}
		quietOpenBLASThreads()
		lib, err := loadOpenBLAS(blasThreads())
		if err != nil {
			gemmWhy = err.Error()
			return
		}
		gemmBackend, gemmImpl = BackendOpenBLAS, openblasGemm
		gemmWhy = "loaded " + lib
	})
}

// quietOpenBLASThreads sets OPENBLAS_THREAD_TIMEOUT=4 (unless the user set
// it) before the library is loaded. By default OpenBLAS's worker threads
// keep polling with sched_yield for 2^28 cycles (~0.1 s) after every call,
// taking a core from the Go loops (aggregation, dropout) that run between
// GEMMs: on full-batch Cora that cost ~40% of the wall time and most of the
// system time. With 2^4 cycles they sleep at once and are woken per call,
// which costs microseconds against GEMMs of milliseconds.
func quietOpenBLASThreads() {
	if _, set := os.LookupEnv("OPENBLAS_THREAD_TIMEOUT"); !set {
		os.Setenv("OPENBLAS_THREAD_TIMEOUT", "4")
	}
}

// blasThreads is the OpenBLAS thread count: GOMAXPROCS (which follows the
// CPU affinity and cgroup quota), or 0 = leave OpenBLAS's own choice when
// OPENBLAS_NUM_THREADS is set.
func blasThreads() int {
	if os.Getenv("OPENBLAS_NUM_THREADS") != "" {
		return 0
	}
	return runtime.GOMAXPROCS(0)
}

// GemmBackend reports which implementation Gemm uses: "openblas" (cblas_sgemm
// from libopenblas, found with dlopen at first use) or "gonum" (pure Go).
func GemmBackend() string { initGemm(); return gemmBackend }

// GemmBackendReason says why GemmBackend chose what it did (the library
// loaded, the dlopen error, or the environment override).
func GemmBackendReason() string { initGemm(); return gemmWhy }

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, where
// op(X) is X or Xᵀ as transA/transB say, op(A) is m×k, op(B) is k×n and C is
// m×n. lda, ldb, ldc are the row strides. It is the only matrix multiply in
// the engine; the backend is chosen once at run time (see GemmBackend).
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	initGemm()
	if m == 0 || n == 0 {
		return
	}
	checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if k == 0 || alpha == 0 {
		scaleRows(m, n, beta, c, ldc)
		return
	}
	gemmImpl(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmWith runs Gemm on a named backend ("openblas" or "gonum") regardless of
// the automatic choice; tests and benchmarks use it to compare the two.
// It returns an error when the backend is unavailable.
func GemmWith(backend string, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	var impl func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int)
	switch backend {
	case BackendGonum:
		impl = gonumGemm
	case BackendOpenBLAS:
		quietOpenBLASThreads()
		if _, err := loadOpenBLAS(blasThreads()); err != nil {
			return fmt.Errorf("gemm backend %s: %w", backend, err)
		}
		impl = openblasGemm
	default:
		return fmt.Errorf("gemm backend %q: unknown (want %s or %s)", backend, BackendOpenBLAS, BackendGonum)
	}
	if m == 0 || n == 0 {
		return nil
	}
	checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if k == 0 || alpha == 0 {
		scaleRows(m, n, beta, c, ldc)
		return nil
	}
	impl(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return nil
}

// MatMul returns (or writes into out, when non-nil) op(A)·op(B).
func MatMul(transA, transB bool, a, b, out *Tensor) *Tensor {
	m, k := a.Rows, a.Cols
	if transA {
		m, k = k, m
	}
	kb, n := b.Rows, b.Cols
	if transB {
		kb, n = n, kb
	}
	if k != kb {
		panic(fmt.Sprintf("nn.MatMul: inner dimensions differ: %v%s · %v%s", a, tr(transA), b, tr(transB)))
	}
	if out == nil {
		out = NewTensor(m, n)
	} else if out.Rows != m || out.Cols != n {
		panic(fmt.Sprintf("nn.MatMul: out is %v, want %d×%d", out, m, n))
	}
	Gemm(transA, transB, m, n, k, 1, a.Data, a.Cols, b.Data, b.Cols, 0, out.Data, out.Cols)
	return out
}

func tr(t bool) string {
	if t {
		return "ᵀ"
	}
	return ""
}

func checkGemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	bad := func(what string, rows, cols, ld, have int) {
		panic(fmt.Sprintf("nn.Gemm: %s is %d×%d with stride %d but has only %d elements", what, rows, cols, ld, have))
	}
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("nn.Gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	if ld := lda; ar > 0 && ac > 0 && (ld < ac || len(a) < (ar-1)*ld+ac) {
		bad("A", ar, ac, ld, len(a))
	}
	if ld := ldb; br > 0 && bc > 0 && (ld < bc || len(b) < (br-1)*ld+bc) {
		bad("B", br, bc, ld, len(b))
	}
	if ldc < n || len(c) < (m-1)*ldc+n {
		bad("C", m, n, ldc, len(c))
	}
}

func scaleRows(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

func gonumGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if transA {
		ta = blas.Trans
	}
	if transB {
		tb = blas.Trans
	}
	gonum.Implementation{}.Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
