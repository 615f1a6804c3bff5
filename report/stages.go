package report

import (
	"fmt"
	"sort"
	"strings"

	"outcore/engine/metrics"
	"outcore/engine/vocab"
	"outcore/store"
)

// The stage-time views (DESIGN §6) show the seconds spent in each stage's
// calls, every stage a variant times, summed over the workers that ran
// them; the stage breakdown proper (stages, run-stages: wall_stages.go) is
// the wall-clock one. A stage-time view stacks only disjoint stages. A stage timed inside another (forward and
// backward inside train, metrics.NestedStages, and a variant's own
// vocab.Variant.NestedStages) is drawn as a share of its parent, in the
// parent's place: the parent's layer is split into its nested stages and
// the rest of it. A bar's height is therefore the sum of the top-level
// stages, and a mark on each bar shows the epoch time beside which to read
// it.

// standardStageOrder is the display order of the stages every record has.
var standardStageOrder = []string{metrics.StageSample, metrics.StageExtract, metrics.StageTrain, metrics.StageStall}

// stageColors fixes the colours of the common stages (Okabe–Ito), so a
// stage looks the same in every chart; other stages take the remaining
// colours in name order, and nested stages shades of their parent's.
var stageColors = map[string]string{
	metrics.StageSample:  "#E69F00",
	metrics.StageExtract: "#56B4E9",
	metrics.StageTrain:   "#009E73",
	metrics.StageStall:   "#D55E00",
}

// spareStageColors are the colours of the other top-level stages, in order.
var spareStageColors = []string{"#0072B2", "#CC79A7", "#F0E442", "#7F7F7F", "#000000", "#F5C266", "#A9D9F3", "#E5BCD3", "#4D4D4D", "#FAF1A1"}

// childShades are how far each nested stage's colour moves from its
// parent's: darker, lighter, then further each way.
var childShades = []float64{-0.35, 0.45, -0.6, 0.7, -0.2, 0.25}

// stageLayer is one layer of the stacked bars.
type stageLayer struct {
	stage string // the stage's record name ("forward_s"); a rest layer names its parent
	top   string // the top-level stage this layer belongs to (itself for a top-level layer)
	rest  bool   // the top-level stage's time outside its nested stages
	name  string // series name: "sample", "train · forward", "train · other"
	color string
}

// stageTree is the nesting of the stages of a chart's variants.
type stageTree struct {
	layers []stageLayer
	// parent[system][stage] is the direct parent of stage for system.
	parent map[string]map[string]string
	// children[system][stage] are the stages directly inside stage.
	children map[string]map[string][]string
}

// topOf follows a stage's parents to its top-level stage for system.
func (t *stageTree) topOf(system, stage string) string {
	seen := map[string]bool{}
	for !seen[stage] {
		seen[stage] = true
		p := t.parent[system][stage]
		if p == "" {
			return stage
		}
		stage = p
	}
	return stage
}

// newStageTree lays out the stages found (names, in record form) for the
// systems of a chart.
func newStageTree(systems []string, found map[string]bool) *stageTree {
	t := &stageTree{parent: map[string]map[string]string{}, children: map[string]map[string][]string{}}
	names := append([]string(nil), standardStageOrder...)
	var extra []string
	for k := range found {
		if !contains(names, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	names = append(names, extra...)
	for _, sys := range systems {
		t.parent[sys] = map[string]string{}
		t.children[sys] = map[string][]string{}
		for _, n := range names {
			if p := metrics.StageParent(n, nestedOf(sys)); p != "" && p != n {
				t.parent[sys][n] = p
				t.children[sys][p] = append(t.children[sys][p], n)
			}
		}
	}
	// Top-level stages in display order, each with the nested stages any
	// system times inside it.
	type group struct {
		nested []string
		split  bool
	}
	var tops []string
	groups := map[string]*group{}
	addTop := func(n string) *group {
		g := groups[n]
		if g == nil {
			g = &group{}
			groups[n] = g
			tops = append(tops, n)
		}
		return g
	}
	for _, n := range names {
		for _, sys := range systems {
			if t.parent[sys][n] == "" {
				addTop(n)
				break
			}
		}
	}
	for _, n := range names {
		for _, sys := range systems {
			if t.parent[sys][n] == "" {
				continue
			}
			top := t.topOf(sys, n)
			g := addTop(top)
			g.split = true
			if !contains(g.nested, n) {
				g.nested = append(g.nested, n)
			}
		}
	}
	spare := 0
	for _, top := range tops {
		col, ok := stageColors[top]
		if !ok {
			col = spareStageColors[spare%len(spareStageColors)]
			spare++
		}
		g := groups[top]
		for i, n := range g.nested {
			t.layers = append(t.layers, stageLayer{stage: n, top: top,
				name:  metrics.StageLabel(top) + " · " + metrics.StageLabel(n),
				color: shade(col, childShades[i%len(childShades)])})
		}
		name := metrics.StageLabel(top)
		if g.split {
			name += " · other"
		}
		t.layers = append(t.layers, stageLayer{stage: top, top: top, rest: true, name: name, color: col})
	}
	return t
}

// value is a layer's seconds for a system from its stage seconds, and
// whether the layer applies to the system. A rest layer is its stage less
// the stages directly inside it, at least 0 (short is the amount the
// nested stages' time exceeds it by: worker-seconds of concurrent
// workers can).
func (t *stageTree) value(l stageLayer, system string, sec func(string) float64) (v float64, ok bool, short float64) {
	if l.rest {
		if t.parent[system][l.stage] != "" {
			return 0, false, 0 // nested for this system: drawn in its parent
		}
		v = sec(l.stage)
		for _, c := range t.children[system][l.stage] {
			v -= sec(c)
		}
		if v < 0 {
			return 0, true, -v
		}
		return v, true, 0
	}
	if t.topOf(system, l.stage) != l.top || t.parent[system][l.stage] == "" {
		return 0, false, 0
	}
	v = sec(l.stage)
	for _, c := range t.children[system][l.stage] {
		v -= sec(c)
	}
	return max(v, 0), true, 0
}

// stageSeconds reads one stage's seconds from an epoch record.
func stageSeconds(e metrics.EpochRecord, name string) float64 {
	switch name {
	case metrics.StageSample:
		return e.SampleS
	case metrics.StageExtract:
		return e.ExtractS
	case metrics.StageTrain:
		return e.TrainS
	case metrics.StageStall:
		return e.StallS
	}
	return e.Stages[name]
}

// stageNote explains the stage charts.
const stageNote = "Seconds inside each stage's calls, summed over the workers that made them: this is where the work went, not a split of the epoch (the stage breakdown is). Stacked bars add up only disjoint stages: a stage timed inside another (forward and backward inside train, and a variant's own nested stages) is drawn as a share of its parent, in its place (\"train · forward\"), the rest of the parent as \"· other\". The black mark on each bar is the epoch time. Stages of pipelined variants run at the same time (and sum the seconds of several workers), so their bars can exceed the epoch time; a sequential pipeline's bar equals it."

// markerSeries is the epoch-time mark on each stacked bar.
func markerSeries() Series {
	return Series{Name: "epoch time", Color: "#000000", Marker: "dash", Role: "marker"}
}

// stageTime is the seconds in each stage's calls as stacked bars, one bar per variant and grid point.
func (c *Comparison) stageTime(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "variant · grid point", YLabel: "seconds (summed over workers) per epoch", YUnit: "s",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Seconds in each stage's calls per steady epoch, mean over repeated runs (error bars on each layer: ± one standard deviation; n in the tooltip and CSV). " + stageNote}
	if c.noRuns(&ch) {
		return ch
	}
	cats, cells := c.variantCellRuns()
	ch.Categories = cats
	found := map[string]bool{}
	for _, r := range c.runs {
		if r.Digest != nil {
			for _, k := range r.Digest.Stages {
				found[k] = true
			}
		}
	}
	tree := newStageTree(c.variants, found)
	for _, l := range tree.layers {
		s := Series{Name: l.name, Color: l.color, Marker: "rect", Stack: "stages"}
		if tree.isSplit(l.top) {
			s.Parent = metrics.StageLabel(l.top)
		}
		for _, cl := range cells {
			if cl == nil {
				continue
			}
			sys := cl.runs[0].System
			if _, ok, _ := tree.value(l, sys, func(string) float64 { return 0 }); !ok {
				s.Points = append(s.Points, Point{X: cl.x, Label: cl.label, Status: StatusNone, Cell: cellOf(cl.runs[0])})
				continue
			}
			var short float64
			p := aggregate(cl, func(r RunData) (float64, bool) {
				if r.Digest == nil {
					return 0, false
				}
				v, _, sh := tree.value(l, sys, func(n string) float64 { return r.Digest.Mean[n] })
				short = max(short, sh)
				return v, true
			})
			if short > 0 {
				p.Detail = strings.TrimPrefix(p.Detail+fmt.Sprintf("; the nested stages' seconds exceed %s by up to %.3g s (concurrent workers): the rest is shown as 0", metrics.StageLabel(l.stage), short), "; ")
			}
			s.Points = append(s.Points, p)
		}
		ch.Series = append(ch.Series, s)
	}
	m := markerSeries()
	for _, cl := range cells {
		if cl != nil {
			p := aggregate(cl, mean("epoch_s", 1))
			if p.Y == nil {
				p.Status = StatusNone // the stacked layers carry the cell's OOM or failure
			}
			m.Points = append(m.Points, p)
		}
	}
	ch.Series = append(ch.Series, m)
	return ch
}

// isSplit reports whether any layer is nested in top.
func (t *stageTree) isSplit(top string) bool {
	for _, l := range t.layers {
		if l.top == top && !l.rest {
			return true
		}
	}
	return false
}

// runStageTime is one run's seconds in each stage's calls per epoch, stacked the same way.
func runStageTime(e ChartEntry, run store.Run, epochs []store.Epoch, _ []store.Sample) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "epoch", YLabel: "seconds (summed over workers)", YUnit: "s",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Seconds in each stage's calls in each epoch as the run measured them (one run, n = 1); warm-up epochs are marked (w). " + stageNote}
	if len(epochs) == 0 {
		ch.Empty = noEpochYet(run)
		return ch
	}
	found := map[string]bool{}
	for _, e := range epochs {
		for k := range e.Stages {
			found[k] = true
		}
	}
	ch.Categories = epochCategories(epochs)
	tree := newStageTree([]string{run.System}, found)
	cell := runCell(run)
	for _, l := range tree.layers {
		if _, ok, _ := tree.value(l, run.System, func(string) float64 { return 0 }); !ok {
			continue
		}
		s := Series{Name: l.name, Color: l.color, Marker: "rect", Stack: "stages"}
		if tree.isSplit(l.top) {
			s.Parent = metrics.StageLabel(l.top)
		}
		for j, e := range epochs {
			v, _, _ := tree.value(l, run.System, func(n string) float64 { return stageSeconds(e.EpochRecord, n) })
			p := one(float64(j), ch.Categories[j], v)
			p.XReal, p.Cell = epochX(e), cell
			s.Points = append(s.Points, p)
		}
		ch.Series = append(ch.Series, s)
	}
	ch.Series = append(ch.Series, epochMarks(epochs, ch.Categories, cell))
	ch.XUnit = "epoch"
	return ch
}

// epochCategories are a run chart's x labels: each epoch's number, "(w)"
// after a warm-up epoch.
func epochCategories(epochs []store.Epoch) []string {
	var cats []string
	for _, e := range epochs {
		label := fmt.Sprintf("%d", e.EpochRecord.Epoch)
		if e.Warmup {
			label += " (w)"
		}
		cats = append(cats, label)
	}
	return cats
}

// runCell is the grid cell a run chart's points link to.
func runCell(run store.Run) *Cell {
	return &Cell{Variant: run.System, MemLimit: run.MemLimitBytes, Dim: run.FeatureDim, Batch: run.BatchSize, Model: run.Model, Fanout: run.Fanout}
}

// epochMarks is the epoch-time mark on each epoch's stacked bar of a run
// chart (categories cats, points linking to cell).
func epochMarks(epochs []store.Epoch, cats []string, cell *Cell) Series {
	m := markerSeries()
	for j, e := range epochs {
		p := one(float64(j), cats[j], e.EpochS)
		p.XReal, p.Cell = epochX(e), cell
		m.Points = append(m.Points, p)
	}
	return m
}

// epochX is an epoch's number as a CSV x value.
func epochX(e store.Epoch) *float64 {
	x := float64(e.EpochRecord.Epoch)
	return &x
}

// StackedTotals are the heights of a stacked chart's bars (the sum of its
// stacked layers) by category index, and the marker's value on each.
func StackedTotals(ch Chart) (totals, marks map[int]float64) {
	totals, marks = map[int]float64{}, map[int]float64{}
	for _, s := range ch.Series {
		for _, p := range s.Points {
			if p.Y == nil {
				continue
			}
			if s.Role == "marker" {
				marks[int(p.X)] = *p.Y
			} else {
				totals[int(p.X)] += *p.Y
			}
		}
	}
	return totals, marks
}

// nestedOf is the stages the variant named sys times inside others
// (vocab.Variant.NestedStages; none for an unknown one).
func nestedOf(sys string) map[string]string {
	v, _ := vocab.LookupVariant(sys)
	return v.NestedStages
}
