package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"outcore/engine/graph"
)

// naiveGemm is the float64 reference for Gemm.
func naiveGemm(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) []float64 {
	out := make([]float64, len(c))
	for i := range c {
		out[i] = float64(c[i])
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				var av, bv float32
				if ta {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tb {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			out[i*ldc+j] = float64(alpha)*s + float64(beta)*float64(c[i*ldc+j])
		}
	}
	return out
}

func backends(t *testing.T) []string {
	bs := []string{BackendGonum}
	if _, err := loadOpenBLAS(blasThreads()); err == nil {
		bs = append(bs, BackendOpenBLAS)
	} else {
		t.Logf("openblas unavailable, checking gonum only: %v", err)
	}
	return bs
}

func TestGemmBackendsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 1, 33}, {64, 65, 63}, {129, 7, 300}, {5, 130, 1}, {257, 31, 129}}
	for _, sh := range shapes {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-2, 0.25}} {
					m, n, k := sh[0], sh[1], sh[2]
					pad := rng.IntN(3) // row strides larger than the width
					ar, ac := m, k
					if ta {
						ar, ac = k, m
					}
					br, bc := k, n
					if tb {
						br, bc = n, k
					}
					lda, ldb, ldc := ac+pad, bc+pad, n+pad
					a := randTensor(rng, ar, lda).Data
					b := randTensor(rng, br, ldb).Data
					c0 := randTensor(rng, m, ldc).Data
					want := naiveGemm(ta, tb, m, n, k, ab[0], a, lda, b, ldb, ab[1], c0, ldc)
					for _, be := range backends(t) {
						c := append([]float32{}, c0...)
						if err := GemmWith(be, ta, tb, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc); err != nil {
							t.Fatal(err)
						}
						for i := 0; i < m; i++ {
							for j := 0; j < ldc; j++ {
								got, w := float64(c[i*ldc+j]), want[i*ldc+j]
								if j >= n {
									w = float64(c0[i*ldc+j]) // padding untouched
								}
								if math.Abs(got-w) > 1e-4*math.Sqrt(float64(k))*math.Max(1, math.Abs(w)) {
									t.Fatalf("%s %v ta=%v tb=%v α,β=%v: C[%d,%d]=%v want %v", be, sh, ta, tb, ab, i, j, got, w)
								}
							}
						}
					}
				}
			}
		}
	}
}

func TestGemmChecksShapes(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "A is 4×3") {
			t.Fatalf("short A: recovered %v", r)
		}
	}()
	Gemm(false, false, 4, 2, 3, 1, make([]float32, 11), 3, make([]float32, 6), 2, 0, make([]float32, 8), 2)
}

func TestGemmWithUnknownBackend(t *testing.T) {
	if err := GemmWith("mkl", false, false, 1, 1, 1, 1, []float32{1}, 1, []float32{1}, 1, 0, []float32{0}, 1); err == nil {
		t.Fatal("unknown backend accepted")
	}
}

// TestGemmEnvOverride runs this test binary again with OUTCORE_GEMM=gonum and
// checks that the automatic choice honours it.
func TestGemmEnvOverride(t *testing.T) {
	if os.Getenv("NN_CHILD") == "1" {
		fmt.Printf("backend=%s\n", GemmBackend())
		return
	}
	t.Logf("automatic backend: %s (%s)", GemmBackend(), GemmBackendReason())
	cmd := exec.Command(os.Args[0], "-test.run=^TestGemmEnvOverride$", "-test.v")
	cmd.Env = append(os.Environ(), "NN_CHILD=1", GemmEnv+"=gonum")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "backend=gonum") {
		t.Fatalf("OUTCORE_GEMM=gonum not honoured:\n%s", out)
	}
}

// TestModelSameOnBothBackends trains a few steps with each GEMM backend and
// checks the weights agree to float32 rounding.
func TestModelSameOnBothBackends(t *testing.T) {
	if _, err := loadOpenBLAS(blasThreads()); err != nil {
		t.Skipf("openblas unavailable: %v", err)
	}
	initGemm()
	saved, savedName := gemmImpl, gemmBackend
	defer func() { gemmImpl, gemmBackend = saved, savedName }()
	rng := rand.New(rand.NewPCG(1, 2))
	b, x, y := toyProblem(rng, 200, 4, 32)
	var ws [][]float32
	for _, impl := range []func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int){gonumGemm, openblasGemm} {
		gemmImpl = impl
		m, _ := NewModel(KindSAGE, 32, 64, 4, 2, 1, 0.5, 3)
		for i := 0; i < 5; i++ {
			m.Step([]graph.Block{b, b}, x, y)
		}
		ws = append(ws, append([]float32{}, m.Params()[0].Value.Data...))
	}
	for i := range ws[0] {
		if math.Abs(float64(ws[0][i]-ws[1][i])) > 1e-4 {
			t.Fatalf("weight %d: gonum %v openblas %v", i, ws[0][i], ws[1][i])
		}
	}
}
