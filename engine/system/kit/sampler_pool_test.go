package kit

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/sample"
)

// ring is a random graph: node v's in-neighbours are deg random nodes.
func ring(n, deg int) sample.Topology {
	r := rand.New(rand.NewPCG(1, 2))
	indptr := make([]int64, n+1)
	var indices []int64
	for v := 0; v < n; v++ {
		for j := 0; j < deg; j++ {
			indices = append(indices, r.Int64N(int64(n)))
		}
		indptr[v+1] = int64(len(indices))
	}
	return sample.Topology{Indptr: indptr, Indices: sample.MemIndices(indices)}
}

// TestSamplerPoolBusyAndWait runs the pool against a slow consumer: the
// workers spend most of their life blocked on the full queue, so their
// busy (CPU) time is small and busy + wait covers the workers × the
// pool's wall time, less the tail in which workers have run out of
// batches, which the test bounds from the batches' arrival times, not
// from a guess of the time per batch.
func TestSamplerPoolBusyAndWait(t *testing.T) {
	topo := ring(5000, 10)
	s, err := sample.New(topo, []int{5, 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	const workers, queue, nb = 3, 1, 24
	const delay = 10 * time.Millisecond
	var batches [][]int64
	for b := 0; b < nb; b++ {
		var seeds []int64
		for i := 0; i < 50; i++ {
			seeds = append(seeds, int64(b*50+i))
		}
		batches = append(batches, seeds)
	}
	ep := metrics.NewEpochStats()
	t0 := time.Now()
	pool := StartSamplers(context.Background(), s, 0, batches, 0, workers, queue, 0, ep)
	started := time.Now() // every worker's life starts before this
	got := 0
	var received []time.Time
	for mb := range pool.Out {
		received = append(received, time.Now())
		if mb == nil || len(mb.InputNodes) < 50 {
			t.Fatalf("bad batch %v", mb)
		}
		got++
		time.Sleep(delay) // a slow trainer: the queue stays full
	}
	if err := pool.Stop(); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(t0).Seconds()
	if got != nb {
		t.Fatalf("%d batches, want %d", got, nb)
	}
	var r metrics.EpochRecord
	ep.Fill(&r)
	total := r.SampleBusyS + r.SampleWaitS
	// A worker's life ends only when it finds no batch left to take,
	// after the last batch was taken. Batches taken and not yet received
	// are held by a worker (one each) or in Out, so when the last was
	// taken the consumer had received at least nb - workers - queue: the
	// last take, and the end of every worker's life, came after that
	// batch arrived (one batch of margin). So each worker lived at least
	// from the pool's start to that batch's arrival, however long the
	// tail took on a loaded machine, and at most the pool's wall time.
	lo := workers * received[nb-workers-queue-2].Sub(started).Seconds()
	hi := workers * wall
	t.Logf("wall %.4f s: busy %.4f wait %.4f (sample_s %.4f), bounds [%.4f, %.4f]", wall, r.SampleBusyS, r.SampleWaitS, r.SampleS, lo, hi)
	if total < lo || total > hi+0.001 {
		t.Fatalf("busy %.4f + wait %.4f = %.4f, want within [%.4f, %.4f] (workers × pool wall %.4f s)", r.SampleBusyS, r.SampleWaitS, total, lo, hi, wall)
	}
	if r.SampleBusyS > r.SampleS+0.002 {
		t.Fatalf("busy %.4f exceeds the time spent sampling %.4f", r.SampleBusyS, r.SampleS)
	}
	if r.SampleWaitS < 0.5*total {
		t.Fatalf("wait %.4f of %.4f: workers blocked on a full queue should mostly wait", r.SampleWaitS, total)
	}
}

// TestInOrder: four workers finish batches in any order; next(i) hands
// out batch i, with the seeds of batches[i], for every i, and a batch past
// the last is an error once the pool has drained.
func TestInOrder(t *testing.T) {
	topo := ring(2000, 8)
	s, err := sample.New(topo, []int{4, 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var batches [][]int64
	for b := 0; b < 30; b++ {
		batches = append(batches, []int64{int64(b), int64(b + 100)})
	}
	ctx := context.Background()
	pool := StartSamplers(ctx, s, 0, batches, 0, 4, 8, 8, metrics.NewEpochStats())
	defer pool.Stop()
	next := pool.InOrder(ctx)
	for i := range batches {
		mb, err := next(i)
		if err != nil {
			t.Fatal(err)
		}
		if mb.Index != i || mb.InputNodes[0] != batches[i][0] || mb.InputNodes[1] != batches[i][1] {
			t.Fatalf("next(%d): batch %d with inputs %v", i, mb.Index, mb.InputNodes[:2])
		}
		pool.Release()
	}
	if _, err := next(len(batches)); err == nil {
		t.Fatal("a batch past the last was handed out")
	}
}
