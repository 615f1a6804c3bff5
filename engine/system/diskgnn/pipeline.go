package diskgnn

// DiskGNN §5.3 "Pipelined Training" (Fig. 7) and §6 "Training pipeline":
// four stages, each on its own worker, joined by producer–consumer queues
// with a size limit of 2:
//
//	① feature loader ──partial-feature queue──▶ ② feature assembler ──complete-feature queue──▶ ④ model trainer
//	③ graph loader ─────────────────graph queue──────────────────────────────────────────────▶ ④
//
// "The four pipeline stages are non-linear with two separate dependency
// paths: ①→②→④ and ③→④." Both paths process the batches in the same
// order, so the heads of the complete-feature queue and the graph queue
// always belong to the same batch. With queues of 2, while the trainer
// works on batch t, up to batches t+1..t+2 wait in each queue, the
// assembler holds t+3 and the feature loader t+6 (its own queue t+4..t+5):
// the loader runs at most 2·depth+2 batches ahead.
//
// Table 5 compares this with sequential execution (one thread does
// ③, ①, ② and ④ for each batch in turn); Sequential is that baseline.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"outcore/engine/system/kit"
)

// stages are the four workers of an epoch. Each is called from its own
// goroutine (or, in sequential mode, all from the caller's), for batches
// 0..n-1 in order.
type stages[P, X, G any] struct {
	// LoadFeatures is ①: read the batch's disk-resident features (its
	// packed chunk and disk-cache rows) into a partial input.
	LoadFeatures func(ctx context.Context, i int, p *P) error
	// Assemble is ②: build the complete input from the memory caches and
	// the partial input.
	Assemble func(ctx context.Context, i int, p *P, x *X) error
	// LoadGraph is ③: read the batch's graph sample.
	LoadGraph func(ctx context.Context, i int, g *G) error
	// Train is ④.
	Train func(ctx context.Context, i int, g *G, x *X) error
	// NewP, NewX, NewG make the buffers a stage fills; released buffers
	// come back (Free*), so an epoch allocates at most the pipeline's
	// capacity of each.
	NewP func() *P
	NewX func() *X
	NewG func() *G
	// FreeP, when set, is told when a partial input is no longer used (the
	// assembler is done with it).
	FreeP func(*P)
	// Wait, when set, receives the time the trainer waited for each
	// batch's graph and complete input.
	Wait func(time.Duration)
}

// pipelineStats counts what the pipeline held.
type pipelineStats struct {
	// Buffers allocated per kind (NewP/NewX/NewG calls).
	Partials, Inputs, Graphs int
}

type pool[T any] struct {
	free  chan *T
	newFn func() *T
	made  int
	limit int
	mu    sync.Mutex
}

func newPool[T any](limit int, newFn func() *T) *pool[T] {
	return &pool[T]{free: make(chan *T, limit), newFn: newFn, limit: limit}
}

// get returns a free buffer, making one while fewer than limit exist.
func (p *pool[T]) get(ctx context.Context) (*T, error) {
	select {
	case b := <-p.free:
		return b, nil
	default:
	}
	p.mu.Lock()
	if p.made < p.limit {
		p.made++
		p.mu.Unlock()
		return p.newFn(), nil
	}
	p.mu.Unlock()
	select {
	case b := <-p.free:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pool[T]) put(b *T) { p.free <- b }

type item[T any] struct {
	i int
	v *T
}

// runPipeline runs n batches through the four stages with queues of depth
// (the paper's 2). With sequential true it runs ③, ①, ②, ④ for one batch
// after the other on the calling goroutine instead (Table 5's baseline).
// The first error of any stage cancels the others and is returned.
func runPipeline[P, X, G any](ctx context.Context, n, depth int, sequential bool, st stages[P, X, G]) (pipelineStats, error) {
	if depth < 1 {
		return pipelineStats{}, fmt.Errorf("diskgnn: pipeline queue depth %d", depth)
	}
	if sequential {
		return runSequential(ctx, n, st)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		errMu    sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		cancel()
	}
	// Buffers in use at once: a queue's depth plus one at each end.
	pp := newPool(depth+2, st.NewP)
	xp := newPool(depth+2, st.NewX)
	gp := newPool(depth+2, st.NewG)
	partialQ := make(chan item[P], depth)
	completeQ := make(chan item[X], depth)
	graphQ := make(chan item[G], depth)
	send := func(err error) bool { // false: stop the stage
		if err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			return false
		}
		return true
	}
	wg.Add(3)
	go func() { // ① feature loader
		defer wg.Done()
		defer close(partialQ)
		for i := 0; i < n; i++ {
			p, err := pp.get(ctx)
			if !send(err) {
				return
			}
			if !send(st.LoadFeatures(ctx, i, p)) {
				return
			}
			if !kit.Send(ctx, partialQ, item[P]{i, p}) {
				return
			}
		}
	}()
	go func() { // ② feature assembler
		defer wg.Done()
		defer close(completeQ)
		for it := range partialQ {
			x, err := xp.get(ctx)
			if !send(err) {
				return
			}
			err = st.Assemble(ctx, it.i, it.v, x)
			if st.FreeP != nil {
				st.FreeP(it.v)
			}
			pp.put(it.v)
			if !send(err) {
				return
			}
			if !kit.Send(ctx, completeQ, item[X]{it.i, x}) {
				return
			}
		}
	}()
	go func() { // ③ graph loader
		defer wg.Done()
		defer close(graphQ)
		for i := 0; i < n; i++ {
			g, err := gp.get(ctx)
			if !send(err) {
				return
			}
			if !send(st.LoadGraph(ctx, i, g)) {
				return
			}
			if !kit.Send(ctx, graphQ, item[G]{i, g}) {
				return
			}
		}
	}()
	// ④ model trainer
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t0 := time.Now()
		g, okG := <-graphQ
		x, okX := <-completeQ
		if st.Wait != nil {
			st.Wait(time.Since(t0))
		}
		if !okG || !okX {
			break // a stage stopped: its error is recorded
		}
		if g.i != i || x.i != i {
			fail(fmt.Errorf("diskgnn: pipeline: trainer at batch %d got graph %d and input %d", i, g.i, x.i))
			break
		}
		err := st.Train(ctx, i, g.v, x.v)
		gp.put(g.v)
		xp.put(x.v)
		if err != nil {
			fail(err)
			break
		}
	}
	cancel()
	// Unblock producers waiting on full queues, then wait for them.
	go func() {
		for range graphQ {
		}
	}()
	go func() {
		for range completeQ {
		}
	}()
	wg.Wait()
	stats := pipelineStats{Partials: pp.made, Inputs: xp.made, Graphs: gp.made}
	if firstErr != nil {
		return stats, firstErr
	}
	return stats, parent.Err()
}

// runSequential is Table 5's sequential execution: one goroutine loads the
// graph, loads and assembles the features, and trains, batch after batch.
func runSequential[P, X, G any](ctx context.Context, n int, st stages[P, X, G]) (pipelineStats, error) {
	stats := pipelineStats{Partials: 1, Inputs: 1, Graphs: 1}
	p, x, g := st.NewP(), st.NewX(), st.NewG()
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return stats, err
		}
		t0 := time.Now()
		if err := st.LoadGraph(ctx, i, g); err != nil {
			return stats, err
		}
		if err := st.LoadFeatures(ctx, i, p); err != nil {
			return stats, err
		}
		err := st.Assemble(ctx, i, p, x)
		if st.FreeP != nil {
			st.FreeP(p)
		}
		if err != nil {
			return stats, err
		}
		if st.Wait != nil {
			st.Wait(time.Since(t0))
		}
		if err := st.Train(ctx, i, g, x); err != nil {
			return stats, err
		}
	}
	return stats, nil
}
