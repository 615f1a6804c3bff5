package pygplus

// PyG+'s gather thread (Ginex §5.1: "for all schemes, we overlap the CUDA
// operations (transfer, compute) on GPU with the CPU operations to reduce
// data stalls"). The public baseline takes sampled batches in order from
// the DataLoader, and while the model trains batch i, a thread gathers the
// rows of batch i+1 from the feature mapping into a fresh buffer and puts
// them into a queue of one. Here one goroutine does that work for the whole
// epoch with two batch inputs: the trainer trains from one while the
// gatherer fills the other, and hands it back when the step is done, so at
// most two gathered inputs exist, as in the artifact. The loop is kit's
// (gather_ahead.go), which ali+pg shares.

import (
	"context"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

// trainOverlapped trains n batches with the gather thread running one
// batch ahead into PyG+'s two batch inputs: the shared loop of
// kit.TrainGatheredAhead, with PyG+'s gather from the feature mapping.
func (p *pygPlus) trainOverlapped(ctx context.Context, stop context.CancelFunc, env *train.Env, ep *metrics.EpochStats, pool *kit.SamplerPool, n int) error {
	return kit.TrainGatheredAhead(ctx, stop, env, ep, pool, n, p.xs[:], func(mb *graph.MiniBatch, x *nn.Tensor) error {
		return p.gather(env, ep, mb, x)
	})
}

// overlapDeviation is the deviation the gather's placement makes from the
// paper's PyG+.
func overlapDeviation(overlap bool) string {
	if overlap {
		return "training runs on the CPU (the paper's PyG+ trains on a GPU): the gather thread overlaps batch i+1's gather with batch i's training as the artifact does, but both now compete for the same cores"
	}
	return "training runs on the CPU (the paper's PyG+ trains on a GPU); overlap=false: the gather runs on the trainer's critical path, not overlapped with training as in the paper (§5.1)"
}
