package web

import (
	"fmt"
	"strings"

	"outcore/engine/dataset"
	"outcore/engine/vocab"
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
	def := vocab.DefaultConfig()
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
	shape := vocab.ShapeOf(meta)
	shape.Train = trainN
	inputs := vocab.MaxInputBound(shape, cfg) // batch > 0 here
	batches := (trainN + int64(batch) - 1) / int64(batch)
	return float64(batches) * float64(inputs) * float64(meta.FeatureDim*4) / priorGatherBytesPerSec
}

// Estimate ranges: a run estimated from past runs of its variant at
// another limit or other settings, or from the prior, is stated as a
// range of these factors around the estimate; a run of a cell this host
// ran before (the same variant, limit and settings on the dataset) is not.
const (
	otherRunsLow, otherRunsHigh = 0.5, 2.0
	priorLow, priorHigh         = 0.33, 3.0
)

// gridEstimate is the expected duration of the runs of g that start (the
// refused ones left out) on meta's dataset, in words, saying what it is
// from: "about X" when every run's cell ran here before, else "about X
// (between L and H)" with the share of runs from each source.
func gridEstimate(g *grid.Grid, meta dataset.Meta, past pastRuns, refused []store.RefusedCell) string {
	skip := map[int]bool{}
	for _, r := range refused {
		skip[r.Seq] = true
	}
	epochs := vocab.DefaultConfig().Epochs
	maxNodes := 0
	if cfg, err := g.CellConfig(grid.Cell{}); err == nil {
		if cfg.Epochs > 0 {
			epochs = cfg.Epochs
		}
		maxNodes = cfg.TrainMaxNodes
	}
	fb := meta.FeatureBytes()
	var total, lo, hi float64
	var fromSame, fromOther, fromPrior int
	for _, c := range g.Cells() {
		if skip[c.Seq] {
			continue
		}
		limit, _ := units.ParseMemLimit(c.MemLimit, fb)
		if c.MemLimit == "" || c.MemLimit == "none" {
			limit = 0
		}
		system := c.System
		if system == "" {
			system = vocab.DefaultConfig().System
		}
		if sec, fixed, n := past.sameCell(system, limit, cellOf(c, maxNodes)); n > 0 {
			t := sec*float64(epochs) + fixed
			total, lo, hi = total+t, lo+t, hi+t
			fromSame++
			continue
		}
		// the variant's runs at other settings (its entry's, else its base
		// variant's), else the prior
		t, l, h := 0.0, priorLow, priorHigh
		for _, v := range []string{system, grid.VariantOf(system)} {
			if sec, n := past.perEpoch(v, limit); n > 0 {
				t, l, h = sec*float64(epochs)+priorRunOverheadSec, otherRunsLow, otherRunsHigh
				fromOther++
				break
			}
		}
		if t == 0 {
			t = priorEpochSeconds(meta, c.BatchSize, c.Fanout)*float64(epochs) + priorRunOverheadSec
			fromPrior++
		}
		total, lo, hi = total+t, lo+t*l, hi+t*h
	}
	runs := fromSame + fromOther + fromPrior
	switch {
	case runs == 0:
		return ""
	case fromSame == runs:
		return fmt.Sprintf("about %s (every run's cell ran on %s before: the same variant, limit and settings)", units.Estimate(total), meta.Name)
	case fromPrior == runs:
		return fmt.Sprintf("roughly %s, between %s and %s (no past run on %s yet: a prior from the data an epoch gathers; past runs refine it)",
			units.Estimate(total), units.Estimate(lo), units.Estimate(hi), meta.Name)
	}
	var parts []string
	if fromSame > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d runs from past runs of the same cell", fromSame, runs))
	}
	if fromOther > 0 {
		parts = append(parts, fmt.Sprintf("%d from past runs of their variant at another limit or other settings", fromOther))
	}
	if fromPrior > 0 {
		parts = append(parts, fmt.Sprintf("%d from a rough prior", fromPrior))
	}
	return fmt.Sprintf("about %s, between %s and %s (on %s: %s)", units.Estimate(total), units.Estimate(lo), units.Estimate(hi), meta.Name, strings.Join(parts, ", "))
}
