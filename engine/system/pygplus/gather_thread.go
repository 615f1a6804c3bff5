package pygplus

// PyG+'s gather thread (Ginex §5.1: "for all schemes, we overlap the CUDA
// operations (transfer, compute) on GPU with the CPU operations to reduce
// data stalls"). The public baseline takes sampled batches in order from
// the DataLoader, and while the model trains batch i, a thread gathers the
// rows of batch i+1 from the feature mapping into a fresh buffer and puts
// them into a queue of one. Here one goroutine does that work for the whole
// epoch with two batch inputs: the trainer trains from one while the
// gatherer fills the other, and hands it back when the step is done, so at
// most two gathered inputs exist, as in the artifact.

import (
	"context"
	"fmt"
	"time"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

// gathered is a batch whose input the gather thread filled.
type gathered struct {
	mb  *graph.MiniBatch
	x   *nn.Tensor
	err error
}

// trainOverlapped trains n batches with the gather thread running one
// batch ahead. stop cancels the epoch's context (the pool's and the
// gatherer's); it is called, and the gatherer awaited, before returning,
// so no gather writes into a batch input after the epoch.
func (p *pygPlus) trainOverlapped(ctx context.Context, stop context.CancelFunc, env *train.Env, ep *metrics.EpochStats, pool *kit.SamplerPool, n int) (err error) {
	free := make(chan *nn.Tensor, len(p.xs))
	for i := range p.xs {
		free <- &p.xs[i]
	}
	ready := make(chan gathered, 1) // the artifact's gather_q (maxsize 1)
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
				err = p.gather(env, ep, mb, x)
				ep.Add(metrics.StageExtract, time.Since(t0))
			}
			if !kit.Send(ctx, ready, gathered{mb: mb, x: x, err: err}) {
				return
			}
			if err != nil {
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
			return fmt.Errorf("pyg+: the gather thread stopped before batch %d", i)
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

// overlapDeviation is the deviation the gather's placement makes from the
// paper's PyG+.
func overlapDeviation(overlap bool) string {
	if overlap {
		return "training runs on the CPU (the paper's PyG+ trains on a GPU): the gather thread overlaps batch i+1's gather with batch i's training as the artifact does, but both now compete for the same cores"
	}
	return "training runs on the CPU (the paper's PyG+ trains on a GPU); overlap=false: the gather runs on the trainer's critical path, not overlapped with training as in the paper (§5.1)"
}
