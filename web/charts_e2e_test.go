package web

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outcore/store"
)

// The chart tests (issue 35, item 6): what a researcher reads off the
// experiment page's charts is what the runs measured. Each test drives a
// real Chromium against an experiment of six variants over four memory
// limits that do not double (so the memory axis is linear), and reads the
// charts back through ECharts' own model: marker and line positions in
// pixels, the axis ticks, the legend's items, the axes' type and range.

// chartVariants are the variants of the chart tests' experiment, long
// names among them (a truncating legend cut "mariusgnn" to "mariusg…").
var chartVariants = []string{"pyg+", "ginex", "mariusgnn", "gnndrive", "diskgnn", "gids"}

// chartsPage serves an experiment of chartVariants × four memory limits
// (96, 128, 160, 192 MiB; one repeat, all done, epoch time 1 s + 1 s per
// variant + 0.1 s per limit) and opens its page once the charts are drawn.
func chartsPage(t *testing.T) (context.Context, string, store.Experiment) {
	t.Helper()
	chrome := browserTest(t)
	e := newEnv(t)
	x := e.create(`{"name":"charts","dataset":"tiny","epochs":2,"axes":{"system":["pyg+","ginex","mariusgnn","gnndrive","diskgnn","gids"],"mem_limit":["96MiB","128MiB","160MiB","192MiB"]}}`)
	for _, r := range e.runs(x.ID) {
		k := 0
		for i, v := range chartVariants {
			if v == r.System {
				k = i
			}
		}
		e.play(r, 3, 1+float64(k)+0.1*float64(r.MemLimitBytes>>25), store.StatusDone)
	}
	addr, stop, served := serveLoopback(t, e.srv)
	t.Cleanup(func() { stop(); <-served })
	page := browser(t, chrome)
	base := "http://" + addr
	do(t, page, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, x.ID)))
	waitJS(t, page, 20*time.Second, "the charts drawn",
		`Array.from(document.querySelectorAll('[data-chart]')).every(b => b.dataset.rendered)`)
	return page, base, x
}

// shootChart saves a screenshot of a chart's card when OUTCORE_E2E_SHOTS is set.
func shootChart(t *testing.T, page context.Context, sel, name string) {
	t.Helper()
	b, err := chromedp.Run(page, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot %s: %v", sel, err)
	}
	saveShot(name, b)
}

// TestChartMarkersOnTheirLines: each marker of a line chart is drawn where
// its line passes through the point, and that is where the point's value
// is on the axes (convertToPixel). Series "dodged" by a symbol offset drew
// markers a few pixels — 4.5 MiB on a memory axis — beside their lines.
func TestChartMarkersOnTheirLines(t *testing.T) {
	page, _, _ := chartsPage(t)
	shootChart(t, page, `[data-chart="epoch-vs-mem"]`, "chart-markers-epoch-vs-mem.png")
	type off struct {
		Series         string
		I              int
		DX, DY, LX, LY float64
	}
	for _, id := range []string{"epoch-vs-mem", "time-to-accuracy"} {
		offs := js[[]off](t, page, fmt.Sprintf(`(() => {
			const inst = echarts.getInstanceByDom(document.querySelector('[data-chart=%q]'));
			const out = []; let n = 0;
			inst.getModel().eachSeries(s => {
				if (s.subType !== 'line') return;
				const data = s.getData();
				for (let i = 0; i < data.count(); i++) {
					const v = s.option.data[i].value;
					if (v[1] === null || v[1] === undefined) continue;
					const el = data.getItemGraphicEl(i);
					if (!el) continue;
					n++;
					const sym = el.childAt(0);
					const mx = el.x + sym.x, my = el.y + sym.y;          // the marker's centre
					const pts = data.getLayout('points');
					const lp = [pts[2 * i], pts[2 * i + 1]];              // the line's point
					const px = inst.convertToPixel({seriesIndex: s.seriesIndex}, v); // the value on the axes
					out.push({Series: s.name, I: i, DX: mx - px[0], DY: my - px[1], LX: lp[0] - px[0], LY: lp[1] - px[1]});
				}
			});
			if (n === 0) throw new Error('no markers drawn');
			return out })()`, id))
		if len(offs) < len(chartVariants) {
			t.Fatalf("%s: %d markers measured", id, len(offs))
		}
		bad := 0
		for _, o := range offs {
			if abs(o.DX) > 0.5 || abs(o.DY) > 0.5 || abs(o.LX) > 0.5 || abs(o.LY) > 0.5 {
				if bad++; bad <= 5 {
					t.Errorf("%s: %s point %d: marker %+.1f,%+.1f px and line %+.1f,%+.1f px from its value", id, o.Series, o.I, o.DX, o.DY, o.LX, o.LY)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d markers off their value", id, bad, len(offs))
		}
	}
}

// wholeBinary is a tick label of a whole number of MiB or GiB.
var wholeBinary = regexp.MustCompile(`^\d+ (MiB|GiB)$`)

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// axisTicks reads an axis's tick values and labels as ECharts lays them out.
type axisTicks struct {
	Values []float64
	Labels []string
}

func readTicks(t *testing.T, page context.Context, chart, axis string) axisTicks {
	t.Helper()
	return js[axisTicks](t, page, fmt.Sprintf(`(() => {
		const inst = echarts.getInstanceByDom(document.querySelector('[data-chart=%q]'));
		const ax = inst.getModel().getComponent(%q, 0).axis;
		const labels = ax.getViewLabels();
		return {Values: labels.map(l => l.tickValue), Labels: labels.map(l => l.formattedLabel)} })()`, chart, axis))
}

// binarySteps checks that ticks step by one power of two (in units of
// unit bytes) and fall on its multiples.
func binarySteps(t *testing.T, what string, tk axisTicks, unit float64) {
	t.Helper()
	if len(tk.Values) < 3 || len(tk.Values) > 9 {
		t.Fatalf("%s: %d ticks %v", what, len(tk.Values), tk.Values)
	}
	step := tk.Values[1] - tk.Values[0]
	for i := 1; i < len(tk.Values); i++ {
		if d := tk.Values[i] - tk.Values[i-1]; abs(d-step) > 1e-9*step {
			t.Errorf("%s: ticks %v are not evenly spaced", what, tk.Values)
			return
		}
	}
	b := step * unit
	k := 0.0
	for p := 1.0; p < b; p *= 2 {
		k = p * 2
	}
	if b != 1 && b != k {
		t.Errorf("%s: tick step %v × %v B is not a power of two bytes (ticks %v, labels %q)", what, step, unit, tk.Values, tk.Labels)
	}
	for _, v := range tk.Values {
		if r := v / step; r != float64(int64(r)) {
			t.Errorf("%s: tick %v is not a multiple of the step %v", what, v, step)
		}
	}
}

// TestMemoryAxesTickAtBinarySizes: a memory axis ticks at whole binary
// sizes (16/32/48/64 MiB, not 38.1/57.2/76.3 MiB, which are 40, 60 and 80
// million bytes), labelled in MiB or GiB; a MiB y axis likewise.
func TestMemoryAxesTickAtBinarySizes(t *testing.T) {
	page, base, _ := chartsPage(t)
	shootChart(t, page, `[data-chart="epoch-vs-mem"]`, "chart-ticks-epoch-vs-mem.png")
	x := readTicks(t, page, "epoch-vs-mem", "xAxis")
	binarySteps(t, "epoch-vs-mem x", x, 1)
	for _, l := range x.Labels {
		if !wholeBinary.MatchString(l) {
			t.Errorf("epoch-vs-mem x label %q is not a whole MiB or GiB", l)
		}
	}
	// a run's memory over time: MiB on the y axis, up to its 192 MiB budget
	run := js[string](t, page, `Array.from(document.querySelectorAll('#queue tbody tr')).map(r => r.querySelector('a').getAttribute('href')).pop()`)
	do(t, page, chromedp.Navigate(base+run))
	waitJS(t, page, 20*time.Second, "the run's memory chart", `(document.querySelector('[data-chart="run-memory"]') || {dataset: {}}).dataset.rendered === 'chart'`)
	shootChart(t, page, `[data-chart="run-memory"]`, "chart-ticks-run-memory.png")
	binarySteps(t, "run-memory y (MiB)", readTicks(t, page, "run-memory", "yAxis"), 1<<20)
}

// TestChartLegendsWrap: a legend of many series wraps onto more lines
// above the plot: it never pages ("1/3") and never cuts a name short
// ("mariusg…"), and the plot starts below it.
func TestChartLegendsWrap(t *testing.T) {
	page, _, _ := chartsPage(t)
	shootChart(t, page, `[data-chart="time-to-accuracy"]`, "chart-legend-time-to-accuracy.png")
	type legend struct {
		Chart, Type     string
		Names, Shown    []string
		Bottom, GridTop float64
	}
	ls := js[[]legend](t, page, `Array.from(document.querySelectorAll('[data-chart][data-rendered=chart]')).map(box => {
		const inst = echarts.getInstanceByDom(box);
		const lm = inst.getModel().getComponent('legend', 0);
		if (!lm) return null;
		const view = inst.getViewOfComponentModel(lm);
		const shown = [];
		view.group.traverse(el => { if (el.type === 'text' && el.style && el.style.text) shown.push(el.style.text); });
		const r = view.group.getBoundingRect().clone();
		if (view.group.transform) r.applyTransform(view.group.transform);
		const grid = inst.getModel().getComponent('grid', 0);
		return {Chart: box.dataset.chart, Type: lm.subType || lm.get('type') || 'plain',
			Names: lm.getData().map(d => d.get('name')), Shown: shown,
			Bottom: r.y + r.height, GridTop: grid ? grid.coordinateSystem.getRect().y : 1e9};
	}).filter(Boolean)`)
	if len(ls) < 5 {
		t.Fatalf("%d charts with a legend", len(ls))
	}
	var long bool
	for _, l := range ls {
		if l.Type == "scroll" {
			t.Errorf("%s: the legend pages (type scroll)", l.Chart)
		}
		shown := map[string]bool{}
		for _, s := range l.Shown {
			shown[s] = true
			if strings.HasSuffix(s, "…") {
				t.Errorf("%s: legend label %q is cut short", l.Chart, s)
			}
		}
		for _, n := range l.Names {
			if !shown[n] {
				t.Errorf("%s: legend does not show %q in full (shown: %q)", l.Chart, n, l.Shown)
			}
		}
		if l.Bottom > l.GridTop+1 {
			t.Errorf("%s: the legend (bottom %.0f px) runs into the plot (top %.0f px)", l.Chart, l.Bottom, l.GridTop)
		}
		if l.Chart == "time-to-accuracy" && len(l.Names) >= 24 {
			long = true
		}
	}
	if !long {
		t.Error("time-to-accuracy has no legend of 24 series to wrap")
	}
}

// TestChartZoomAndLogToggle: a line chart zooms its x axis (inside: wheel
// and drag; a slider below), and each time axis has a log toggle that
// survives the live redraw.
func TestChartZoomAndLogToggle(t *testing.T) {
	page, _, _ := chartsPage(t)
	type zoom struct {
		Kinds   []string
		Before  []float64
		After   []float64
		YType   string
		HasYLog bool
	}
	z := js[zoom](t, page, `(() => {
		const inst = echarts.getInstanceByDom(document.querySelector('[data-chart="epoch-vs-mem"]'));
		const kinds = (inst.getOption().dataZoom || []).map(d => d.type + ':' + [].concat(d.xAxisIndex).join(','));
		const ext = () => inst.getModel().getComponent('xAxis', 0).axis.scale.getExtent().slice();
		const before = ext();
		inst.dispatchAction({type: 'dataZoom', start: 25, end: 75});
		const after = ext();
		return {Kinds: kinds, Before: before, After: after, YType: inst.getModel().getComponent('yAxis', 0).axis.scale.type,
			HasYLog: !!document.querySelector('[data-chart-card="epoch-vs-mem"] [data-log-toggle="y"]')} })()`)
	has := map[string]bool{}
	for _, k := range z.Kinds {
		has[k] = true
	}
	if !has["inside:0"] || !has["slider:0"] {
		t.Errorf("epoch-vs-mem data zoom %q, want inside and slider on the x axis", z.Kinds)
	}
	if len(z.After) != 2 || !(z.After[0] > z.Before[0] && z.After[1] < z.Before[1]) {
		t.Errorf("zooming to 25–75%% left the x axis at %v (was %v)", z.After, z.Before)
	}
	if z.YType != "interval" || !z.HasYLog {
		t.Fatalf("epoch-vs-mem: y axis %q, log toggle %v", z.YType, z.HasYLog)
	}
	do(t, page, chromedp.Click(chromedp.CSS(`[data-chart-card="epoch-vs-mem"] [data-log-toggle="y"]`)))
	yType := func(chart, axis string) string {
		return js[string](t, page, fmt.Sprintf(`echarts.getInstanceByDom(document.querySelector('[data-chart=%q]')).getModel().getComponent(%q, 0).axis.scale.type`, chart, axis))
	}
	if got := yType("epoch-vs-mem", "yAxis"); got != "log" {
		t.Errorf("after the log toggle the epoch time axis is %q", got)
	}
	shootChart(t, page, `[data-chart-card="epoch-vs-mem"]`, "chart-log-epoch-vs-mem.png")
	// time-to-accuracy: time is its x axis
	if !js[bool](t, page, `!!document.querySelector('[data-chart-card="time-to-accuracy"] [data-log-toggle="x"]')`) {
		t.Fatal("time-to-accuracy has no log toggle on its time axis")
	}
	do(t, page, chromedp.Click(chromedp.CSS(`[data-chart-card="time-to-accuracy"] [data-log-toggle="x"]`)))
	if got := yType("time-to-accuracy", "xAxis"); got != "log" {
		t.Errorf("after the log toggle the time axis is %q", got)
	}
	shootChart(t, page, `[data-chart-card="time-to-accuracy"]`, "chart-log-time-to-accuracy.png")
	// the live redraw (a new baseline reloads every chart) keeps the choice
	js[bool](t, page, `window.__drawn = 0; document.addEventListener('outcore:charts-drawn', () => window.__drawn++); const b = document.getElementById('baseline'); b.value = 'ginex'; b.dispatchEvent(new Event('change', {bubbles: true})); true`)
	waitJS(t, page, 10*time.Second, "the charts to redraw", `window.__drawn > 0`)
	if got := yType("epoch-vs-mem", "yAxis"); got != "log" {
		t.Errorf("after a redraw the epoch time axis is %q", got)
	}
	if !js[bool](t, page, `document.querySelector('[data-chart-card="epoch-vs-mem"] [data-log-toggle="y"]').getAttribute('aria-pressed') === 'true'`) {
		t.Error("the log toggle does not say it is on")
	}
	do(t, page, chromedp.Click(chromedp.CSS(`[data-chart-card="epoch-vs-mem"] [data-log-toggle="y"]`)))
	if got := yType("epoch-vs-mem", "yAxis"); got != "interval" {
		t.Errorf("after the second toggle the epoch time axis is %q", got)
	}
	// stacked bars have no log toggle: stacks on a log axis misread
	if js[bool](t, page, `!!document.querySelector('[data-chart-card="stages"] [data-log-toggle]')`) {
		t.Error("the stacked stage breakdown offers a log axis")
	}
}

// TestRunsViewBrush: dragging along an axis of the runs view selects the
// runs whose value lies in the dragged interval, and the page says which.
func TestRunsViewBrush(t *testing.T) {
	page, _, _ := chartsPage(t)
	waitJS(t, page, 20*time.Second, "the runs view", `document.getElementById('runs-parallel').dataset.lines === '24'`)
	type axis struct {
		Dim       int
		X, Y0, Y1 float64
		Lo, Hi    float64
	}
	// the epoch time axis: drag from 1.9 s to 3.9 s (ginex and mariusgnn)
	a := js[axis](t, page, `(() => {
		const box = document.getElementById('runs-parallel');
		box.scrollIntoView({block: 'center'});
		const inst = echarts.getInstanceByDom(box);
		const pm = inst.getModel().getComponent('parallel', 0);
		const cs = pm.coordinateSystem;
		const dims = inst.getOption().parallelAxis;
		const dim = dims.findIndex(d => /^epoch time/.test(d.name));
		const p0 = cs.dataToPoint(1.9, 'dim' + dim), p1 = cs.dataToPoint(3.9, 'dim' + dim);
		const r = box.getBoundingClientRect();
		return {Dim: dim, X: r.left + p0[0], Y0: r.top + p0[1], Y1: r.top + p1[1], Lo: 1.9, Hi: 3.9} })()`)
	if a.Dim < 0 {
		t.Fatal("the runs view has no epoch time axis")
	}
	drag := []chromedp.Action[chromedp.Void]{
		chromedp.MouseEvent(chromedp.MouseMoved, a.X, a.Y0),
		chromedp.MouseEvent(chromedp.MousePressed, a.X, a.Y0, chromedp.ButtonLeft),
	}
	for i := 1; i <= 8; i++ {
		drag = append(drag, chromedp.MouseEvent(chromedp.MouseMoved, a.X, a.Y0+(a.Y1-a.Y0)*float64(i)/8, chromedp.ButtonLeft))
	}
	drag = append(drag, chromedp.MouseEvent(chromedp.MouseReleased, a.X, a.Y1, chromedp.ButtonLeft))
	do(t, page, drag...)
	waitJS(t, page, 5*time.Second, "the selection to be shown", `!!document.getElementById('runs-selection') && document.getElementById('runs-selection').dataset.selected !== undefined && document.getElementById('runs-selection').dataset.selected !== ''`)
	type sel struct {
		Selected, Want string
		Text           string
	}
	s := js[sel](t, page, fmt.Sprintf(`(() => {
		const inst = echarts.getInstanceByDom(document.getElementById('runs-parallel'));
		const ax = inst.getModel().getComponent('parallelAxis', %d);
		const iv = ax.activeIntervals || [];
		const want = [];
		inst.getOption().series.forEach(s => s.data.forEach(d => {
			const v = d.value[%d];
			if (typeof v === 'number' && iv.some(i => v >= Math.min(i[0], i[1]) && v <= Math.max(i[0], i[1]))) want.push(d.run);
		}));
		want.sort((a, b) => a - b);
		const el = document.getElementById('runs-selection');
		return {Selected: el.dataset.selected, Want: want.join(','), Text: el.textContent} })()`, a.Dim, a.Dim))
	if s.Want == "" {
		t.Fatalf("the drag selected no interval on the epoch time axis")
	}
	if s.Selected != s.Want {
		t.Errorf("the page shows runs %q selected, the brushed interval holds %q", s.Selected, s.Want)
	}
	if n := len(strings.Split(s.Want, ",")); n != 8 {
		t.Errorf("brushing 1.9–3.9 s selected %d runs, want the 8 of ginex and mariusgnn (%s)", n, s.Want)
	}
	shootChart(t, page, "#runs-view", "runs-view-brushed.png")
	t.Logf("selection: %s", s.Text)
	// a redraw (here: grouping by memory limit) keeps the brushed interval
	choose(t, page, "group-by", "mem_limit")
	waitJS(t, page, 10*time.Second, "the runs view to regroup", `document.getElementById('runs-parallel').dataset.groupBy === 'mem_limit'`)
	if got := js[string](t, page, `document.getElementById('runs-selection').dataset.selected`); got != s.Want {
		t.Errorf("after regrouping the page shows runs %q selected, want %q", got, s.Want)
	}
	// the peak memory axis ticks at binary steps
	peak := js[axisTicks](t, page, `(() => {
		const inst = echarts.getInstanceByDom(document.getElementById('runs-parallel'));
		const i = inst.getOption().parallelAxis.findIndex(d => /^peak memory/.test(d.name));
		const ax = inst.getModel().getComponent('parallelAxis', i).axis;
		const labels = ax.getViewLabels();
		return {Values: labels.map(l => l.tickValue), Labels: labels.map(l => l.formattedLabel)} })()`)
	binarySteps(t, "runs view peak memory (MiB)", peak, 1<<20)
}

// TestRunTableColumnChooser: a run table's columns can be hidden and the
// choice is remembered for that table on the next visit.
func TestRunTableColumnChooser(t *testing.T) {
	page, base, x := chartsPage(t)
	visible := func(table, header string) bool {
		return js[bool](t, page, fmt.Sprintf(`(() => {
			const tb = document.getElementById(%q);
			const i = Array.from(tb.tHead.rows[0].cells).findIndex(c => c.textContent.trim() === %q);
			if (i < 0) throw new Error('no column ' + %q);
			const cells = [tb.tHead.rows[0].cells[i]].concat(Array.from(tb.tBodies[0].rows).map(r => r.cells[i]));
			const shown = cells.filter(c => c.getClientRects().length > 0).length;
			if (shown !== 0 && shown !== cells.length) throw new Error(shown + ' of ' + cells.length + ' cells shown');
			return shown > 0 })()`, table, header, header))
	}
	if !visible("queue", "Fanout") {
		t.Fatal("the Fanout column is hidden before any choice")
	}
	if !js[bool](t, page, `!!document.querySelector('[data-columns-for="queue"] input[data-column="Fanout"]')`) {
		t.Fatal("the run table has no column chooser with a Fanout box")
	}
	js[bool](t, page, `(() => { const c = document.querySelector('[data-columns-for="queue"] input[data-column="Fanout"]'); c.click(); return c.checked })()`)
	if visible("queue", "Fanout") {
		t.Error("Fanout still shows after it was unchecked")
	}
	if !visible("queue", "Variant") {
		t.Error("hiding Fanout hid Variant too")
	}
	shootChart(t, page, "#queue", "queue-columns.png")
	do(t, page, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, x.ID)))
	waitJS(t, page, 10*time.Second, "the page", `!!document.getElementById('queue')`)
	if visible("queue", "Fanout") {
		t.Error("the hidden Fanout column shows again after a reload")
	}
	// another table keeps its own columns
	do(t, page, chromedp.Navigate(base+"/runs"))
	waitJS(t, page, 10*time.Second, "the runs list", `!!document.getElementById('runs-list')`)
	if !visible("runs-list", "Variant") {
		t.Error("the runs list hides Variant")
	}
	if !js[bool](t, page, `!!document.querySelector('[data-columns-for="runs-list"] input[data-column="Limit"]')`) {
		t.Fatal("the runs list has no column chooser")
	}
	js[bool](t, page, `(() => { const c = document.querySelector('[data-columns-for="runs-list"] input[data-column="Limit"]'); c.click(); return true })()`)
	if visible("runs-list", "Limit") {
		t.Error("Limit still shows in the runs list after it was unchecked")
	}
}

// TestChartsOnlyForVaryingAxes: an experiment that varies the variant and
// the memory limit draws no chart against feature dimension or batch size,
// and no card on the page is an empty chart.
func TestChartsOnlyForVaryingAxes(t *testing.T) {
	page, _, _ := chartsPage(t)
	type card struct {
		ID, Rendered string
		Shown        bool
	}
	cards := js[[]card](t, page, `Array.from(document.querySelectorAll('[data-chart]')).map(b => ({
		ID: b.dataset.chart, Rendered: b.dataset.rendered || '', Shown: b.closest('.chart-card').getClientRects().length > 0}))`)
	shown := map[string]bool{}
	for _, c := range cards {
		shown[c.ID] = c.Shown
		if c.Shown && c.Rendered != "chart" {
			t.Errorf("chart %s is on the page without a chart (%q)", c.ID, c.Rendered)
		}
	}
	for _, id := range []string{"epoch-vs-dim", "epoch-vs-batch"} {
		if shown[id] {
			t.Errorf("%s is on the page though the experiment does not vary its axis", id)
		}
	}
	if !shown["epoch-vs-mem"] {
		t.Error("epoch-vs-mem is not on the page")
	}
	if got := js[string](t, page, `(document.getElementById('charts-not-drawn') || {textContent: ''}).textContent`); !strings.Contains(got, "feature dimension") || !strings.Contains(got, "batch size") {
		t.Errorf("the page does not say which charts it left out and why: %q", got)
	}
}
