package web

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outcore/store"
)

// TestTimeToAccuracyBrowser: in a real Chromium, the experiment page draws
// the time-to-accuracy chart, one line per variant and grid point, with a
// log toggle on its time axis; where the runs have one evaluated epoch
// each, its card is hidden and the page says why below the charts.
// OUTCORE_E2E_SHOTS=DIR keeps screenshots of both.
func TestTimeToAccuracyBrowser(t *testing.T) {
	chrome := browserTest(t)
	e := newEnv(t)
	x := e.create(`{"name":"tta","dataset":"tiny","epochs":4,"axes":{"system":["pyg+","ginex","gnndrive"],"mem_limit":["64MiB","128MiB"],"repeat":2}}`)
	secs := map[string]float64{"pyg+": 4, "ginex": 2.5, "gnndrive": 1}
	for _, r := range e.runs(x.ID) {
		s := secs[r.System] * (1 + 0.1*float64(r.Repeat))
		if r.MemLimitBytes == 64<<20 {
			s *= 1.5
		}
		e.play(r, 4, s, store.StatusDone)
	}
	y := e.create(`{"name":"one epoch","dataset":"tiny","epochs":1,"axes":{"system":["pyg+","gnndrive"],"mem_limit":["64MiB","128MiB"]}}`)
	for _, r := range e.runs(y.ID) {
		e.play(r, 1, 1, store.StatusDone)
	}
	addr, stop, served := serveLoopback(t, e.srv)
	t.Cleanup(func() { stop(); <-served })
	page := browser(t, chrome)
	base := "http://" + addr
	do(t, page, chromedp.EmulateViewport(1280, 900))

	do(t, page, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, x.ID)))
	waitJS(t, page, 20*time.Second, "the charts drawn",
		`Array.from(document.querySelectorAll('[data-chart]')).every(b => b.dataset.rendered)`)
	box := `document.querySelector('[data-chart="time-to-accuracy"]')`
	if got := js[string](t, page, box+`.dataset.rendered + ' ' + `+box+`.dataset.series`); got != "chart 6" {
		t.Fatalf("time-to-accuracy drawn as %q, want a chart of 6 lines", got)
	}
	if !js[bool](t, page, `!!document.querySelector('[data-chart-card="time-to-accuracy"] [data-log-toggle="x"]')`) {
		t.Error("time-to-accuracy has no log toggle on its time axis")
	}
	do(t, page, chromedp.ScrollIntoView(chromedp.CSS(`[data-chart-card="time-to-accuracy"]`)))
	shootChart(t, page, `[data-chart-card="time-to-accuracy"]`, "tta-chart.png")
	full, err := chromedp.Run(page, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	saveShot("tta-page.png", full)

	do(t, page, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, y.ID)))
	waitJS(t, page, 20*time.Second, "the charts drawn",
		`Array.from(document.querySelectorAll('[data-chart]')).every(b => b.dataset.rendered)`)
	if !js[bool](t, page, `document.querySelector('[data-chart-card="time-to-accuracy"]').hidden`) {
		t.Error("time-to-accuracy of one evaluated epoch is shown")
	}
	waitJS(t, page, 5*time.Second, "the reason below the charts",
		`(document.getElementById('charts-not-drawn')||{}).textContent.includes('Time to accuracy') && document.getElementById('charts-not-drawn').textContent.includes('one epoch only')`)
	do(t, page, chromedp.ScrollIntoView(chromedp.CSS(`#charts-not-drawn`)))
	shootChart(t, page, `#charts-not-drawn`, "tta-not-drawn.png")
}
