package report

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"outcore/engine/metrics"
	"outcore/engine/metrics/fields"
	"outcore/internal/units"
)

// RunData is what the comparison views need to know about one run: the
// grid point it stands for, how it ended and its epochs so far.
type RunData struct {
	ID       int64
	System   string
	MemLimit int64 // bytes; 0 = no limit
	Dim      int   // feature dimension the run used
	Batch    int
	Model    string
	Fanout   string
	Compute  string // "cpu" ("" for runs built without it), "none", "model:PROFILE"
	// TrainMaxNodes is the run's bound on training nodes per epoch
	// (train.Config.TrainMaxNodes; 0 = the whole training split).
	TrainMaxNodes int
	Repeat        int
	Status        string  // queued, running, done, failed, oom, cancelled, interrupted
	Digest        *Digest // the run's epochs summarised; nil when it has none (or they were not read)
	// Memory is the run's memory by part (MemoryOf); nil without an account.
	Memory *MemoryRow
	// PrepareS is the run's offline preparation (the summary's prepare_s);
	// nil when its summary does not say.
	PrepareS *float64
	// Values are the run's summary keys (fields.Runs: a study's metric
	// may be one, e.g. feature_disk_blowup); nil without a summary.
	Values fields.RunValues
	// Run-level aggregates the store keeps for finished runs; they stand in
	// for the digest where a page shows only the accuracy table.
	EpochsDone      int
	BestVal, TestAt *float64
	// Experiment is the run's experiment; ExpLabel ("#3") and ExpOrder
	// (its place in a comparison across experiments) make it a grid axis
	// there (LoadCrossComparison).
	Experiment int64
	ExpLabel   string
	ExpOrder   int
	// Cell is the run's values on its grid's path axes in words
	// ("options.window=4"; store.Run.Cell), "" without them.
	Cell string

	// Filled by NewComparison: the run's value on each grid axis (sort key
	// and words) and its variant's display index.
	axisNum  [numAxes]float64
	axisText [numAxes]string
	vi       int
}

// Run statuses as the comparison views group them.
const (
	RunQueued      = "queued"
	RunRunning     = "running"
	RunDone        = metrics.OutcomeDone
	RunFailed      = metrics.OutcomeFailed
	RunOOM         = metrics.OutcomeOOM
	RunCancelled   = metrics.OutcomeCancelled
	RunInterrupted = metrics.OutcomeInterrupted
)

// gridAxis is one axis of an experiment's grid other than the variant.
type gridAxis struct {
	key   string
	label string
	num   func(RunData) float64 // sort key
	text  func(RunData) string
	idx   int // position in gridAxes
}

// numAxes is len(gridAxes).
const numAxes = 8

var gridAxes = [numAxes]gridAxis{
	{"mem_limit", "memory limit", func(r RunData) float64 {
		if r.MemLimit <= 0 {
			return math.Inf(1) // "no limit" sorts last
		}
		return float64(r.MemLimit)
	}, func(r RunData) string { return MemLabel(r.MemLimit) }, 0},
	{"dim", "feature dim", func(r RunData) float64 { return float64(r.Dim) }, func(r RunData) string { return strconv.Itoa(r.Dim) }, 1},
	{"batch_size", "batch size", func(r RunData) float64 { return float64(r.Batch) }, func(r RunData) string { return strconv.Itoa(r.Batch) }, 2},
	{"model", "model", func(r RunData) float64 { return 0 }, func(r RunData) string { return r.Model }, 3},
	{"fanout", "fanout", func(r RunData) float64 { return 0 }, func(r RunData) string { return r.Fanout }, 4},
	// The compute mode (DESIGN §10): cpu, none or model:PROFILE.
	{"compute", "compute", func(r RunData) float64 { return 0 }, func(r RunData) string { return computeWord(r.Compute) }, 5},
	// The experiment varies only in a comparison across experiments.
	{"experiment", "exp", func(r RunData) float64 { return float64(r.ExpOrder) }, func(r RunData) string { return r.ExpLabel }, 6},
	// The grid's axes over configuration paths ("options.window=4"),
	// already in words.
	{"cell", "", func(r RunData) float64 { return 0 }, func(r RunData) string { return r.Cell }, 7},
}

func axisByKey(key string) gridAxis {
	for _, a := range gridAxes {
		if a.key == key {
			return a
		}
	}
	panic("report: unknown grid axis " + key)
}

// value and word are a run's position on an axis (precomputed).
func (a gridAxis) value(r RunData) float64 { return r.axisNum[a.idx] }
func (a gridAxis) word(r RunData) string   { return r.axisText[a.idx] }

// MemLabel writes a memory limit for people: "512 MiB", "1.5 GiB", "no limit".
func MemLabel(b int64) string {
	if b <= 0 {
		return "no limit"
	}
	return units.Bytes(b)
}

// Comparison is an experiment's runs arranged for the views of DESIGN §6.
type Comparison struct {
	runs     []RunData  // by variant, then grid point
	variants []string   // in fixed display order
	varying  []gridAxis // axes with more than one value
	others   []string   // variants not in VariantOrder, for styling

	cells        *categories // grid points, computed once
	variantCells *categories // variant · grid point, computed once

	meta        FigureMeta // where the runs come from (LoadComparison)
	fingerprint string     // what the charts are made of (LoadComparison)
	caveats     Caveats    // different data and hosts (LoadCrossComparison)
}

// Fingerprint is the same for two loads whose charts are the same (set by
// LoadComparison; "" otherwise): a key for caching drawn charts.
func (c *Comparison) Fingerprint() string { return c.fingerprint }

// Meta is the provenance its figures carry (set by LoadComparison).
func (c *Comparison) Meta() FigureMeta { return c.meta }

// categories are the x labels of a category chart and each run's place.
type categories struct {
	labels []string
	index  map[int64]int // run id -> category
}

// NewComparison arranges runs for comparison.
func NewComparison(in []RunData) *Comparison {
	runs := append([]RunData(nil), in...)
	c := &Comparison{}
	seen := map[string]bool{}
	for _, r := range runs {
		if !seen[r.System] {
			seen[r.System] = true
			c.variants = append(c.variants, r.System)
		}
	}
	known := len(VariantOrder())
	for _, v := range c.variants {
		if variantIndex(v, nil) == known {
			c.others = append(c.others, v)
		}
	}
	sort.Slice(c.variants, func(i, j int) bool {
		return variantIndex(c.variants[i], c.others) < variantIndex(c.variants[j], c.others)
	})
	for i := range runs {
		r := &runs[i]
		for _, a := range gridAxes {
			r.axisNum[a.idx], r.axisText[a.idx] = a.num(*r), a.text(*r)
		}
		r.vi = variantIndex(r.System, c.others)
	}
	for _, a := range gridAxes {
		vals := map[string]bool{}
		for _, r := range runs {
			vals[a.word(r)] = true
		}
		if len(vals) > 1 {
			c.varying = append(c.varying, a)
		}
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if runs[i].vi != runs[j].vi {
			return runs[i].vi < runs[j].vi
		}
		return c.cellLess(runs[i], runs[j])
	})
	c.runs = runs
	return c
}

// Variants lists the experiment's variants in display order.
func (c *Comparison) Variants() []string { return c.variants }

// Runs are the comparison's runs in display order.
func (c *Comparison) Runs() []RunData { return append([]RunData(nil), c.runs...) }

// Varies says whether the grid has more than one value on the axis.
func (c *Comparison) Varies(key string) bool {
	for _, a := range c.varying {
		if a.key == key {
			return true
		}
	}
	return false
}

// cellLabel names the run's grid point on the varying axes, leaving out the
// given keys ("" when nothing else varies).
func (c *Comparison) cellLabel(r RunData, exclude ...string) string {
	var parts []string
next:
	for _, a := range c.varying {
		for _, e := range exclude {
			if a.key == e {
				continue next
			}
		}
		v := a.word(r)
		if a.key == "mem_limit" || a.key == "cell" {
			parts = append(parts, v)
		} else {
			parts = append(parts, a.label+" "+v)
		}
	}
	return strings.Join(parts, " · ")
}

// cellOrder sorts runs by their grid point so categories come out in grid order.
func (c *Comparison) cellLess(a, b RunData) bool {
	for _, ax := range c.varying {
		if x, y := ax.value(a), ax.value(b); x != y {
			return x < y
		}
		if x, y := ax.word(a), ax.word(b); x != y {
			return x < y
		}
	}
	return false
}

// seriesStyle gives a series of a variant the variant's colour and marker.
func (c *Comparison) seriesStyle(variant string) (string, string) {
	return style(variantIndex(variant, c.others))
}

// Color is the variant's colour in every chart of this comparison.
func (c *Comparison) Color(variant string) string {
	col, _ := c.seriesStyle(variant)
	return col
}

// cellOf is a run's grid point in real units.
func cellOf(r RunData) *Cell {
	return &Cell{Variant: r.System, MemLimit: r.MemLimit, Dim: r.Dim, Batch: r.Batch, Model: r.Model, Fanout: r.Fanout}
}

// cellCategories lists the grid points (all varying axes but the variant)
// in grid order, with a run's category index.
func (c *Comparison) cellCategories() ([]string, func(RunData) int) {
	if c.cells == nil {
		order := make([]int, len(c.runs))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool { return c.cellLess(c.runs[order[i]], c.runs[order[j]]) })
		c.cells = c.categorise(order, func(r RunData) string { return c.cellLabel(r) })
		if len(c.cells.labels) == 1 && c.cells.labels[0] == "" {
			c.cells.labels[0] = "all runs"
		}
	}
	cats := c.cells
	return cats.labels, func(r RunData) int { return cats.index[r.ID] }
}

// categorise gives each run (taken in order) the category of its label.
func (c *Comparison) categorise(order []int, label func(RunData) string) *categories {
	cats := &categories{index: make(map[int64]int, len(order))}
	byLabel := map[string]int{}
	for _, i := range order {
		r := c.runs[i]
		l := label(r)
		k, ok := byLabel[l]
		if !ok {
			k = len(cats.labels)
			byLabel[l] = k
			cats.labels = append(cats.labels, l)
		}
		cats.index[r.ID] = k
	}
	return cats
}

// variantCellCategories are "variant · grid point" labels in variant then grid order.
func (c *Comparison) variantCellCategories() ([]string, func(RunData) int) {
	if c.variantCells == nil {
		order := make([]int, len(c.runs))
		for i := range order {
			order[i] = i // c.runs is in variant, then grid order
		}
		c.variantCells = c.categorise(order, func(r RunData) string {
			if l := c.cellLabel(r); l != "" {
				return r.System + " · " + l
			}
			return r.System
		})
	}
	cats := c.variantCells
	return cats.labels, func(r RunData) int { return cats.index[r.ID] }
}

// variantCellRuns groups c.runs into variantCellCategories' cells: cells[j]
// holds the runs of category j (x = j), nil where none ran.
func (c *Comparison) variantCellRuns() (cats []string, cells []*cell) {
	cats, idx := c.variantCellCategories()
	cells = make([]*cell, len(cats))
	for _, r := range c.runs {
		j := idx(r)
		if cells[j] == nil {
			cells[j] = &cell{x: float64(j), label: cats[j]}
		}
		cells[j].runs = append(cells[j].runs, r)
	}
	return cats, cells
}

// noRuns marks ch "No runs yet." when the comparison has no run.
func (c *Comparison) noRuns(ch *Chart) bool {
	if len(c.runs) == 0 {
		ch.Empty = "No runs yet."
		return true
	}
	return false
}

func contains(xs []string, s string) bool { return slices.Contains(xs, s) }
