package nn

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"outcore/engine/nn/nntest"
)

// Benchmarks (docs/benchmarks/nn.md):
//
//	go test -run '^$' -bench 'Gemm|SAGEStep' -count=5 ./engine/nn

var gemmShapes = []struct {
	name    string
	ta, tb  bool
	m, n, k int
}{
	// layer-0 forward of a 100k-dst block: X(100k×128)·W(128×256)
	{"fwd_100kx128x256", false, false, 100000, 256, 128},
	// its weight gradient Xᵀ(128×100k)·dY(100k×256)
	{"dW_128x256x100k", true, false, 128, 256, 100000},
	// a hidden layer's input gradient dY(100k×256)·Wᵀ(256×256)
	{"dX_100kx256x256", false, true, 100000, 256, 256},
}

func BenchmarkGemm(b *testing.B) {
	for _, be := range []string{BackendOpenBLAS, BackendGonum} {
		for _, s := range gemmShapes {
			b.Run(be+"/"+s.name, func(b *testing.B) {
				if be == BackendOpenBLAS {
					if _, err := loadOpenBLAS(blasThreads()); err != nil {
						b.Skip(err)
					}
				}
				rng := rand.New(rand.NewPCG(1, 1))
				a := randTensor(rng, s.m, s.k)
				if s.ta {
					a = randTensor(rng, s.k, s.m)
				}
				bb := randTensor(rng, s.k, s.n)
				if s.tb {
					bb = randTensor(rng, s.n, s.k)
				}
				c := NewTensor(s.m, s.n)
				cpu0 := cpuTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := GemmWith(be, s.ta, s.tb, s.m, s.n, s.k, 1, a.Data, a.Cols, bb.Data, bb.Cols, 0, c.Data, s.n); err != nil {
						b.Fatal(err)
					}
				}
				flops := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				// per CPU-second of this process: robust to other processes' load
				b.ReportMetric(flops/(cpuTime()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
			})
		}
	}
}

// BenchmarkSAGEStep times one 3-layer GraphSAGE training step (forward,
// loss, backward, Adam) on a batch of 1000 seeds with fanout 10,10,10,
// 128-dim inputs, 256 hidden, 47 classes, sampled from random graphs of n
// nodes (n = 2.4M is ogbn-products' size, where nearly every sampled node
// is distinct).
func BenchmarkSAGEStep(b *testing.B) {
	for _, be := range []string{BackendOpenBLAS, BackendGonum} {
		for _, n := range []int{200_000, 2_400_000} {
			rng := rand.New(rand.NewPCG(2, 2))
			blocks := nntest.SampledBlocks(rng, n, 1000, []int{10, 10, 10}, false)
			b.Run(fmt.Sprintf("%s/n=%d/src=%d", be, n, blocks[0].NumSrc), func(b *testing.B) {
				defer useBackend(b, be)()
				x := randTensor(rng, blocks[0].NumSrc, 128)
				labels := make([]int32, 1000)
				for i := range labels {
					labels[i] = int32(rng.IntN(47))
				}
				m, err := NewModel(KindSAGE, 128, 256, 47, 3, 1, 0.5, 1)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < 2; i++ { // warm the arena (it coalesces after the first step)
					m.Step(blocks, x, labels)
				}
				var fwd, bwd time.Duration
				cpu0 := cpuTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					m.Step(blocks, x, labels)
					st := m.LastStepTimes()
					fwd += st.Forward
					bwd += st.Backward + st.Update
				}
				b.ReportMetric(float64(fwd.Milliseconds())/float64(b.N), "fwd_ms")
				b.ReportMetric(float64(bwd.Milliseconds())/float64(b.N), "bwd_ms")
				b.ReportMetric(float64(m.ArenaBytes())/(1<<20), "arena_MiB")
				b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N)*1000, "cpu_ms")
			})
		}
	}
}

// useBackend switches Gemm to the named backend for one benchmark and
// returns the function that restores the automatic choice.
func useBackend(b *testing.B, be string) func() {
	initGemm()
	saved := gemmImpl
	switch be {
	case BackendGonum:
		gemmImpl = gonumGemm
	case BackendOpenBLAS:
		if _, err := loadOpenBLAS(blasThreads()); err != nil {
			b.Skip(err)
		}
		gemmImpl = openblasGemm
	}
	return func() { gemmImpl = saved }
}

// BenchmarkModelStep times one training step (forward, loss, backward,
// Adam) of each model kind on the same sampled 3-layer batch (1000 seeds,
// fanout 10,10,10, 128-dim inputs, 256 hidden; GAT: 4 heads × 64).
func BenchmarkModelStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	blocks := nntest.SampledBlocks(rng, 200_000, 1000, []int{10, 10, 10}, false)
	x := randTensor(rng, blocks[0].NumSrc, 128)
	labels := make([]int32, 1000)
	for i := range labels {
		labels[i] = int32(rng.IntN(47))
	}
	for _, kind := range []string{KindSAGE, KindGCN, KindGAT} {
		b.Run(kind, func(b *testing.B) {
			m, err := NewModel(kind, 128, 256, 47, 3, 4, 0.5, 1)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				m.Step(blocks, x, labels)
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Step(blocks, x, labels)
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N)*1000, "cpu_ms")
		})
	}
}

// cpuTime is the user+system CPU time of this process (all threads,
// OpenBLAS's included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
