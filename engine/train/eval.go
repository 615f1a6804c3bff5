package train

import (
	"context"
	"fmt"

	"outcore/engine/graph"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
)

// evalSeedSalt separates evaluation's sampling RNG from training's.
const evalSeedSalt = 0x5eed_e7a1_0000

// Evaluator measures accuracy on a node set: it samples each batch of nodes
// with the evaluation fanouts (all -1 for full-neighbourhood inference),
// gathers their input features through storage and runs inference. Its RNG
// is fixed, so every epoch evaluates the same sampled neighbourhoods.
type Evaluator struct {
	s     *sample.Sampler
	g     *Gatherer
	tr    *Trainer
	batch int
	x     nn.Tensor
	mb    graph.MiniBatch
}

// NewEvaluator builds an evaluator over topo reading features from feats.
func NewEvaluator(cfg Config, tr *Trainer, topo sample.Topology, feats *storage.File) (*Evaluator, error) {
	s, err := sample.New(topo, cfg.EvalFanouts(), cfg.Seed^evalSeedSalt)
	if err != nil {
		return nil, fmt.Errorf("evaluation sampler: %w", err)
	}
	g, err := NewGatherer(feats, tr.InDim())
	if err != nil {
		return nil, err
	}
	return &Evaluator{s: s, g: g, tr: tr, batch: cfg.EvalBatch}, nil
}

// Accuracy returns the fraction of labelled nodes in ids that the model
// predicts right. stream separates the sampling of different node sets
// (validation, test) so they do not share random numbers.
func (ev *Evaluator) Accuracy(ctx context.Context, ids []int64, stream int) (float64, error) {
	correct, total := 0, 0
	for i, seeds := range sample.Split(ids, ev.batch) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := ev.s.SampleInto(&ev.mb, stream, i, seeds); err != nil {
			return 0, fmt.Errorf("evaluation: %w", err)
		}
		if err := ev.g.Gather(ctx, ev.mb.InputNodes, &ev.x); err != nil {
			return 0, fmt.Errorf("evaluation: %w", err)
		}
		c, n, err := ev.tr.Predict(&ev.mb, &ev.x)
		if err != nil {
			return 0, fmt.Errorf("evaluation: %w", err)
		}
		correct += c
		total += n
	}
	// The batch input is not kept between evaluations (under a memory
	// budget the variant's next epoch needs the room).
	ev.x = nn.Tensor{}
	if total == 0 {
		return 0, nil
	}
	return float64(correct) / float64(total), nil
}

// Close releases the evaluator's storage reader.
func (ev *Evaluator) Close() error { return ev.g.Close() }
