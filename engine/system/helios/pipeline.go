package helios

// The deep GNN-aware pipeline (Helios §3.3, Fig. 4). Training a mini-batch
// is decomposed into operators — neighbour sampling per hop, cache lookup
// and I/O submission per hop (S_i^h), I/O completion (C_i), batch
// generation and training — with two levels of overlap:
//
//   - intra-mini-batch: as soon as a hop's new nodes are known, their cache
//     lookups run and their feature reads are submitted, while the next
//     hop is sampled (S_i^0 for the seeds before hop 1 is sampled, ...);
//   - inter-mini-batch: mini-batch preparation runs ahead of training (in
//     Helios a separate process, with training's SMs limited by MPS), so
//     batch i+1's sampling and I/O overlap batch i's training.
//
// Helios-NoPipe (§4.5) runs the same operators one after another, one
// batch at a time: sample all hops, then look up and submit, then wait for
// completion, then train. Batches are trained in index order either way,
// so the model sees the reference pipeline's batches in the reference
// order.
//
// Stand-in: the operators are goroutines on the CPU (preparers sample and
// submit, the I/O stack's completion goroutines complete, the trainer
// trains) instead of GPU kernels on streams with allotted SMs; on two
// cores they share the CPU rather than running side by side.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"outcore/engine/graph"
	"outcore/engine/sample"
)

// Batch is one mini-batch moving through the pipeline.
type Batch struct {
	// Index is the batch's position in the epoch.
	Index int
	// Slot is the preparation slot (0..Depth-1) the batch holds until it
	// is trained: the variant keys its batch buffers by it.
	Slot int
	// MB is the sampled mini-batch.
	MB graph.MiniBatch
	// Job is the variant's per-batch state (its I/O job).
	Job any

	ready chan struct{}
	err   error
}

// Stages is what the pipeline drives; the variant implements it.
type Stages interface {
	// Begin starts batch b (b.Index, b.Slot set): it may set b.Job.
	Begin(b *Batch) error
	// Sample draws batch b into b.MB on preparer w, calling onHop for each
	// hop's new input nodes (sample.Sampler.SampleHops); onHop is nil when
	// the pipeline is off.
	Sample(w int, b *Batch, onHop sample.HopFunc) error
	// Hop looks up a hop's new nodes (rows first.. of the batch input) in
	// the caches and submits reads for the rest, without waiting.
	Hop(b *Batch, hop, first int, nodes []int64) error
	// Complete blocks until every feature of b is in place.
	Complete(ctx context.Context, b *Batch) error
	// Train trains b (called in index order, one at a time).
	Train(b *Batch) error
	// End releases b's state after training (or after a failure).
	End(b *Batch)
}

// PipelineConfig shapes the pipeline.
type PipelineConfig struct {
	// On turns both levels of the pipeline on; off is Helios-NoPipe.
	On bool
	// Preparers is the number of goroutines preparing batches (On only).
	Preparers int
	// Depth is the most batches prepared or being prepared and not yet
	// trained (On only; at least 1).
	Depth int
}

// PipelineStats are one epoch's pipeline measurements.
type PipelineStats struct {
	// Stall is the trainer's time waiting for a batch to be sampled and
	// its I/O completed; Complete the part of it spent in Complete.
	Stall, Complete time.Duration
	// Sample is the preparers' time sampling (without their hop
	// callbacks); Hop the time spent in Hop (cache lookups and I/O
	// submission).
	Sample, Hop time.Duration
	// Hops counts hop submissions; EarlyHops those made before the
	// batch's last hop was sampled (the intra-batch overlap).
	Hops, EarlyHops int64
	// Ahead is the most batches prepared ahead of the one training.
	Ahead int
}

// RunPipeline runs n batches through st and returns the epoch's stats.
func RunPipeline(ctx context.Context, cfg PipelineConfig, n int, st Stages) (PipelineStats, error) {
	if cfg.On {
		return runDeep(ctx, cfg, n, st)
	}
	return runSerial(ctx, n, st)
}

// runSerial is Helios-NoPipe: every operator of a batch in turn.
func runSerial(ctx context.Context, n int, st Stages) (PipelineStats, error) {
	var ps PipelineStats
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return ps, err
		}
		b := &Batch{Index: i}
		if err := st.Begin(b); err != nil {
			return ps, err
		}
		err := func() error {
			defer st.End(b)
			t0 := time.Now()
			if err := st.Sample(0, b, nil); err != nil {
				return err
			}
			t1 := time.Now()
			ps.Sample += t1.Sub(t0)
			if err := st.Hop(b, 0, 0, b.MB.InputNodes); err != nil {
				return err
			}
			t2 := time.Now()
			ps.Hop += t2.Sub(t1)
			ps.Hops++
			if err := st.Complete(ctx, b); err != nil {
				return err
			}
			d := time.Since(t2)
			ps.Complete += d
			ps.Stall += d
			return st.Train(b)
		}()
		if err != nil {
			return ps, err
		}
	}
	return ps, nil
}

// runDeep is the two-level pipeline.
func runDeep(ctx context.Context, cfg PipelineConfig, n int, st Stages) (PipelineStats, error) {
	var ps PipelineStats
	if cfg.Preparers < 1 || cfg.Depth < 1 {
		return ps, fmt.Errorf("helios: pipeline: %d preparers, depth %d (want >= 1 each)", cfg.Preparers, cfg.Depth)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	batches := make([]*Batch, n)
	for i := range batches {
		batches[i] = &Batch{Index: i, ready: make(chan struct{})}
	}
	slots := make(chan int, cfg.Depth)
	for s := 0; s < cfg.Depth; s++ {
		slots <- s
	}
	var (
		mu       sync.Mutex // next, training, ps
		next     int
		training int
	)
	// take hands out the next batch index with a free slot, in index
	// order, so the batch the trainer waits for is always dispatched.
	take := func() (*Batch, bool) {
		var s int
		select {
		case s = <-slots:
		case <-ctx.Done():
			return nil, false
		}
		mu.Lock()
		defer mu.Unlock()
		if next >= n {
			slots <- s
			return nil, false
		}
		b := batches[next]
		b.Slot = s
		next++
		ps.Ahead = max(ps.Ahead, b.Index-training)
		return b, true
	}
	var wg sync.WaitGroup
	for w := 0; w < cfg.Preparers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				b, ok := take()
				if !ok {
					return
				}
				var d prepStats
				b.err = prepare(w, b, st, &d)
				mu.Lock()
				ps.Sample += d.sample
				ps.Hop += d.hop
				ps.Hops += d.hops
				ps.EarlyHops += d.early
				mu.Unlock()
				close(b.ready)
				if b.err != nil {
					cancel(b.err)
					return
				}
			}
		}(w)
	}
	var err error
	trained := 0
	for i := 0; i < n && err == nil; i++ {
		mu.Lock()
		training = i
		mu.Unlock()
		b := batches[i]
		t0 := time.Now()
		select {
		case <-b.ready:
		case <-ctx.Done():
			err = context.Cause(ctx)
			continue
		}
		if b.err != nil {
			err = b.err
			continue
		}
		t1 := time.Now()
		err = st.Complete(ctx, b)
		t2 := time.Now()
		mu.Lock()
		ps.Complete += t2.Sub(t1)
		ps.Stall += t2.Sub(t0)
		mu.Unlock()
		if err == nil {
			err = st.Train(b)
		}
		st.End(b)
		trained = i + 1
		slots <- b.Slot
		batches[i] = nil // its mini-batch is garbage from here on
	}
	if err != nil {
		cancel(err)
	}
	wg.Wait()
	// Batches prepared but not trained (after a failure) still hold
	// their state; a batch whose preparation failed released its own.
	for _, b := range batches[trained:] {
		select {
		case <-b.ready:
			if b.err == nil {
				st.End(b)
			}
		default:
		}
	}
	return ps, err
}

type prepStats struct {
	sample, hop time.Duration
	hops, early int64
}

// prepare begins batch b and samples it hop by hop, looking up and
// submitting each hop's nodes as soon as they are known. On failure it
// ends the batch itself.
func prepare(w int, b *Batch, st Stages, d *prepStats) error {
	if err := st.Begin(b); err != nil {
		return err
	}
	t0 := time.Now()
	err := st.Sample(w, b, func(hop, first int, nodes []int64) error {
		h0 := time.Now()
		err := st.Hop(b, hop, first, nodes)
		d.hop += time.Since(h0)
		d.hops++
		return err
	})
	d.sample = time.Since(t0) - d.hop
	// every hop but the last was submitted before the next was sampled
	d.early = max(0, d.hops-1)
	if err != nil {
		st.End(b)
	}
	return err
}
