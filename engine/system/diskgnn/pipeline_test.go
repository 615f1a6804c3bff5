package diskgnn

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type tp struct{ i, v int }
type tx struct{ i, v int }
type tg struct{ i int }

// testStages builds stages whose values let the trainer check that the
// partial, the complete input and the graph it gets belong to its batch.
func testStages(t *testing.T, trained *[]int) stages[tp, tx, tg] {
	return stages[tp, tx, tg]{
		LoadFeatures: func(_ context.Context, i int, p *tp) error { p.i, p.v = i, 10*i; return nil },
		Assemble: func(_ context.Context, i int, p *tp, x *tx) error {
			if p.i != i {
				t.Errorf("assembler at %d got partial %d", i, p.i)
			}
			x.i, x.v = i, p.v+1
			return nil
		},
		LoadGraph: func(_ context.Context, i int, g *tg) error { g.i = i; return nil },
		Train: func(_ context.Context, i int, g *tg, x *tx) error {
			if g.i != i || x.i != i || x.v != 10*i+1 {
				t.Errorf("trainer at %d got graph %d input %d (%d)", i, g.i, x.i, x.v)
			}
			*trained = append(*trained, i)
			return nil
		},
		NewP: func() *tp { return new(tp) },
		NewX: func() *tx { return new(tx) },
		NewG: func() *tg { return new(tg) },
	}
}

func TestPipelineOrderAndBuffers(t *testing.T) {
	for _, seq := range []bool{false, true} {
		var trained []int
		stats, err := runPipeline(context.Background(), 50, 2, seq, testStages(t, &trained))
		if err != nil {
			t.Fatal(err)
		}
		if len(trained) != 50 {
			t.Fatalf("sequential=%v: trained %d batches", seq, len(trained))
		}
		for i, v := range trained {
			if v != i {
				t.Fatalf("sequential=%v: batch %d trained at step %d", seq, v, i)
			}
		}
		// at most depth + 2 buffers of each kind
		if stats.Partials > 4 || stats.Inputs > 4 || stats.Graphs > 4 {
			t.Fatalf("sequential=%v: buffers %+v, want at most 4 of each", seq, stats)
		}
	}
}

// TestPipelineBounds: while batch 0 trains, the feature loader gets
// exactly 2·depth+2 batches ahead (its queue, the assembler's and the
// complete-feature queue are full) and the graph loader depth+1, and no
// further: the queues are bounded and the two paths run independently.
func TestPipelineBounds(t *testing.T) {
	const depth = 2
	var maxFeat, maxGraph atomic.Int64
	featAt := make(chan struct{})
	graphAt := make(chan struct{})
	var onceF, onceG sync.Once
	var trained []int
	st := testStages(t, &trained)
	load, graph, train := st.LoadFeatures, st.LoadGraph, st.Train
	st.LoadFeatures = func(ctx context.Context, i int, p *tp) error {
		maxFeat.Store(int64(i))
		if i == 2*depth+2 {
			onceF.Do(func() { close(featAt) })
		}
		return load(ctx, i, p)
	}
	st.LoadGraph = func(ctx context.Context, i int, g *tg) error {
		maxGraph.Store(int64(i))
		if i == depth+1 {
			onceG.Do(func() { close(graphAt) })
		}
		return graph(ctx, i, g)
	}
	st.Train = func(ctx context.Context, i int, g *tg, x *tx) error {
		if i == 0 {
			for _, ch := range []chan struct{}{featAt, graphAt} {
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					t.Error("a loader did not run ahead of the trainer")
					return errors.New("stuck")
				}
			}
			time.Sleep(20 * time.Millisecond) // let anything unbounded run further
			if f, g := maxFeat.Load(), maxGraph.Load(); f != 2*depth+2 || g != depth+1 {
				t.Errorf("while batch 0 trains: feature loader at %d (want %d), graph loader at %d (want %d)", f, 2*depth+2, g, depth+1)
			}
		}
		return train(ctx, i, g, x)
	}
	if _, err := runPipeline(context.Background(), 20, depth, false, st); err != nil {
		t.Fatal(err)
	}
	if len(trained) != 20 {
		t.Fatalf("trained %d", len(trained))
	}
}

// TestPipelineErrors: an error in any stage ends the epoch with that
// error, and every worker goroutine exits.
func TestPipelineErrors(t *testing.T) {
	boom := errors.New("boom")
	before := runtime.NumGoroutine()
	for stage := 0; stage < 4; stage++ {
		var trained []int
		st := testStages(t, &trained)
		fail := func(i int) bool { return i == 7 }
		switch stage {
		case 0:
			f := st.LoadFeatures
			st.LoadFeatures = func(ctx context.Context, i int, p *tp) error {
				if fail(i) {
					return boom
				}
				return f(ctx, i, p)
			}
		case 1:
			f := st.Assemble
			st.Assemble = func(ctx context.Context, i int, p *tp, x *tx) error {
				if fail(i) {
					return boom
				}
				return f(ctx, i, p, x)
			}
		case 2:
			f := st.LoadGraph
			st.LoadGraph = func(ctx context.Context, i int, g *tg) error {
				if fail(i) {
					return boom
				}
				return f(ctx, i, g)
			}
		case 3:
			f := st.Train
			st.Train = func(ctx context.Context, i int, g *tg, x *tx) error {
				if fail(i) {
					return boom
				}
				return f(ctx, i, g, x)
			}
		}
		for _, seq := range []bool{false, true} {
			trained = trained[:0]
			if _, err := runPipeline(context.Background(), 30, 2, seq, st); !errors.Is(err, boom) {
				t.Fatalf("stage %d sequential=%v: error %v", stage+1, seq, err)
			}
			if len(trained) > 7 {
				t.Fatalf("stage %d: trained %d batches past the failure", stage+1, len(trained))
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var trained []int
	if _, err := runPipeline(ctx, 30, 2, false, testStages(t, &trained)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines left running (%d before)", n, before)
	}
	if _, err := runPipeline(context.Background(), 1, 0, false, testStages(t, &trained)); err == nil {
		t.Fatal("queue depth 0 accepted")
	}
}
