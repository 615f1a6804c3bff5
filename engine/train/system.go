package train

import (
	"context"

	"outcore/engine/metrics"
)

// System is one training-system variant (reference, pyg+, ginex, gnndrive,
// ...). The runner calls Prepare once, RunEpoch once per epoch (evaluation
// happens between epochs, outside RunEpoch), then Close.
type System interface {
	// Name is the registered name.
	Name() string
	// Prepare runs the variant's offline or preparation phases (building
	// caches, partitioning, packing, pre-sampling). Its time is reported as
	// the summary's prepare_s; per-phase times go through env.PrepareStage.
	Prepare(ctx context.Context, env *Env) error
	// RunEpoch runs one training epoch: it owns the pipeline, may use any
	// number of goroutines, and hands every mini-batch to env.TrainStep (from
	// one goroutine at a time), in any order. It records its stage times,
	// cache tiers and bytes needed in ep. Each training seed must be trained
	// exactly once per epoch (env.EpochBatches gives the standard order).
	RunEpoch(ctx context.Context, env *Env, epoch int, ep *metrics.EpochStats) error
	// Close releases everything the system holds.
	Close() error
}

// Describer is optionally implemented by a System to declare, before the run
// starts, which device runs each stage ("sample": "cpu", ...) and where it
// departs from its paper. Both go into the start record.
type Describer interface {
	Devices() map[string]string
	Deviations() []string
}

// Factory builds a System from a validated Config (Variant.New).
type Factory func(cfg Config) (System, error)
