package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure formats the server renders.
const (
	FigureSVG = "svg"
	FigurePDF = "pdf"
)

// ErrNoData is returned when a chart has nothing to draw.
var ErrNoData = errors.New("chart has no data")

// figure size for a one-column publication figure with its legend below.
const (
	figureWidth  = 7 * vg.Inch
	figureHeight = 4.6 * vg.Inch
)

// RenderFigure draws ch as a publication figure (SVG or PDF) with gonum/plot:
// Okabe–Ito colours with a distinct marker per series, error bars of ± one
// standard deviation, OOM and failed cells written on the plot, and n and
// the spread stated under the title.
func RenderFigure(ch Chart, format string, w io.Writer) error {
	if format != FigureSVG && format != FigurePDF {
		return fmt.Errorf("figure format %q: want svg or pdf", format)
	}
	if ch.Empty != "" {
		return fmt.Errorf("%s: %w: %s", ch.ID, ErrNoData, ch.Empty)
	}
	if len(ch.Series) == 0 {
		return fmt.Errorf("%s: %w", ch.ID, ErrNoData)
	}
	p := plot.New()
	p.Title.Text = ch.Title + "\n" + figureSubtitle(ch)
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = ch.XLabel
	p.Y.Label.Text = ch.YLabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())

	var err error
	switch ch.Kind {
	case "bar", "stack":
		err = addBars(p, ch)
	default:
		err = addLines(p, ch)
	}
	if err != nil {
		return fmt.Errorf("figure %s: %w", ch.ID, err)
	}
	if ch.XType == "category" {
		p.NominalX(ch.Categories...)
		if len(ch.Categories) > 4 {
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
		}
		p.X.Min, p.X.Max = -0.6, float64(len(ch.Categories))-0.4
	}
	// Head room for the legend, which sits inside the plot's top right.
	p.Y.Max += (p.Y.Max - p.Y.Min) * 0.06 * float64(len(ch.Series)+1)
	wt, err := p.WriterTo(figureWidth, figureHeight, format)
	if err != nil {
		return fmt.Errorf("figure %s: %w", ch.ID, err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("write figure %s: %w", ch.ID, err)
	}
	return nil
}

// figureSubtitle states the statistic, the spread and the range of n.
func figureSubtitle(ch Chart) string {
	lo, hi := math.MaxInt, 0
	oom := false
	for _, s := range ch.Series {
		for _, pt := range s.Points {
			if pt.Y != nil {
				lo, hi = min(lo, pt.N), max(hi, pt.N)
			}
			if pt.Status == StatusOOM {
				oom = true
			}
		}
	}
	n := "n = " + strconv.Itoa(hi)
	if lo < hi {
		n = fmt.Sprintf("n = %d–%d", lo, hi)
	}
	if hi == 0 {
		n = "n = 0"
	}
	s := "mean ± 1 s.d. over repeated runs, " + n + " runs per point"
	if oom {
		s += "; OOM = out of memory"
	}
	return s
}

func hexColor(s string) color.Color {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	if err != nil {
		return color.Black
	}
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// glyph maps a marker name to a gonum glyph.
func glyph(name string) draw.GlyphDrawer {
	switch name {
	case "triangle":
		return draw.TriangleGlyph{}
	case "rect", "square":
		return draw.SquareGlyph{}
	case "diamond":
		return draw.PyramidGlyph{}
	case "cross":
		return draw.CrossGlyph{}
	case "plus":
		return draw.PlusGlyph{}
	case "ring":
		return draw.RingGlyph{}
	}
	return draw.CircleGlyph{}
}

// addLines draws each series as a line with markers and error bars; cells
// without a value get their status written at the series' position.
func addLines(p *plot.Plot, ch Chart) error {
	marks := &cellMarks{style: p.X.Tick.Label}
	legend := map[string]bool{}
	for _, s := range ch.Series {
		col := hexColor(s.Color)
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, pt := range s.Points {
			if pt.Y == nil {
				if w := statusWord(pt.Status); w != "" {
					marks.add(pt.X, 0, col, w)
				}
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: *pt.Y})
			errs = append(errs, struct{ Low, High float64 }{pt.SD, pt.SD})
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.Color = col
		line.Width = vg.Points(1.2)
		line.Dashes = dashes(s.Dash)
		points.Color = col
		points.Shape = glyph(s.Marker)
		points.Radius = vg.Points(3)
		p.Add(line, points)
		{
			eb, err := plotter.NewYErrorBars(errorXYs{xys, errs})
			if err != nil {
				return err
			}
			eb.Color = col
			p.Add(eb)
		}
		if !legend[s.Name] {
			legend[s.Name] = true
			p.Legend.Add(s.Name, line, points)
		}
	}
	if len(marks.items) > 0 {
		p.Add(marks)
	}
	return nil
}

// addBars draws grouped (or stacked) bars with error bars.
func addBars(p *plot.Plot, ch Chart) error {
	nCat := len(ch.Categories)
	if nCat == 0 {
		return ErrNoData
	}
	var layers []Series
	var markSeries []Series
	for _, s := range ch.Series {
		if s.Role == "marker" {
			markSeries = append(markSeries, s)
		} else {
			layers = append(layers, s)
		}
	}
	groups := len(layers)
	if ch.Kind == "stack" {
		groups = 1
	}
	// The plot area is about 6 inches wide; leave a fifth of each category empty.
	width := vg.Length(float64(6*vg.Inch) * 0.8 / float64(nCat*groups))
	width = min(width, vg.Points(28))
	marks := &cellMarks{style: p.X.Tick.Label}
	var below *plotter.BarChart
	stackBase := make([]float64, nCat)
	for i, s := range layers {
		vals := make(plotter.Values, nCat)
		eb := &offsetErrBars{}
		col := hexColor(s.Color)
		offset := vg.Length(0)
		if ch.Kind != "stack" {
			offset = width * vg.Length(float64(i)-float64(groups-1)/2)
		}
		for _, pt := range s.Points {
			j := int(pt.X)
			if j < 0 || j >= nCat {
				continue
			}
			if pt.Y == nil {
				if w := statusWord(pt.Status); w != "" && ch.Kind != "stack" {
					marks.addAt(pt.X, 0, offset, col, w)
				} else if w != "" && i == 0 {
					marks.add(pt.X, 0, color.Black, w) // once per stacked bar
				}
				continue
			}
			vals[j] = *pt.Y
			base := 0.0
			if ch.Kind == "stack" {
				base = stackBase[j]
			}
			eb.add(pt.X, base+*pt.Y, pt.SD, offset, col)
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		bars.Color = col
		bars.LineStyle.Width = vg.Points(0.5)
		bars.LineStyle.Color = color.Gray{Y: 60}
		bars.Offset = offset
		if ch.Kind == "stack" {
			if below != nil {
				bars.StackOn(below)
			}
			below = bars
			for j, v := range vals {
				stackBase[j] += v
			}
		}
		p.Add(bars)
		p.Add(eb)
		p.Legend.Add(s.Name, bars)
	}
	if len(marks.items) > 0 {
		p.Add(marks)
	}
	for _, s := range markSeries {
		bm := &barMarks{width: width * 1.3, col: hexColor(s.Color)}
		for _, pt := range s.Points {
			if pt.Y != nil {
				bm.x, bm.y = append(bm.x, pt.X), append(bm.y, *pt.Y)
			}
		}
		p.Add(bm)
		p.Legend.Add(s.Name, bm)
	}
	return nil
}

// barMarks draws a short thick horizontal line across each bar at a value
// (the epoch time on a stacked stage bar).
type barMarks struct {
	x, y  []float64
	width vg.Length
	col   color.Color
}

// Plot implements plot.Plotter.
func (m *barMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: m.col, Width: vg.Points(2)}
	for i := range m.x {
		x, y := trX(m.x[i]), trY(m.y[i])
		c.StrokeLine2(sty, x-m.width/2, y, x+m.width/2, y)
	}
}

// DataRange implements plot.DataRanger.
func (m *barMarks) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for i := range m.x {
		xmin, xmax, ymax = math.Min(xmin, m.x[i]), math.Max(xmax, m.x[i]), math.Max(ymax, m.y[i])
	}
	if len(m.x) == 0 {
		xmin, xmax = 0, 0
	}
	return
}

// Thumbnail implements plot.Thumbnailer for the legend.
func (m *barMarks) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(draw.LineStyle{Color: m.col, Width: vg.Points(2)}, c.Min.X, y, c.Max.X, y)
}

// statusWord is what a figure writes where a cell has no value ("" = nothing).
func statusWord(s string) string {
	switch s {
	case StatusOOM:
		return "OOM"
	case StatusFailed:
		return "failed"
	case StatusCancelled:
		return "cancelled"
	case StatusInterrupted:
		return "interrupted"
	case StatusNoBaseline, StatusUnmeasured:
		return "n/a"
	}
	return ""
}

// dashes maps a series' dash index to a gonum dash pattern.
func dashes(i int) []vg.Length {
	switch i {
	case 1:
		return []vg.Length{vg.Points(5), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(1.5), vg.Points(2)}
	case 3:
		return []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}
	}
	return nil
}

// errorXYs joins points and their errors for plotter.NewYErrorBars.
type errorXYs struct {
	plotter.XYs
	plotter.YErrors
}

// offsetErrBars draws error bars shifted sideways by a bar's offset (bar
// offsets are in page units, so plotter.YErrorBars cannot place them).
type offsetErrBars struct {
	x, y, sd []float64
	off      []vg.Length
	col      []color.Color
}

func (e *offsetErrBars) add(x, y, sd float64, off vg.Length, col color.Color) {
	e.x, e.y, e.sd = append(e.x, x), append(e.y, y), append(e.sd, sd)
	e.off, e.col = append(e.off, off), append(e.col, col)
}

// Plot implements plot.Plotter.
func (e *offsetErrBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i := range e.x {
		if e.sd[i] <= 0 {
			continue
		}
		x := trX(e.x[i]) + e.off[i]
		lo, hi := trY(e.y[i]-e.sd[i]), trY(e.y[i]+e.sd[i])
		sty := draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
		c.StrokeLine2(sty, x, lo, x, hi)
		c.StrokeLine2(sty, x-vg.Points(2.5), lo, x+vg.Points(2.5), lo)
		c.StrokeLine2(sty, x-vg.Points(2.5), hi, x+vg.Points(2.5), hi)
	}
}

// DataRange implements plot.DataRanger so the axis makes room for the bars.
func (e *offsetErrBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), 0, 0
	for i := range e.x {
		xmin, xmax = math.Min(xmin, e.x[i]), math.Max(xmax, e.x[i])
		ymax = math.Max(ymax, e.y[i]+e.sd[i])
	}
	if len(e.x) == 0 {
		xmin, xmax = 0, 0
	}
	return
}

// cellMarks writes "OOM", "failed" or "n/a" where a series has no value.
type cellMarks struct {
	style text.Style
	items []cellMark
}

type cellMark struct {
	x, y float64
	off  vg.Length
	col  color.Color
	word string
}

func (m *cellMarks) add(x, y float64, col color.Color, word string) {
	m.addAt(x, y, 0, col, word)
}

func (m *cellMarks) addAt(x, y float64, off vg.Length, col color.Color, word string) {
	m.items = append(m.items, cellMark{x, y, off, col, word})
}

// Plot implements plot.Plotter: a cross and the word, rotated for bars.
func (m *cellMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	// Several series may be OOM at the same x: stack their words upwards.
	stacked := map[float64]int{}
	for _, it := range m.items {
		sty := m.style
		sty.Color = it.col
		sty.Font.Size = vg.Points(8)
		x := trX(it.x) + it.off
		y := trY(0) + vg.Points(4)
		if it.off == 0 {
			k := stacked[it.x]
			stacked[it.x]++
			y = trY(0) + vg.Points(6+float64(k)*11)
		}
		if it.off != 0 {
			sty.Rotation = math.Pi / 2
			sty.XAlign = draw.XLeft
			sty.YAlign = draw.YCenter
		} else {
			sty.XAlign = draw.XCenter
			sty.YAlign = draw.YBottom
			c.DrawGlyph(draw.GlyphStyle{Color: it.col, Radius: vg.Points(3), Shape: draw.CrossGlyph{}}, vg.Point{X: x, Y: trY(0)})
		}
		c.FillText(sty, vg.Point{X: x, Y: y}, it.word)
	}
}
