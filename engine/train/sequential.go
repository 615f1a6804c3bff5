package train

// The reference's loop as a part: sample → gather → train, one batch
// after the other on the calling goroutine, in the epoch's standard
// order. The reference runs it; a variant whose epoch is that loop
// embeds it (engine/system/systest/toy, docs/ARCHITECTURE.md "Adding a
// system").

import (
	"context"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
)

// Sequential is the reference's loop over a sampler of the topology and a
// gatherer of the feature table. It provides RunEpoch, and Close for what
// it holds (the gatherer's reader; the files stay its owner's).
type Sequential struct {
	s  *sample.Sampler
	g  *Gatherer
	x  nn.Tensor
	mb graph.MiniBatch
}

// NewSequential is the loop sampling topo with the run's sampler and
// gathering each batch's rows from feats.
func NewSequential(env *Env, topo sample.Topology, feats *storage.File) (*Sequential, error) {
	s, err := env.NewSampler(topo)
	if err != nil {
		return nil, err
	}
	g, err := NewGatherer(feats, env.Dataset.Meta.FeatureDim)
	if err != nil {
		return nil, err
	}
	return &Sequential{s: s, g: g}, nil
}

// RunEpoch samples, gathers and trains every batch of epoch in order
// (Env.Sample, Env.Gather, Env.TrainStep record each step).
func (q *Sequential) RunEpoch(ctx context.Context, env *Env, epoch int, ep *metrics.EpochStats) error {
	for i, seeds := range env.EpochBatches(epoch) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := env.Sample(ep, q.s, &q.mb, epoch, i, seeds); err != nil {
			return err
		}
		if err := env.Gather(ctx, ep, q.g, &q.mb, &q.x); err != nil {
			return err
		}
		if _, err := env.TrainStep(ep, &q.mb, &q.x); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the gatherer's reader; a nil loop (a Prepare that
// failed before it) holds nothing.
func (q *Sequential) Close() error {
	if q == nil {
		return nil
	}
	return q.g.Close()
}
