package report

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"outcore/engine/vocab"
)

// Chart is one comparison view: the data behind an ECharts chart in the
// browser, a tidy CSV download and a server-rendered SVG/PDF figure. It
// says what it shows in words (Note) so a figure carries n and the spread.
type Chart struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	// XType is "category", "value" or "log"; YType "value" or "log".
	XType string `json:"x_type"`
	YType string `json:"y_type"`
	// Kind is "line" (points joined per series), "bar" (grouped bars),
	// "stack" (stacked bars) or "scatter".
	Kind       string   `json:"kind"`
	Categories []string `json:"categories,omitempty"` // x labels when XType is "category"
	Series     []Series `json:"series"`
	Note       string   `json:"note"`            // what the marks mean: statistic, spread, n
	Empty      string   `json:"empty,omitempty"` // why there is nothing to draw, when so
	// XFormat tells the browser how to label x values: "bytes" or "" (plain).
	XFormat string `json:"x_format,omitempty"`
	// XUnit is the unit of the x values in the CSV ("bytes", "s", "epoch",
	// "" for a count or a category without one).
	XUnit string `json:"x_unit,omitempty"`
	// XLogBase is the base of a log x axis (XType "log"): 2 where memory
	// limits double.
	XLogBase float64 `json:"x_log_base,omitempty"`
	// YUnit is the unit of the y values: "s" (a time), "MiB" (a size in
	// mebibytes, ticked at binary steps), or "" (a ratio, a count, a share).
	YUnit string `json:"y_unit,omitempty"`
	// Dodge asks the figures (SVG, PDF) to shift each whole series — line,
	// markers and error bars together — a little sideways so that series
	// sharing an x (a grid value) do not hide each other's markers. The
	// dashboard draws every mark at its value instead (a marker on its
	// line, where the axis says) and names the series sharing a point in
	// its tooltip.
	Dodge bool `json:"dodge,omitempty"`
}

// LogAxes are the axes ("x", "y") a viewer may switch to a log scale: the
// time axes (unit "s") on a numeric scale. A y axis qualifies only on a
// line or scatter chart: bars and stacks measure lengths from zero, which a
// log axis does not have.
func (ch Chart) LogAxes() []string {
	var out []string
	if ch.XUnit == "s" && ch.XType != "category" {
		out = append(out, "x")
	}
	if ch.YUnit == "s" && (ch.Kind == "line" || ch.Kind == "scatter") {
		out = append(out, "y")
	}
	return out
}

// MarshalJSON writes the chart with its log_axes (LogAxes), so the
// browser offers a log toggle exactly where this package allows one.
func (ch Chart) MarshalJSON() ([]byte, error) {
	type plain Chart
	return json.Marshal(struct {
		plain
		LogAxes []string `json:"log_axes,omitempty"`
	}{plain(ch), ch.LogAxes()})
}

// Series is one line, bar group or stack layer.
type Series struct {
	Name   string `json:"name"`
	Color  string `json:"color"`  // Okabe–Ito colour (colour-blind safe)
	Marker string `json:"marker"` // shape name; ECharts symbol and gonum glyph agree on it
	Stack  string `json:"stack,omitempty"`
	// Parent names the stage a nested stage layer is part of ("" for a
	// top-level layer): the layer is a share of its parent, stacked in
	// the parent's place, never beside it (DESIGN §6).
	Parent string `json:"parent,omitempty"`
	// Role is "marker" for a series drawn as a mark on each bar of a
	// stacked chart (the epoch time), not stacked; "" otherwise.
	Role string `json:"role,omitempty"`
	// Dash tells apart series sharing a variant's colour: 0 solid, 1 dashed, 2 dotted, 3 dash-dot.
	Dash   int     `json:"dash,omitempty"`
	Points []Point `json:"points"`
}

// Point is one observation of a series, aggregated over repeated runs.
// Y is nil where there is no value (out of memory, failed, not run yet);
// Status says which.
type Point struct {
	X      float64  `json:"x"`     // value on a numeric x axis, or category index
	Label  string   `json:"label"` // the x value in words ("512 MiB", or a variant's name)
	Y      *float64 `json:"y"`     // mean over the runs that produced a value
	SD     float64  `json:"sd"`    // sample standard deviation (0 when n < 2)
	Min    float64  `json:"min"`
	Max    float64  `json:"max"`
	N      int      `json:"n"`                // runs (or epochs) behind Y
	Status string   `json:"status"`           // "ok", "oom", "failed", "cancelled", "interrupted", "pending", "partial", "none"
	Detail string   `json:"detail,omitempty"` // e.g. "1 of 3 runs OOM"
	Runs   []int64  `json:"runs,omitempty"`
	// XReal is x in real units where X is a category index (a memory
	// limit in bytes, a dimension); nil where the category has none.
	XReal *float64 `json:"-"`
	// Cell is the grid point the value belongs to, for the CSV.
	Cell *Cell `json:"-"`
}

// Cell is a grid point in real units: the variant and the grid axes.
type Cell struct {
	Variant  string
	MemLimit int64 // bytes; 0 = no limit
	Dim      int
	Batch    int
	Model    string
	Fanout   string
}

// Point statuses.
const (
	StatusOK     = "ok"
	StatusOOM    = "oom"
	StatusFailed = "failed"
	// StatusCancelled: every run of the cell that gave no value was
	// cancelled by a person; not a failure of the variant.
	StatusCancelled = "cancelled"
	// StatusInterrupted: the server stopped while the runs ran.
	StatusInterrupted = "interrupted"
	StatusPending     = "pending"
	StatusPartial     = "partial" // some runs gave a value, others OOM, failed or stopped
	// StatusNoBaseline: a normalised value is missing because the baseline has none there.
	StatusNoBaseline = "no-baseline"
	// StatusUnmeasured: the cell's runs were recorded before the metric
	// existed (metrics version 1, DESIGN §5).
	StatusUnmeasured = "unmeasured"
	// StatusNone: the series has no such value at this x (a stage the
	// variant does not have); renderers draw nothing and the CSV leaves
	// the row out.
	StatusNone = "none"
)

// okabeIto is the Okabe–Ito palette (Okabe & Ito 2008) with a neutral grey
// added before yellow, which is faint on white and so comes last.
var okabeIto = []string{"#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#7F7F7F", "#F0E442"}

// markers pair with colours so series stay apart in greyscale prints.
var markers = []string{"circle", "triangle", "rect", "diamond", "cross", "plus", "ring", "square", "circle"}

// VariantOrder fixes each variant's colour and marker across every chart
// and figure: the registered variants in their display order
// (vocab.Variant.Order, the papers' order, the reference last).
func VariantOrder() []string {
	vs := vocab.Variants()
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return names
}

// style returns the colour and marker of the i-th distinct series: the
// palette, then its tints (half-way to white), so up to 18 series differ.
// Black's tint would be the palette's grey, so it takes a darker grey.
func style(i int) (string, string) {
	col := okabeIto[i%len(okabeIto)]
	if (i/len(okabeIto))%2 == 1 {
		col = tint(col)
		if col == "#7F7F7F" {
			col = "#4D4D4D"
		}
	}
	return col, markers[i%len(markers)]
}

// shade mixes a #rrggbb colour with black (f < 0) or white (f > 0) by |f|.
func shade(hex string, f float64) string {
	v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil {
		return hex
	}
	mix := func(c uint64) uint64 {
		x := float64(c)
		if f < 0 {
			x *= 1 + f
		} else {
			x += (255 - x) * f
		}
		return uint64(math.Round(x))
	}
	r, g, b := mix(v>>16&0xff), mix(v>>8&0xff), mix(v&0xff)
	return fmt.Sprintf("#%02X%02X%02X", r, g, b)
}

// tint mixes a #rrggbb colour half-way with white.
func tint(hex string) string {
	v, err := strconv.ParseUint(hex[1:], 16, 32)
	if err != nil {
		return hex
	}
	mix := func(c uint64) uint64 { return (c + 255) / 2 }
	r, g, b := mix(v>>16&0xff), mix(v>>8&0xff), mix(v&0xff)
	return fmt.Sprintf("#%02X%02X%02X", r, g, b)
}

// variantIndex is the variant's fixed style index; unknown names follow the known ones.
func variantIndex(v string, others []string) int {
	order := VariantOrder()
	for i, name := range order {
		if name == v {
			return i
		}
	}
	for i, name := range others {
		if name == v {
			return len(order) + i
		}
	}
	return len(order)
}

// stats summarises repeated observations.
type stats struct {
	n        int
	mean, sd float64
	min, max float64
}

func summarise(xs []float64) stats {
	s := stats{n: len(xs)}
	if s.n == 0 {
		return s
	}
	s.min, s.max = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		s.mean += x
		s.min = math.Min(s.min, x)
		s.max = math.Max(s.max, x)
	}
	s.mean /= float64(s.n)
	if s.n > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.mean) * (x - s.mean)
		}
		s.sd = math.Sqrt(ss / float64(s.n-1))
	}
	return s
}

// point builds a Point from observations; an empty set gives Y nil.
func point(x float64, label string, xs []float64) Point {
	p := Point{X: x, Label: label, Status: StatusOK}
	st := summarise(xs)
	p.N = st.n
	if st.n > 0 {
		m := st.mean
		p.Y, p.SD, p.Min, p.Max = &m, st.sd, st.min, st.max
	}
	return p
}

// sortPoints orders a series' points by x.
func sortPoints(ps []Point) {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].X < ps[j].X })
}
