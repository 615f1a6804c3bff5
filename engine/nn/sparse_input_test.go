package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestSparsifyAndKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	cases := []struct {
		name       string
		zeroFrac   float64
		wantSparse bool
	}{{"dense", 0, false}, {"half", 0.5, false}, {"sparse", 0.98, true}}
	for _, cols := range []int{64, 65} { // odd: rows start misaligned for 8-byte words
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/cols%d", c.name, cols), func(t *testing.T) {
				x := randTensor(rng, 300, cols)
				for i := range x.Data {
					if rng.Float64() < c.zeroFrac {
						x.Data[i] = 0
					}
				}
				var ar Arena
				xs := sparsify(&ar, x)
				if (xs != nil) != c.wantSparse {
					t.Fatalf("sparsify: got sparse=%v, want %v", xs != nil, c.wantSparse)
				}
				w := randTensor(rng, cols, 24)
				g := randTensor(rng, 300, 24)
				for _, rows := range []int{300, 117} {
					want := NewTensor(rows, 24)
					Gemm(false, false, rows, 24, cols, 1, x.Data, cols, w.Data, 24, 0, want.Data, 24)
					got := NewTensor(rows, 24)
					inputTimesW(xs, x, rows, w.Data, 24, got.Data, false)
					wantG := NewTensor(cols, 24)
					Gemm(true, false, cols, 24, rows, 1, x.Data, cols, g.Data, 24, 0, wantG.Data, 24)
					gotG := NewTensor(cols, 24)
					inputTGradAdd(xs, x, rows, g.Data, 24, gotG.Data)
					for i := range want.Data {
						if math.Abs(float64(want.Data[i]-got.Data[i])) > 1e-4 {
							t.Fatalf("rows=%d x·W[%d]: %v want %v", rows, i, got.Data[i], want.Data[i])
						}
					}
					for i := range wantG.Data {
						if math.Abs(float64(wantG.Data[i]-gotG.Data[i])) > 1e-3 {
							t.Fatalf("rows=%d xᵀ·g[%d]: %v want %v", rows, i, gotG.Data[i], wantG.Data[i])
						}
					}
				}
			})
		}
	}
}
