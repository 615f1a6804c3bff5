package web

import (
	"fmt"

	"outcore/engine/dataset"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/experiments/grid"
	"outcore/internal/units"
	"outcore/store"
)

// A grid's expected duration before it starts (the form's preview, an
// example's Start): each run's epochs at the seconds per epoch of past
// runs of its variant on the dataset (pastRuns.perEpoch), else at a prior
// from the data an epoch gathers, plus a fixed cost per run (process
// start, preparation, evaluation). The prior is rough on purpose and says
// so; past runs replace it as soon as there are some.

// priorGatherBytesPerSec is the rate at which the prior assumes an epoch
// gathers the input feature rows its batches can have (the bound, not the
// sampled count): calibrated on pyg+ on the `small` preset (39,919
// training nodes, 64 dims, batch 1024, fanout 10,5: 39 batches × 62,464
// rows × 256 B = 623 MB, 17 s an epoch at 75 % of the features on a
// loaded 2-core host with an SSD).
const priorGatherBytesPerSec = 36e6

// priorRunOverheadSec is each run's cost besides its epochs: the process,
// the first-batch probe, preparation (profiling, caches) and evaluation
// (19 s in the run above, with a full evaluation).
const priorRunOverheadSec = 15

// priorEpochSeconds is the prior's seconds per epoch of a run with batch
// size batch and fanout on meta's dataset: its batches times the input
// rows a batch can gather (seeds × (1 + f1 + f1·f2 …), at most every node)
// at priorGatherBytesPerSec.
func priorEpochSeconds(meta dataset.Meta, batch int, fanout []int) float64 {
	def := train.DefaultConfig()
	if batch <= 0 {
		batch = def.Batch
	}
	if fanout == nil {
		fanout = def.Fanout
	}
	trainN := meta.Train
	if trainN <= 0 {
		trainN = meta.Nodes / 2
	}
	cfg := def
	cfg.Batch, cfg.Fanout = batch, fanout
	shape := train.ShapeOf(meta)
	shape.Train = trainN
	inputs := kit.MaxInputBound(shape, cfg) // batch > 0 here
	batches := (trainN + int64(batch) - 1) / int64(batch)
	return float64(batches) * float64(inputs) * float64(meta.FeatureDim*4) / priorGatherBytesPerSec
}

// gridEstimate is the expected duration of the runs of g that start (the
// refused ones left out) on meta's dataset, in words, saying what it is
// from.
func gridEstimate(g *grid.Grid, meta dataset.Meta, past pastRuns, refused []store.RefusedCell) string {
	skip := map[int]bool{}
	for _, r := range refused {
		skip[r.Seq] = true
	}
	epochs := train.DefaultConfig().Epochs
	if cfg, err := g.CellConfig(grid.Cell{}); err == nil && cfg.Epochs > 0 {
		epochs = cfg.Epochs
	}
	fb := meta.FeatureBytes()
	var total float64
	var fromPast, fromPrior int
	for _, c := range g.Cells() {
		if skip[c.Seq] {
			continue
		}
		limit, _ := units.ParseMemLimit(c.MemLimit, fb)
		if c.MemLimit == "" || c.MemLimit == "none" {
			limit = 0
		}
		system := grid.VariantOf(c.System)
		if system == "" {
			system = train.DefaultConfig().System
		}
		sec, n := past.perEpoch(system, limit)
		if n > 0 {
			fromPast++
		} else {
			sec = priorEpochSeconds(meta, c.BatchSize, c.Fanout)
			fromPrior++
		}
		total += sec*float64(epochs) + priorRunOverheadSec
	}
	switch {
	case fromPast+fromPrior == 0:
		return ""
	case fromPrior == 0:
		return fmt.Sprintf("about %s (from past runs of these variants on %s)", units.Estimate(total), meta.Name)
	case fromPast == 0:
		return fmt.Sprintf("roughly %s (no past run on %s yet: a prior from the data an epoch gathers; past runs refine it)", units.Estimate(total), meta.Name)
	}
	return fmt.Sprintf("about %s (%d run(s) from past runs on %s, %d from a rough prior)", units.Estimate(total), fromPast, meta.Name, fromPrior)
}
