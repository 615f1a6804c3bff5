package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestParallelMatchesSerial runs a forward+backward on blocks big enough for
// every parallel loop to split, once with GOMAXPROCS=1 and once with 4, and
// checks logits and gradients agree (sums are re-associated, so to rounding).
// Under -race this exercises the concurrent kernels.
func TestParallelMatchesSerial(t *testing.T) {
	for _, kind := range []string{KindSAGE, KindGCN, KindGAT} {
		t.Run(kind, func(t *testing.T) {
			run := func(procs int) ([]float32, [][]float32) {
				old := runtime.GOMAXPROCS(procs)
				defer runtime.GOMAXPROCS(old)
				rng := rand.New(rand.NewPCG(6, 6))
				blocks := chainBlocks(rng, []int{3000, 1200, 300}, 10, kind == KindGCN)
				x := randTensor(rng, 3000, 32)
				m, err := NewModel(kind, 32, 64, 5, 2, 4, 0.3, 9)
				if err != nil {
					t.Fatal(err)
				}
				logits := m.Forward(blocks, x, true)
				out := append([]float32{}, logits.Data...)
				d := NewTensor(logits.Rows, logits.Cols)
				labels := make([]int32, logits.Rows)
				for i := range labels {
					labels[i] = int32(i % 5)
				}
				SoftmaxCrossEntropy(logits, labels, d)
				m.Backward(d)
				var gs [][]float32
				for _, p := range m.Params() {
					gs = append(gs, append([]float32{}, p.Grad.Data...))
				}
				return out, gs
			}
			o1, g1 := run(1)
			o4, g4 := run(4)
			cmp := func(what string, a, b []float32) {
				for i := range a {
					if math.Abs(float64(a[i]-b[i])) > 1e-4*math.Max(1, math.Abs(float64(a[i]))) {
						t.Fatalf("%s[%d]: serial %v parallel %v", what, i, a[i], b[i])
					}
				}
			}
			cmp("logits", o1, o4)
			for k := range g1 {
				cmp(fmt.Sprintf("grad %d", k), g1[k], g4[k])
			}
		})
	}
}

// TestParallelSumIsDeterministic: the partial sums are added in range
// order, so the result is bit for bit the same however the goroutines
// are scheduled (variants that train the reference's batches must
// reproduce its losses exactly).
func TestParallelSumIsDeterministic(t *testing.T) {
	old := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(old)
	rng := rand.New(rand.NewPCG(3, 3))
	x := randTensor(rng, 20000, 48)
	want := make([]float32, 48)
	accumColSum(x, want)
	for i := 0; i < 200; i++ {
		got := make([]float32, 48)
		if i%2 == 1 {
			// busy goroutines perturb the order in which pieces finish
			stop := make(chan struct{})
			for g := 0; g < 3; g++ {
				go func() {
					for {
						select {
						case <-stop:
							return
						default:
							runtime.Gosched()
						}
					}
				}()
			}
			accumColSum(x, got)
			close(stop)
		} else {
			accumColSum(x, got)
		}
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("run %d: column %d sums to %v, first run %v", i, j, got[j], want[j])
			}
		}
	}
}
