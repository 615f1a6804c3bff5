package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
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

// Figure size presets: a figure one column of a two-column paper wide, and
// one spanning both columns (ACM and IEEE column widths).
const (
	SizeColumn = "column" // 3.5 in × 2.9 in, legend below the plot
	SizeWide   = "wide"   // 7.16 in × 3.3 in, legend right of the plot
)

// FigureSizes lists the size presets, the default first.
var FigureSizes = []string{SizeWide, SizeColumn}

// CheckSize reports whether size is a preset ("" is the default).
func CheckSize(size string) error {
	if size == "" || contains(FigureSizes, size) {
		return nil
	}
	return fmt.Errorf("figure size %q: want %s", size, strings.Join(FigureSizes, " or "))
}

// FigureMeta is what a figure file says about where it came from: the
// experiment (or run), the outcore version (its commit) and the host that
// ran it. SVG figures carry it in <title>/<desc>, PDF figures in their
// document information (Title, Subject, Keywords, Creator).
type FigureMeta struct {
	Experiment int64
	Run        int64
	Version    string // outcore version, devel+<commit>
	Host       string
}

// FigureOptions choose a figure's size preset and its metadata.
type FigureOptions struct {
	Size string // SizeWide (default) or SizeColumn
	Meta FigureMeta
}

// figureLayout is a size preset's measures.
type figureLayout struct {
	w, h         vg.Length
	title, body  vg.Length // font sizes
	legendBelow  bool
	legendMaxCol int
}

func layoutFor(size string) figureLayout {
	if size == SizeColumn {
		return figureLayout{w: 3.5 * vg.Inch, h: 2.9 * vg.Inch, title: vg.Points(8), body: vg.Points(6.5), legendBelow: true, legendMaxCol: 3}
	}
	return figureLayout{w: 7.16 * vg.Inch, h: 3.3 * vg.Inch, title: vg.Points(10), body: vg.Points(8)}
}

// figureFont is the figures' sans-serif typeface (gonum's Liberation Sans,
// embedded in PDF files; SVG files name it with generic fallbacks).
var figureFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// RenderFigure draws ch as a publication figure (SVG or PDF) with gonum/plot
// at the default size and without metadata (RenderFigureWith).
func RenderFigure(ch Chart, format string, w io.Writer) error {
	return RenderFigureWith(ch, format, w, FigureOptions{})
}

// RenderFigureWith draws ch as a publication figure (SVG or PDF) with
// gonum/plot: a sans-serif font, Okabe–Ito colours with a distinct marker
// per series, error bars of ± one standard deviation, OOM, failed and
// cancelled cells written on the plot, nice ticks (a log₂ memory axis where
// limits double), the legend outside the plot, and n and the spread stated
// under the title, wrapped to the figure's width.
func RenderFigureWith(ch Chart, format string, w io.Writer, opts FigureOptions) error {
	if format != FigureSVG && format != FigurePDF {
		return fmt.Errorf("figure format %q: want svg or pdf", format)
	}
	if err := CheckSize(opts.Size); err != nil {
		return err
	}
	if ch.Empty != "" {
		return fmt.Errorf("%s: %w: %s", ch.ID, ErrNoData, ch.Empty)
	}
	if len(ch.Series) == 0 {
		return fmt.Errorf("%s: %w", ch.ID, ErrNoData)
	}
	lay := layoutFor(opts.Size)
	p := plot.New()
	styleText := func(st *text.Style, size vg.Length) {
		st.Font = font.From(figureFont, size)
		st.Font.Size = size
	}
	styleText(&p.X.Label.TextStyle, lay.body)
	styleText(&p.Y.Label.TextStyle, lay.body)
	styleText(&p.X.Tick.Label, lay.body*0.9)
	styleText(&p.Y.Tick.Label, lay.body*0.9)
	p.X.Label.Text = ch.XLabel
	p.Y.Label.Text = ch.YLabel
	p.Y.Min = 0
	p.Y.Tick.Marker = niceTicks{}
	p.Add(plotter.NewGrid())

	var legend []legendItem
	var err error
	switch ch.Kind {
	case "bar", "stack":
		legend, err = addBars(p, ch, lay)
	default:
		legend, err = addLines(p, ch)
	}
	if err != nil {
		return fmt.Errorf("figure %s: %w", ch.ID, err)
	}
	switch ch.XType {
	case "category":
		p.NominalX(ch.Categories...)
		if len(ch.Categories) > 4 {
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
		}
		p.X.Min, p.X.Max = -0.6, float64(len(ch.Categories))-0.4
	case "log":
		lo, hi := p.X.Min, p.X.Max
		if lo > 0 && hi > 0 {
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = valueTicks{values: xValues(ch), bytes: ch.XFormat == "bytes"}
			p.X.Min, p.X.Max = lo/1.3, hi*1.3
		}
	default:
		p.X.Tick.Marker = niceTicks{bytes: ch.XFormat == "bytes"}
	}
	p.Y.Max += (p.Y.Max - p.Y.Min) * 0.08 // room for OOM words and error caps

	cw, err := newFigureCanvas(format, lay.w, lay.h)
	if err != nil {
		return fmt.Errorf("figure %s: %w", ch.ID, err)
	}
	dc := draw.New(cw)
	// White background, then the title and the wrapped subtitle on top.
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	titleSty := text.Style{Color: color.Black, XAlign: draw.XCenter, YAlign: draw.YTop, Handler: p.TextHandler}
	styleText(&titleSty, lay.title)
	subSty := titleSty
	styleText(&subSty, lay.body)
	subSty.Color = color.Gray{Y: 70}
	margin := vg.Points(6)
	width := (lay.w - 2*margin) * 0.85 // room for a viewer's wider fallback font
	y := dc.Max.Y - margin
	for _, line := range wrapText(titleSty, ch.Title, width) {
		dc.FillText(titleSty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: y}, line)
		y -= titleSty.Height(line)
	}
	y -= vg.Points(2)
	for _, line := range wrapText(subSty, figureSubtitle(ch), width) {
		dc.FillText(subSty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: y}, line)
		y -= subSty.Height(line)
	}
	y -= vg.Points(4)
	area := draw.Crop(dc, margin/2, -margin, margin/2, -(dc.Max.Y - y))
	// The legend outside the plot: right of it (wide) or below it (column).
	legSty := text.Style{Color: color.Black, XAlign: draw.XLeft, YAlign: draw.YCenter, Handler: p.TextHandler}
	styleText(&legSty, lay.body*0.95)
	leg := layoutLegend(legend, legSty, lay, area.Max.X-area.Min.X, area.Max.Y-area.Min.Y)
	lw, lh := leg.size()
	plotArea := area
	if lay.legendBelow && len(legend) > 0 {
		plotArea = draw.Crop(area, 0, 0, lh+vg.Points(4), 0)
		leg.draw(dc, area.Min.X+vg.Points(4), area.Min.Y+lh)
	} else if len(legend) > 0 {
		plotArea = draw.Crop(area, 0, -(lw + vg.Points(6)), 0, 0)
		leg.draw(dc, plotArea.Max.X+vg.Points(6), area.Max.Y)
	}
	p.Draw(plotArea)
	if err := writeFigure(cw, format, w, ch, opts.Meta); err != nil {
		return fmt.Errorf("write figure %s: %w", ch.ID, err)
	}
	return nil
}

// legendItem is one legend entry: a series' name and how it is drawn.
type legendItem struct {
	name   string
	thumbs []plot.Thumbnailer
}

// figureLegend is the legend drawn outside the plot: entries in columns.
type figureLegend struct {
	items      []legendItem
	sty        text.Style
	cols, rows int
	colW, rowH vg.Length
	thumb      vg.Length
}

// layoutLegend splits the entries into columns that fit the space: one
// column right of the plot unless it is taller than the plot, else as
// many as needed; below the plot, up to lay.legendMaxCol columns.
func layoutLegend(items []legendItem, sty text.Style, lay figureLayout, w, h vg.Length) figureLegend {
	l := figureLegend{items: items, sty: sty, thumb: vg.Points(14)}
	if len(items) == 0 {
		return l
	}
	for _, it := range items {
		l.colW = max(l.colW, l.thumb+vg.Points(4)+sty.Width(it.name)+vg.Points(8))
	}
	l.rowH = sty.Height("Xg") * 1.35
	l.cols = 1
	if lay.legendBelow {
		l.cols = max(1, min(lay.legendMaxCol, int(w/l.colW), len(items)))
	} else {
		for l.cols < 4 && vg.Length((len(items)+l.cols-1)/l.cols)*l.rowH > h {
			l.cols++
		}
	}
	l.rows = (len(items) + l.cols - 1) / l.cols
	return l
}

// size is the legend's width and height.
func (l figureLegend) size() (vg.Length, vg.Length) {
	return vg.Length(l.cols) * l.colW, vg.Length(l.rows) * l.rowH
}

// draw draws the legend with its top left corner at (x, top).
func (l figureLegend) draw(c draw.Canvas, x, top vg.Length) {
	for i, it := range l.items {
		col, row := i/l.rows, i%l.rows
		x0 := x + vg.Length(col)*l.colW
		y0 := top - vg.Length(row+1)*l.rowH
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0, Y: y0 + l.rowH*0.15}, Max: vg.Point{X: x0 + l.thumb, Y: y0 + l.rowH*0.85}}}
		for _, t := range it.thumbs {
			t.Thumbnail(&icon)
		}
		c.FillText(l.sty, vg.Point{X: x0 + l.thumb + vg.Points(4), Y: y0 + l.rowH/2}, it.name)
	}
}

// wrapText breaks s into lines no wider than w (at spaces).
func wrapText(sty text.Style, s string, w vg.Length) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			try := word
			if line != "" {
				try = line + " " + word
			}
			if line != "" && sty.Width(try) > w {
				lines = append(lines, line)
				line = word
				continue
			}
			line = try
		}
		lines = append(lines, line)
	}
	return lines
}

// figureSubtitle states the statistic, the spread and the range of n.
func figureSubtitle(ch Chart) string {
	lo, hi := math.MaxInt, 0
	words := map[string]bool{}
	for _, s := range ch.Series {
		for _, pt := range s.Points {
			if pt.Y != nil {
				lo, hi = min(lo, pt.N), max(hi, pt.N)
			}
			if w := statusWord(pt.Status); w != "" {
				words[w] = true
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
	if e, ok := ChartByID(ch.ID); ok && e.Scope == ScopeRun || !ok && strings.HasPrefix(ch.ID, "run-") {
		s = "one run (n = 1)"
	}
	if words["OOM"] {
		s += "; OOM = out of memory"
	}
	if words["cancelled"] {
		s += "; cancelled = stopped by hand, not measured"
	}
	if e, ok := ChartByID(ch.ID); ok {
		s += e.Legend
	}
	return s
}

// xValues are the distinct x values of a chart's points.
func xValues(ch Chart) []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, s := range ch.Series {
		for _, p := range s.Points {
			if !seen[p.X] {
				seen[p.X] = true
				out = append(out, p.X)
			}
		}
	}
	sort.Float64s(out)
	return out
}

// valueTicks labels each grid value on a log axis (memory limits in
// bytes); with more than 8 values, every other one.
type valueTicks struct {
	values []float64
	bytes  bool
}

// Ticks implements plot.Ticker.
func (t valueTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 1
	if len(t.values) > 8 {
		step = 2
	}
	var out []plot.Tick
	for i, v := range t.values {
		if v < lo || v > hi {
			continue
		}
		label := ""
		if i%step == 0 {
			label = tickLabel(v, t.bytes)
		}
		out = append(out, plot.Tick{Value: v, Label: label})
	}
	return out
}

// niceTicks are about 4 to 7 labelled ticks at 1, 2, 2.5 or 5 × 10^k
// steps (powers of two for bytes), with a minor tick between each.
type niceTicks struct{ bytes bool }

// Ticks implements plot.Ticker.
func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: tickLabel(lo, t.bytes)}}
	}
	step := niceStep(lo, hi, 8, t.bytes)
	prec := 0
	for prec < 12 && math.Abs(step*math.Pow10(prec)-math.Round(step*math.Pow10(prec))) > 1e-6 {
		prec++
	}
	var out []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if v == 0 {
			v = 0
		}
		scale := math.Pow10(prec)
		label := strconv.FormatFloat(math.Round(v*scale)/scale, 'f', -1, 64)
		if t.bytes || math.Abs(v) >= 1e6 {
			label = tickLabel(v, t.bytes)
		}
		out = append(out, plot.Tick{Value: v, Label: label})
		if minor := v + step/2; minor < hi {
			out = append(out, plot.Tick{Value: minor})
		}
	}
	return out
}

// niceStep is the smallest 1, 2, 2.5 or 5 × 10^k step (a power of two for
// bytes) that puts at most most labelled ticks in [lo, hi].
func niceStep(lo, hi float64, most int, bytes bool) float64 {
	count := func(step float64) int { return int(math.Floor(hi/step+1e-9) - math.Ceil(lo/step-1e-9) + 1) }
	if bytes {
		step := math.Pow(2, math.Floor(math.Log2((hi-lo)/float64(most))))
		for count(step) > most {
			step *= 2
		}
		return step
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/float64(most))))
	for {
		for _, m := range []float64{1, 2, 2.5, 5} {
			if step := m * mag; count(step) <= most {
				return step
			}
		}
		mag *= 10
	}
}

// tickLabel writes a tick value: bytes as "512 MiB", numbers with as few
// digits as they need.
func tickLabel(v float64, bytes bool) string {
	if bytes && v > 0 {
		return MemLabel(int64(v))
	}
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e6 || a < 1e-3 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
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

// dodgeX shifts series i of n a little sideways (Chart.Dodge): a tenth of a
// category, a twentieth of a doubling on a log axis.
func dodgeX(ch Chart, x float64, i, n int) float64 {
	if !ch.Dodge || n < 2 {
		return x
	}
	off := float64(i) - float64(n-1)/2
	switch ch.XType {
	case "category":
		return x + off*0.08
	case "log":
		return x * math.Pow(2, off*0.06)
	}
	return x
}

// addLines draws each series as a line with markers and error bars; cells
// without a value get their status written at the series' position.
func addLines(p *plot.Plot, ch Chart) ([]legendItem, error) {
	marks := &cellMarks{style: p.X.Tick.Label}
	var legend []legendItem
	seen := map[string]bool{}
	for si, s := range ch.Series {
		col := hexColor(s.Color)
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, pt := range s.Points {
			x := dodgeX(ch, pt.X, si, len(ch.Series))
			if pt.Y == nil {
				if w := statusWord(pt.Status); w != "" {
					marks.add(x, 0, col, w)
				}
				continue
			}
			xys = append(xys, plotter.XY{X: x, Y: *pt.Y})
			errs = append(errs, struct{ Low, High float64 }{pt.SD, pt.SD})
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color = col
		line.Width = vg.Points(1.2)
		line.Dashes = dashes(s.Dash)
		points.Color = col
		points.Shape = glyph(s.Marker)
		points.Radius = vg.Points(2.6)
		thumbs := []plot.Thumbnailer{line}
		p.Add(line)
		if s.Marker != "none" {
			p.Add(points)
			thumbs = append(thumbs, points)
		}
		eb, err := plotter.NewYErrorBars(errorXYs{xys, errs})
		if err != nil {
			return nil, err
		}
		eb.Color = col
		p.Add(eb)
		if !seen[s.Name] {
			seen[s.Name] = true
			legend = append(legend, legendItem{s.Name, thumbs})
		}
	}
	if len(marks.items) > 0 {
		p.Add(marks)
	}
	return legend, nil
}

// addBars draws grouped (or stacked) bars with error bars; a marker series
// of a stacked chart is a short line across each bar (the epoch time).
func addBars(p *plot.Plot, ch Chart, lay figureLayout) ([]legendItem, error) {
	nCat := len(ch.Categories)
	if nCat == 0 {
		return nil, ErrNoData
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
	// The plot area is about four fifths of the figure; leave a fifth of each category empty.
	width := vg.Length(float64(lay.w) * 0.8 * 0.8 / float64(nCat*groups))
	width = min(width, vg.Points(28))
	marks := &cellMarks{style: p.X.Tick.Label}
	var legend []legendItem
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
			return nil, err
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
		legend = append(legend, legendItem{s.Name, []plot.Thumbnailer{bars}})
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
		legend = append(legend, legendItem{s.Name, []plot.Thumbnailer{bm}})
	}
	return legend, nil
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
