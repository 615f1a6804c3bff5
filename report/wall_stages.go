package report

import (
	"outcore/engine/metrics"
	"outcore/store"
)

// The stage breakdown (DESIGN §5 "Stage vocabulary", §6; after Ginex
// Fig. 14 and GIDS Fig. 5) is the epoch's wall-clock critical path as the
// trainer saw it: sample, load, train and stall add up to the epoch time,
// pipelined variants included. Worker-seconds of parallel samplers and
// extractors are in the worker-time views, the seconds of every stage's
// calls in the stage-time views (stages.go).

// wallLayer is one layer of the stage breakdown.
type wallLayer struct {
	name, key, color string
	value            func(metrics.EpochRecord) float64
}

var wallLayers = []wallLayer{
	{"sample", "wall_sample_s", stageColors[metrics.StageSample], func(e metrics.EpochRecord) float64 { return e.WallSampleS }},
	{"load", "wall_load_s", stageColors[metrics.StageExtract], func(e metrics.EpochRecord) float64 { return e.WallLoadS }},
	{"train", "wall_train_s", stageColors[metrics.StageTrain], func(e metrics.EpochRecord) float64 { return e.WallTrainS }},
	{"stall", "wall_stall_s", stageColors[metrics.StageStall], func(e metrics.EpochRecord) float64 { return e.WallStallS }},
}

// wallNote explains the stage breakdown.
const wallNote = "Wall-clock seconds of each epoch by what the trainer did (DESIGN §5): train = computing; load = waiting while a feature load was in progress; sample = waiting while sampling (and no load) was; stall = waiting on neither (handoffs, queues, a variant's other work such as cache switches). The layers add up to the epoch time (the black mark), pipelined variants included; offline preparation is apart (the run's prepare time). Parallel workers' seconds are in the worker-time view, the seconds of every stage's calls in the stage-time view."

// wallLegacy says why a run has no stage breakdown.
const wallLegacy = "recorded before metrics version 3, which measures the wall-clock stage breakdown (DESIGN §5); see the stage-time view for its stage seconds"

// stages is the wall-clock stage breakdown as stacked bars, one bar per
// variant and grid point.
func (c *Comparison) stages(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "variant · grid point", YLabel: "seconds per epoch", YUnit: "s",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Steady epochs, mean over repeated runs (error bars on each layer: ± one standard deviation; n in the tooltip and CSV). " + wallNote + " After " + e.Paper + "."}
	if c.noRuns(&ch) {
		return ch
	}
	cats, cells := c.variantCellRuns()
	ch.Categories = cats
	any := false
	for _, r := range c.runs {
		any = any || (r.Digest != nil && r.Digest.WallMeasured > 0)
	}
	for _, l := range wallLayers {
		s := Series{Name: l.name, Color: l.color, Marker: "rect", Stack: "stages"}
		for _, cl := range cells {
			if cl == nil {
				continue
			}
			p := aggregate(cl, wallMean(l.key))
			if p.Y == nil && (p.Status == StatusPending || p.Status == StatusUnmeasured) && wallLegacyCell(cl) {
				p.Status, p.Detail = StatusUnmeasured, wallLegacy
			}
			s.Points = append(s.Points, p)
		}
		ch.Series = append(ch.Series, s)
	}
	m := markerSeries()
	for _, cl := range cells {
		if cl != nil {
			p := aggregate(cl, wallMean("epoch_s"))
			if p.Y == nil {
				p.Status = StatusNone // the stacked layers carry the cell's OOM or failure
			}
			m.Points = append(m.Points, p)
		}
	}
	ch.Series = append(ch.Series, m)
	if !any {
		for _, r := range c.runs {
			if r.Digest != nil {
				ch.Empty = "Every run of this experiment was " + wallLegacy + "."
				break
			}
		}
	}
	return ch
}

// wallLegacyCell reports whether a cell's measured runs all lack the
// wall-clock stages.
func wallLegacyCell(cl *cell) bool {
	n := 0
	for _, r := range cl.runs {
		if r.Digest == nil {
			continue
		}
		if r.Digest.WallMeasured > 0 {
			return false
		}
		n++
	}
	return n > 0
}

// wallMean is a steady-epoch mean over runs with the wall-clock stages.
func wallMean(key string) func(RunData) (float64, bool) {
	return func(r RunData) (float64, bool) {
		if r.Digest == nil || r.Digest.WallMeasured == 0 {
			return 0, false
		}
		return r.Digest.Mean[key], true
	}
}

// runStages is one run's wall-clock stage breakdown per epoch.
func runStages(e ChartEntry, run store.Run, epochs []store.Epoch, _ []store.Sample) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "epoch", YLabel: "seconds", YUnit: "s",
		XType: "category", YType: "value", Kind: "stack", XUnit: "epoch",
		Note: "One run, n = 1; warm-up epochs are marked (w). " + wallNote}
	if len(epochs) == 0 {
		ch.Empty = noEpochYet(run)
		return ch
	}
	var eps []store.Epoch
	for _, e := range epochs {
		if e.MetricsVersion >= metrics.WallStagesVersion {
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 {
		ch.Empty = "This run was " + wallLegacy + "."
		return ch
	}
	ch.Categories = epochCategories(eps)
	cell := runCell(run)
	for _, l := range wallLayers {
		s := Series{Name: l.name, Color: l.color, Marker: "rect", Stack: "stages"}
		for j, e := range eps {
			p := one(float64(j), ch.Categories[j], l.value(e.EpochRecord))
			p.XReal, p.Cell = epochX(e), cell
			s.Points = append(s.Points, p)
		}
		ch.Series = append(ch.Series, s)
	}
	ch.Series = append(ch.Series, epochMarks(eps, ch.Categories, cell))
	return ch
}
