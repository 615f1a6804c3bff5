package report

import (
	"fmt"
	"math"
	"sort"
)

// versus is "epoch time vs <axis>": one line per variant (and per value of
// the other varying axes), mean ± sd over repeats, OOM and failed cells marked.
func (c *Comparison) versus(axisKey, id, title, ref string) Chart {
	ax := axisByKey(axisKey)
	ch := Chart{ID: id, Title: title, XLabel: ax.label, YLabel: "epoch time (s)", YUnit: "s", XType: "category", YType: "value", Kind: "line",
		Note: "Mean epoch time of the steady (non-warm-up) epochs of each run; points are the mean over repeated runs, error bars ± one sample standard deviation, n runs per point in the tooltip and CSV. ✕ marks a cell where every run ran out of memory (OOM), ! where runs failed. After " + ref + "."}
	if c.noRuns(&ch) {
		return ch
	}
	if !c.Varies(axisKey) {
		ch.Empty = fmt.Sprintf("The %s was not varied in this experiment (every run: %s).", ax.label, ax.word(c.runs[0]))
		return ch
	}
	c.overAxis(&ch, ax, mean("epoch_s", 1))
	if axisKey == "mem_limit" {
		ch.XLabel, ch.Note = MemAxisLabel, ch.Note+" "+MemAxisNote
	}
	return ch
}

// MemAxisLabel and MemAxisNote name what a memory-limit axis plots: the
// host budget (mem_limit), not the cgroup limit in force, which is larger
// where the run held its model step or GPU tiers beside the budget.
const (
	MemAxisLabel = "memory limit (host budget)"
	MemAxisNote  = "The memory axis is each run's host budget (mem_limit). Where a run held its CPU model step or GPU tiers beside it, its cgroup's limit in force was larger: runs.csv has both (mem_limit_bytes, cgroup_limit_bytes) and the run page names both."
)

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

// perCell is a grouped bar chart: categories are grid points, one bar per variant.
func (c *Comparison) perCell(id, title, ylabel, ref string, f func(RunData) (float64, bool)) Chart {
	ch := Chart{ID: id, Title: title, XLabel: "grid point", YLabel: ylabel, XType: "category", YType: "value", Kind: "bar",
		Note: "Steady epochs of each run averaged, then the mean over repeated runs; error bars ± one sample standard deviation; n in the tooltip and CSV. After " + ref + "."}
	if c.noRuns(&ch) {
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

// stacked makes a stacked-bar chart, one bar per variant and grid point,
// one layer per (name, f).
func (c *Comparison) stacked(ch Chart, layers []string, f func(layer string) func(RunData) (float64, bool)) Chart {
	if c.noRuns(&ch) {
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
