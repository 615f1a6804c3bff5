package kit

// The gather thread of PyG+'s public baseline (Ginex §5.1: "for all
// schemes, we overlap the CUDA operations (transfer, compute) on GPU with
// the CPU operations to reduce data stalls"): while the model trains batch
// i, one goroutine gathers the rows of batch i+1 into the second of two
// batch inputs and hands it over through a queue of one. The variant
// supplies the gather; the loop, its stall accounting and its shutdown
// live here (pyg+ and ali+pg).

import (
	"context"
	"fmt"
	"time"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/train"
)

// GatherFunc fills x with the input rows of mb.
type GatherFunc func(mb *graph.MiniBatch, x *nn.Tensor) error

type gatheredBatch struct {
	mb  *graph.MiniBatch
	x   *nn.Tensor
	err error
}

// TrainGatheredAhead trains n batches of pool in order with one gather
// goroutine running a batch ahead into the inputs xs (two: one trained,
// one gathered). Gather time goes to extract_s, the trainer's wait for a
// gathered batch to stall_s. stop cancels the epoch's context (the
// pool's and the gatherer's); it is called, and the gatherer awaited,
// before returning, so no gather writes into an input after the epoch.
func TrainGatheredAhead(ctx context.Context, stop context.CancelFunc, env *train.Env, ep *metrics.EpochStats, pool *SamplerPool, n int, xs []nn.Tensor, gather GatherFunc) (err error) {
	if len(xs) == 0 {
		return fmt.Errorf("gather ahead: no batch input")
	}
	free := make(chan *nn.Tensor, len(xs))
	for i := range xs {
		free <- &xs[i]
	}
	ready := make(chan gatheredBatch, 1) // the artifact's gather_q (maxsize 1)
	go func() {
		defer close(ready)
		next := pool.InOrder(ctx)
		for i := 0; i < n; i++ {
			var x *nn.Tensor
			select {
			case x = <-free:
			case <-ctx.Done():
				return
			}
			mb, err := next(i)
			if err == nil {
				pool.Release()
				t0 := time.Now()
				err = gather(mb, x)
				ep.Add(metrics.StageExtract, time.Since(t0))
			}
			if !Send(ctx, ready, gatheredBatch{mb: mb, x: x, err: err}) || err != nil {
				return
			}
		}
	}()
	defer func() {
		stop()
		for range ready { // wait for the gatherer to leave
		}
	}()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		g, ok := <-ready
		ep.Add(metrics.StageStall, time.Since(t0))
		if !ok {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fmt.Errorf("gather ahead: the gather goroutine stopped before batch %d", i)
		}
		if g.err != nil {
			return g.err
		}
		_, err := env.TrainStep(ep, g.mb, g.x)
		free <- g.x
		if err != nil {
			return err
		}
	}
	return nil
}
