package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"outcore/engine/metrics"
	"outcore/experiments"
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
	Repeat   int
	Status   string  // queued, running, done, failed, oom, cancelled, interrupted
	Digest   *Digest // the run's epochs summarised; nil when it has none (or they were not read)
	// Memory is the run's memory by part (MemoryOf); nil without an account.
	Memory *MemoryRow
	// PrepareS is the run's offline preparation (the summary's prepare_s);
	// nil when its summary does not say.
	PrepareS *float64
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
const numAxes = 7

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
	return experiments.FormatBytes(b)
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
		if a.key == "mem_limit" {
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

// measured reports whether a run's epochs count as a measurement: finished
// runs and the finished epochs of a running one. OOM and failed runs do not.
func measured(r RunData) bool {
	return (r.Status == RunDone || r.Status == RunRunning) && (r.Digest != nil || r.BestVal != nil)
}

// legacyRun reports whether a run's epochs were all recorded before
// metrics version 2 (DESIGN §5): they have no device reads by file kind,
// rows from the device or busy/wait, and their read_amplification meant
// bytes_read / bytes_needed.
func legacyRun(r RunData) bool { return r.Digest != nil && r.Digest.Measured == 0 }

// legacyNote is said under a chart of metrics that runs recorded before
// metrics version 2 lack.
const legacyNote = " Runs recorded before metrics version 2 did not measure this and are left out (their points say so); the epochs CSV keeps their bytes_read / bytes_needed as bytes_read_per_byte_needed."

// onlyLegacy is the Empty text of a version-2 chart when every measured
// run is a legacy one.
func (c *Comparison) onlyLegacy() string {
	any := false
	for _, r := range c.runs {
		if r.Digest == nil {
			continue
		}
		if !legacyRun(r) {
			return ""
		}
		any = true
	}
	if !any {
		return ""
	}
	return "Every run of this experiment was recorded before metrics version 2 (DESIGN §5), which measure the device reads by file kind, the rows read from the device and workers' busy and wait time; this chart has nothing to show for them."
}

// measuredMean is a steady-epoch mean that only epochs of metrics version
// 2 have (Digest.Measured): no value for legacy runs.
func measuredMean(name string, scale float64) func(RunData) (float64, bool) {
	return func(r RunData) (float64, bool) {
		if r.Digest == nil || r.Digest.Measured == 0 {
			return 0, false
		}
		v, ok := r.Digest.Mean[name]
		return v * scale, ok
	}
}

// mean makes a run metric of a steady-epoch mean (a stage the run did not
// report counts 0 s); no epochs, no value.
func mean(name string, scale float64) func(RunData) (float64, bool) {
	return func(r RunData) (float64, bool) {
		if r.Digest == nil {
			return 0, false
		}
		return r.Digest.Mean[name] * scale, true
	}
}

// cell collects the runs of one grid point and one series.
type cell struct {
	x     float64
	label string
	runs  []RunData
}

// aggregate turns a cell's runs into a Point of f (one value per measured
// run). Runs that gave no value are counted by how they ended: out of
// memory, failed, cancelled by a person, interrupted by a server stop
// (DESIGN §6: a cancelled cell is not a failed one).
func aggregate(cl *cell, f func(RunData) (float64, bool)) Point {
	var xs []float64
	var oom, failed, cancelled, interrupted, pending, legacy int
	var ids []int64
	for _, r := range cl.runs {
		ids = append(ids, r.ID)
		switch {
		case r.Status == RunOOM:
			oom++
		case r.Status == RunFailed:
			failed++
		case r.Status == RunCancelled:
			cancelled++
		case r.Status == RunInterrupted:
			interrupted++
		case !measured(r):
			pending++
		default:
			if v, ok := f(r); ok {
				xs = append(xs, v)
			} else if legacyRun(r) {
				legacy++
			} else {
				pending++
			}
		}
	}
	p := point(cl.x, cl.label, xs)
	p.Runs = ids
	if len(cl.runs) > 0 {
		p.Cell = cellOf(cl.runs[0])
	}
	total := len(cl.runs)
	var parts []string
	for _, o := range []struct {
		n    int
		word string
	}{{oom, "OOM"}, {failed, "failed"}, {cancelled, "cancelled"}, {interrupted, "interrupted"}} {
		if o.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", o.n, o.word))
		}
	}
	stopped := strings.Join(parts, ", ")
	switch {
	case len(xs) > 0 && stopped != "":
		p.Status = StatusPartial
		p.Detail = fmt.Sprintf("%d of %d runs measured; %s", len(xs), total, stopped)
	case len(xs) > 0:
		p.Status = StatusOK
		if pending > 0 {
			p.Detail = fmt.Sprintf("%d of %d runs still to come", pending, total)
		}
	case oom > 0:
		p.Status = StatusOOM
		p.Detail = fmt.Sprintf("%d of %d runs: %s", oom+failed+cancelled+interrupted, total, stopped)
	case failed > 0:
		p.Status = StatusFailed
		p.Detail = fmt.Sprintf("%d of %d runs: %s", failed+cancelled+interrupted, total, stopped)
	case cancelled > 0:
		p.Status = StatusCancelled
		p.Detail = fmt.Sprintf("%d of %d runs: %s", cancelled+interrupted, total, stopped)
	case interrupted > 0:
		p.Status = StatusInterrupted
		p.Detail = fmt.Sprintf("%d of %d runs interrupted", interrupted, total)
	case legacy > 0 && pending == 0:
		p.Status = StatusUnmeasured
	default:
		p.Status = StatusPending
	}
	if legacy > 0 {
		note := fmt.Sprintf("%d of %d runs recorded before metrics version 2 did not measure this", legacy, total)
		if p.Detail != "" {
			note = p.Detail + "; " + note
		}
		p.Detail = note
	}
	return p
}

// cellOf is a run's grid point in real units.
func cellOf(r RunData) *Cell {
	return &Cell{Variant: r.System, MemLimit: r.MemLimit, Dim: r.Dim, Batch: r.Batch, Model: r.Model, Fanout: r.Fanout}
}

// ChartIDs lists the experiment page's charts in page order.
var ChartIDs = []string{
	"epoch-vs-mem", "epoch-vs-dim", "epoch-vs-batch", "normalised", "stages", "stage-time",
	"hit-vs-mem", "tier-hits", "disk-read", "disk-read-kind", "amplification", "io-efficiency", "worker-time", "memory", "time-to-accuracy", "accuracy",
}

// Chart builds one view by id; baseline names the variant the normalised
// runtime divides by ("" = the first variant). ok is false for an unknown id.
func (c *Comparison) Chart(id, baseline string) (Chart, bool) {
	ch, ok := c.chart(id, baseline)
	if ok && ch.Empty == "" && !hasMarks(ch) {
		ch.Empty = "Nothing measured yet: the chart fills in as runs report epochs."
	}
	return ch, ok
}

// hasMarks reports whether a chart has anything to draw: a value, or an OOM or failed cell.
func hasMarks(ch Chart) bool {
	for _, s := range ch.Series {
		for _, p := range s.Points {
			if p.Y != nil || statusWord(p.Status) != "" {
				return true
			}
		}
	}
	return false
}

func (c *Comparison) chart(id, baseline string) (Chart, bool) {
	switch id {
	case "epoch-vs-mem":
		return c.versus("mem_limit", id, "Epoch time vs memory limit", "GNNDrive Fig. 9, DiskGNN Fig. 9"), true
	case "epoch-vs-dim":
		return c.versus("dim", id, "Epoch time vs feature dimension", "GNNDrive Fig. 8"), true
	case "epoch-vs-batch":
		return c.versus("batch_size", id, "Epoch time vs batch size", "GNNDrive Fig. 10"), true
	case "normalised":
		return c.normalised(baseline), true
	case "stages":
		return c.stages(), true
	case "stage-time":
		return c.stageTime(), true
	case "hit-vs-mem":
		return c.hitVsMem(), true
	case "tier-hits":
		return c.tierHits(), true
	case "disk-read":
		return c.perCell(id, "Disk read per epoch", "MiB read from the device per epoch",
			"DiskGNN Table 1", mean("bytes_read", 1.0/(1<<20))), true
	case "disk-read-kind":
		return c.diskReadKind(), true
	case "amplification":
		ch := c.perCell(id, "Read amplification", "feature bytes read / bytes of the rows read",
			"DiskGNN Fig. 10", func(r RunData) (float64, bool) { return r.Digest.Amplification() })
		ch.Note = "Feature bytes read from the device per byte of the feature rows read from the device (feature_bytes_read / (rows_from_device × row size), DESIGN §5): what fetching a row costs, 1 when exactly the rows are read, more for whole blocks or pages around them, below 1 when rows read together share blocks. Cache hits do not lower it (see the hit-ratio charts). " + ch.Note + legacyNote
		if e := c.onlyLegacy(); e != "" {
			ch.Empty = e
		}
		return ch, true
	case "io-efficiency":
		return c.ioEfficiency(), true
	case "worker-time":
		return c.workerTime(), true
	case "memory":
		return c.memoryPeaks(), true
	case "time-to-accuracy":
		return c.timeToAccuracy(), true
	case "accuracy":
		return c.accuracy(), true
	}
	return Chart{}, false
}

// Charts builds every view in page order.
func (c *Comparison) Charts(baseline string) []Chart {
	out := make([]Chart, 0, len(ChartIDs))
	for _, id := range ChartIDs {
		ch, _ := c.Chart(id, baseline)
		out = append(out, ch)
	}
	return out
}

// versus is "epoch time vs <axis>": one line per variant (and per value of
// the other varying axes), mean ± sd over repeats, OOM and failed cells marked.
func (c *Comparison) versus(axisKey, id, title, ref string) Chart {
	ax := axisByKey(axisKey)
	ch := Chart{ID: id, Title: title, XLabel: ax.label, YLabel: "epoch time (s)", XType: "category", YType: "value", Kind: "line",
		Note: "Mean epoch time of the steady (non-warm-up) epochs of each run; points are the mean over repeated runs, error bars ± one sample standard deviation, n runs per point in the tooltip and CSV. ✕ marks a cell where every run ran out of memory (OOM), ! where runs failed. After " + ref + "."}
	if len(c.runs) == 0 {
		ch.Empty = "No runs yet."
		return ch
	}
	if !c.Varies(axisKey) {
		ch.Empty = fmt.Sprintf("The %s was not varied in this experiment (every run: %s).", ax.label, ax.word(c.runs[0]))
		return ch
	}
	c.overAxis(&ch, ax, mean("epoch_s", 1))
	return ch
}

// overAxis fills ch with one line per variant (and value of the other
// varying axes) across the values of ax. A numeric axis whose values are
// all positive (memory limit, dimension, batch size) is drawn to scale in
// real units, on a log₂ axis where the values double (axisScale); with
// "no limit" among the memory limits the values become categories in
// numeric order.
func (c *Comparison) overAxis(ch *Chart, ax gridAxis, f func(RunData) (float64, bool)) {
	type val struct {
		n float64
		t string
	}
	var vals []val
	seen := map[string]bool{}
	for _, r := range c.runs {
		if t := ax.word(r); !seen[t] {
			seen[t] = true
			vals = append(vals, val{ax.value(r), t})
		}
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i].n < vals[j].n })
	ch.Dodge = true
	if ax.key == "mem_limit" {
		ch.XFormat, ch.XUnit = "bytes", "bytes"
	}
	numeric := ax.key == "mem_limit" || ax.key == "dim" || ax.key == "batch_size"
	nums := make([]float64, len(vals))
	for i, v := range vals {
		nums[i] = v.n
		if math.IsInf(v.n, 0) || v.n <= 0 {
			numeric = false
		}
	}
	if numeric {
		ch.Categories = nil
		ch.XType, ch.XLogBase = axisScale(nums)
		ch.Series = c.seriesOver(func(r RunData) (float64, string) { return ax.value(r), ax.word(r) }, ax.key, f)
		return
	}
	index := map[string]int{}
	ch.Categories = nil
	for i, v := range vals {
		ch.Categories = append(ch.Categories, v.t)
		index[v.t] = i
	}
	ch.XType, ch.XLogBase = "category", 0
	ch.Series = c.seriesOver(func(r RunData) (float64, string) {
		t := ax.word(r)
		return float64(index[t]), t
	}, ax.key, f)
	for si := range ch.Series {
		for pi := range ch.Series[si].Points {
			p := &ch.Series[si].Points[pi]
			if n := vals[int(p.X)].n; !math.IsInf(n, 0) && n > 0 {
				p.XReal = &n
			}
		}
	}
}

// axisScale picks a value axis for sorted positive values: log₂ when each
// value is at least 1.5 times the one before (limits that double, 25/50/100%
// shares), linear otherwise.
func axisScale(sorted []float64) (xtype string, base float64) {
	if len(sorted) < 2 {
		return "value", 0
	}
	for i := 1; i < len(sorted); i++ {
		if sorted[i] < 1.5*sorted[i-1] {
			return "value", 0
		}
	}
	return "log", 2
}

// seriesOver groups runs into one series per variant and value of the
// varying axes other than exclude, placing each run at x(r).
func (c *Comparison) seriesOver(x func(RunData) (float64, string), exclude string, f func(RunData) (float64, bool)) []Series {
	type key struct{ variant, rest string }
	cells := map[key]map[float64]*cell{}
	var keys []key
	for _, r := range c.runs {
		k := key{r.System, c.cellLabel(r, exclude)}
		m := cells[k]
		if m == nil {
			m = map[float64]*cell{}
			cells[k] = m
			keys = append(keys, k)
		}
		xv, xl := x(r)
		cl := m[xv]
		if cl == nil {
			cl = &cell{x: xv, label: xl}
			m[xv] = cl
		}
		cl.runs = append(cl.runs, r)
	}
	var out []Series
	perVariant := map[string]int{}
	for _, k := range keys {
		name := k.variant
		if k.rest != "" {
			name += " · " + k.rest
		}
		col, mk := c.seriesStyle(k.variant)
		s := Series{Name: name, Color: col, Marker: mk, Dash: perVariant[k.variant] % 4}
		perVariant[k.variant]++
		for _, cl := range cells[k] {
			s.Points = append(s.Points, aggregate(cl, f))
		}
		sortPoints(s.Points)
		out = append(out, s)
	}
	return out
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

// perCell is a grouped bar chart: categories are grid points, one bar per variant.
func (c *Comparison) perCell(id, title, ylabel, ref string, f func(RunData) (float64, bool)) Chart {
	ch := Chart{ID: id, Title: title, XLabel: "grid point", YLabel: ylabel, XType: "category", YType: "value", Kind: "bar",
		Note: "Steady epochs of each run averaged, then the mean over repeated runs; error bars ± one sample standard deviation; n in the tooltip and CSV. After " + ref + "."}
	if len(c.runs) == 0 {
		ch.Empty = "No runs yet."
		return ch
	}
	cats, idx := c.cellCategories()
	ch.Categories = cats
	ch.Series = c.seriesByVariant(cats, idx, f)
	return ch
}

// seriesByVariant makes one series per variant over category indexes.
func (c *Comparison) seriesByVariant(cats []string, idx func(RunData) int, f func(RunData) (float64, bool)) []Series {
	var out []Series
	for _, v := range c.variants {
		col, mk := c.seriesStyle(v)
		s := Series{Name: v, Color: col, Marker: mk}
		cells := map[int]*cell{}
		for _, r := range c.runs {
			if r.System != v {
				continue
			}
			i := idx(r)
			if cells[i] == nil {
				cells[i] = &cell{x: float64(i), label: cats[i]}
			}
			cells[i].runs = append(cells[i].runs, r)
		}
		for _, cl := range cells {
			s.Points = append(s.Points, aggregate(cl, f))
		}
		sortPoints(s.Points)
		out = append(out, s)
	}
	return out
}

// normalised is runtime relative to a baseline variant at each grid point (DiskGNN Fig. 8).
func (c *Comparison) normalised(baseline string) Chart {
	if !contains(c.variants, baseline) && len(c.variants) > 0 {
		baseline = c.variants[0]
	}
	title := "Runtime normalised to " + baseline
	if baseline == "" {
		title = "Runtime normalised to a baseline variant"
	}
	ch := Chart{ID: "normalised", Title: title, XLabel: "grid point",
		YLabel: "epoch time / " + baseline + " epoch time", XType: "category", YType: "value", Kind: "bar",
		Note: "Each variant's mean epoch time divided by the baseline's mean epoch time at the same grid point (1 = as fast as " + baseline + ", below 1 = faster); error bars ± the variant's standard deviation divided by the baseline mean; n = the variant's runs. No bar where the baseline or the variant has no measurement (OOM, failed). After DiskGNN Fig. 8."}
	if len(c.runs) == 0 {
		ch.Empty = "No runs yet."
		return ch
	}
	cats, idx := c.cellCategories()
	ch.Categories = cats
	base := map[int]float64{}
	for _, s := range c.seriesByVariant(cats, idx, mean("epoch_s", 1)) {
		if s.Name != baseline {
			continue
		}
		for _, p := range s.Points {
			if p.Y != nil && *p.Y > 0 {
				base[int(p.X)] = *p.Y
			}
		}
	}
	for _, s := range c.seriesByVariant(cats, idx, mean("epoch_s", 1)) {
		for i := range s.Points {
			p := &s.Points[i]
			b, ok := base[int(p.X)]
			if p.Y == nil {
				continue
			}
			if !ok {
				p.Y = nil
				p.Status = StatusNoBaseline
				p.Detail = "no " + baseline + " measurement at this grid point"
				continue
			}
			y := *p.Y / b
			p.Y, p.SD, p.Min, p.Max = &y, p.SD/b, p.Min/b, p.Max/b
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// stacked makes a stacked-bar chart, one bar per variant and grid point,
// one layer per (name, f).
func (c *Comparison) stacked(ch Chart, layers []string, f func(layer string) func(RunData) (float64, bool)) Chart {
	if len(c.runs) == 0 {
		ch.Empty = "No runs yet."
		return ch
	}
	cats, cells := c.variantCellRuns()
	ch.Categories = cats
	for i, name := range layers {
		col, mk := style(i + 1)
		s := Series{Name: name, Color: col, Marker: mk, Stack: ch.ID}
		for _, cl := range cells {
			if cl != nil {
				s.Points = append(s.Points, aggregate(cl, f(name)))
			}
		}
		sortPoints(s.Points)
		ch.Series = append(ch.Series, s)
	}
	if e := c.onlyLegacy(); e != "" {
		ch.Empty = e
	}
	return ch
}

// diskReadKind is the device reads per epoch by file kind: features,
// topology and the rest (DiskGNN Table 1, split as DESIGN §5 measures it).
func (c *Comparison) diskReadKind() Chart {
	ch := Chart{ID: "disk-read-kind", Title: "Disk read per epoch by file kind", XLabel: "variant · grid point", YLabel: "MiB read from the device per epoch",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Bytes read from the block device per steady epoch: feature files (features.bin and a variant's own copies of feature rows), topology files (indices, a neighbour cache on disk) and the rest of the process's reads (runtime files and others), mean over repeated runs ± one standard deviation per layer; n in the tooltip and CSV. Direct I/O is counted exactly; memory-mapped files by the page-fault reads of the threads that touch them (DESIGN §5). After DiskGNN Table 1." + legacyNote}
	key := map[string]string{"features": "feature_bytes_read", "topology": "topology_bytes_read", "other": "other_bytes_read"}
	return c.stacked(ch, []string{"features", "topology", "other"}, func(l string) func(RunData) (float64, bool) {
		return measuredMean(key[l], 1.0/(1<<20))
	})
}

// workerTime is the busy and wait worker-seconds of the sampling and
// extracting stages per epoch (DESIGN §5).
func (c *Comparison) workerTime() Chart {
	ch := Chart{ID: "worker-time", Title: "Sampler and extractor time: busy and waiting", XLabel: "variant · grid point", YLabel: "worker-seconds per epoch",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Worker-seconds per steady epoch of the sampling and extracting stages, summed over each stage's workers (sampling goroutines, extractors, gather threads): busy is their CPU time, wait the rest of the time they belonged to the stage — blocked on queues, on the device, on another worker's reads, or runnable without a core (DESIGN §5). Mean over repeated runs ± one standard deviation per layer." + legacyNote}
	key := map[string]string{"sample busy": "sample_busy_s", "sample wait": "sample_wait_s", "extract busy": "extract_busy_s", "extract wait": "extract_wait_s"}
	return c.stacked(ch, []string{"sample busy", "sample wait", "extract busy", "extract wait"}, func(l string) func(RunData) (float64, bool) {
		return measuredMean(key[l], 1)
	})
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

// hitRatio is the share of feature lookups served from memory without a
// device read in the epoch (DESIGN §5): hits summed over the memory tiers
// (GPU, CPU) divided by the lookups of the tier that sees every lookup (the
// largest count). Disk-resident tiers are not hits.
func hitRatio(r RunData) (float64, bool) { return r.Digest.HitRatio() }

// hitVsMem is the overall cache hit ratio against the memory limit, one line per variant (Ginex Fig. 5, GIDS Fig. 11).
func (c *Comparison) hitVsMem() Chart {
	ch := Chart{ID: "hit-vs-mem", Title: "Cache hit ratio vs memory limit", XLabel: "memory limit", YLabel: "hit ratio",
		XType: "category", YType: "value", Kind: "line",
		Note: "Feature lookups served from memory (the GPU and CPU tiers) over all lookups; rows of disk-resident tiers (DiskGNN's disk cache and packed chunks, MariusGNN's partition buffer) were read from the device in the epoch and are not hits. Steady epochs; mean over repeated runs, error bars ± one standard deviation; ✕ = OOM. Variants without a feature cache have no points. After Ginex Fig. 5 and GIDS Fig. 11."}
	if len(c.runs) == 0 {
		ch.Empty = "No runs yet."
		return ch
	}
	c.overAxis(&ch, axisByKey("mem_limit"), hitRatio)
	return ch
}

// tierOrder is the display order of cache tiers.
var tierOrder = []string{metrics.TierGPU, metrics.TierCPU, metrics.TierDiskCache, metrics.TierPacked, metrics.TierPartition, metrics.TierDevice}

// tierHits is each tier's hit ratio per variant and grid point.
func (c *Comparison) tierHits() Chart {
	ch := Chart{ID: "tier-hits", Title: "Hit ratio per cache tier", XLabel: "variant · grid point", YLabel: "hits / lookups at the tier",
		XType: "category", YType: "value", Kind: "bar",
		Note: "For each tier, the lookups that reached it and were served there (hits / lookups), steady epochs, mean over repeated runs ± one standard deviation. The device tier counts rows read from the block device for the batch; the disk-resident tiers (disk cache, packed chunks, partition buffer) serve rows read from the variant's own files in the epoch and are shown as their own tiers."}
	if len(c.runs) == 0 {
		ch.Empty = "No runs yet."
		return ch
	}
	present := map[string]bool{}
	for _, r := range c.runs {
		if r.Digest != nil {
			for t := range r.Digest.Tiers {
				present[t] = true
			}
		}
	}
	var tiers []string
	for _, t := range tierOrder {
		if present[t] {
			tiers = append(tiers, t)
			delete(present, t)
		}
	}
	var rest []string
	for t := range present {
		rest = append(rest, t)
	}
	sort.Strings(rest)
	tiers = append(tiers, rest...)
	if len(tiers) == 0 {
		ch.Empty = "No run has reported cache tiers yet."
		return ch
	}
	cats, cells := c.variantCellRuns()
	ch.Categories = cats
	for i, tier := range tiers {
		col, mk := style(i + 1)
		s := Series{Name: tier, Color: col, Marker: mk}
		t := tier
		for _, cl := range cells {
			if cl == nil {
				continue
			}
			s.Points = append(s.Points, aggregate(cl, func(r RunData) (float64, bool) {
				if r.Digest == nil || r.Digest.Tiers[t].Lookups == 0 {
					return 0, false
				}
				tc := r.Digest.Tiers[t]
				return float64(tc.Hits) / float64(tc.Lookups), true
			}))
		}
		sortPoints(s.Points)
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// timeToAccuracy is validation accuracy against wall-clock time (GNNDrive
// Fig. 14): one line per variant and grid point, each point an epoch —
// its mean wall-clock time and mean validation accuracy over the repeated
// runs that reached it, error bars ± one standard deviation of the accuracy.
func (c *Comparison) timeToAccuracy() Chart {
	ch := Chart{ID: "time-to-accuracy", Title: "Time to accuracy", XLabel: "time since run start (s)", YLabel: "validation accuracy",
		XType: "value", YType: "value", Kind: "line",
		Note: "Validation accuracy after each epoch against the wall-clock time at the end of that epoch (evaluation included); each point is the mean over the repeated runs that reached that epoch (x: mean time, y: mean accuracy, error bars ± one standard deviation of the accuracy, n in the tooltip and CSV). OOM runs are left out. After GNNDrive Fig. 14."}
	type group struct {
		variant, name string
		runs          []RunData
	}
	var groups []*group
	byName := map[string]*group{}
	for _, r := range c.runs { // in variant, then grid order
		if r.Digest == nil || r.Status == RunOOM {
			continue
		}
		name := r.System
		if l := c.cellLabel(r); l != "" {
			name += " · " + l
		}
		g := byName[name]
		if g == nil {
			g = &group{variant: r.System, name: name}
			byName[name] = g
			groups = append(groups, g)
		}
		g.runs = append(g.runs, r)
	}
	perVariant := map[string]int{}
	for _, g := range groups {
		col, mk := c.seriesStyle(g.variant)
		s := Series{Name: g.name, Color: col, Marker: mk, Dash: perVariant[g.variant] % 4}
		perVariant[g.variant]++
		for k := 0; ; k++ {
			var walls, accs []float64
			var ids []int64
			epoch := 0
			for _, r := range g.runs {
				if k < len(r.Digest.Curve) {
					p := r.Digest.Curve[k]
					walls, accs, ids, epoch = append(walls, p.WallS), append(accs, p.ValAcc), append(ids, r.ID), p.Epoch
				}
			}
			if len(accs) == 0 {
				break
			}
			pt := point(summarise(walls).mean, fmt.Sprintf("epoch %d", epoch), accs)
			pt.Runs = ids
			s.Points = append(s.Points, pt)
		}
		ch.Series = append(ch.Series, s)
	}
	if len(ch.Series) == 0 {
		ch.Empty = "No epoch has finished yet."
	}
	return ch
}

// accuracy is the test accuracy at each run's best validation epoch, per
// variant and grid point (DiskGNN Table 3); AccuracyRows gives the table.
func (c *Comparison) accuracy() Chart {
	ch := Chart{ID: "accuracy", Title: "Test accuracy at the best validation epoch", XLabel: "grid point", YLabel: "test accuracy",
		XType: "category", YType: "value", Kind: "bar",
		Note: "Each run's test accuracy at the epoch of its best validation accuracy; mean over repeated runs ± one standard deviation, n runs. MariusGNN samples only inside buffered partitions, so lower accuracy there is expected. After DiskGNN Table 3."}
	if len(c.runs) == 0 {
		ch.Empty = "No runs yet."
		return ch
	}
	cats, idx := c.cellCategories()
	ch.Categories = cats
	ch.Series = c.seriesByVariant(cats, idx, func(r RunData) (float64, bool) { _, t, ok := bestAcc(r); return t, ok })
	return ch
}

// AccuracyRow is one line of the accuracy table: a variant at a grid point.
type AccuracyRow struct {
	Variant, Cell string
	Val, Test     Point // best validation accuracy and test accuracy at that epoch
	Epochs        Point // epochs run
}

// AccuracyRows is the accuracy table (DiskGNN Table 3), variants then grid points.
func (c *Comparison) AccuracyRows() []AccuracyRow {
	cats, idx := c.cellCategories()
	val := c.seriesByVariant(cats, idx, func(r RunData) (float64, bool) { v, _, ok := bestAcc(r); return v, ok })
	test := c.seriesByVariant(cats, idx, func(r RunData) (float64, bool) { _, t, ok := bestAcc(r); return t, ok })
	eps := c.seriesByVariant(cats, idx, func(r RunData) (float64, bool) {
		if r.Digest != nil {
			return float64(r.Digest.Epochs), true
		}
		return float64(r.EpochsDone), true
	})
	var rows []AccuracyRow
	for i := range val {
		for j, p := range val[i].Points {
			rows = append(rows, AccuracyRow{Variant: val[i].Name, Cell: p.Label, Val: p, Test: test[i].Points[j], Epochs: eps[i].Points[j]})
		}
	}
	return rows
}

// bestAcc is a run's best validation accuracy and the test accuracy at that
// epoch (the first such epoch on ties), from its epochs or else from the
// store's aggregates.
func bestAcc(r RunData) (val, test float64, ok bool) {
	if !Trains(r.Compute) {
		return 0, 0, false // no model was trained: n/a
	}
	if r.Digest != nil {
		return r.Digest.BestVal, r.Digest.TestAtBest, true
	}
	if r.BestVal != nil && r.TestAt != nil {
		return *r.BestVal, *r.TestAt, true
	}
	return 0, 0, false
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
