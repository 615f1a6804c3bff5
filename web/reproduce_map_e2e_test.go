package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments"
	"outcore/experiments/studies"
	"outcore/store"
)

// TestReproduceMapBrowser: in a 1,280-pixel window the Reproduce page's
// figure map draws every figure and table of the map, nothing scrolls
// sideways, and a study's row leads to its latest experiment.
func TestReproduceMapBrowser(t *testing.T) {
	chrome := browserTest(t)
	e := newEnvWith(t, t.TempDir(), func(o *experiments.Options) {
		o.MinMemory = func(train.Config, dataset.Meta) int64 { return 0 }
	})
	studyDataset(t, e.dir)
	s, _ := studies.Lookup("gnndrive-table2")
	x := e.create(mustGrid(t, s, 1))
	for _, r := range e.runs(x.ID) {
		e.play(r, 2, 10, store.StatusDone)
	}
	addr, stop, served := serveLoopback(t, e.srv)
	base := "http://" + addr
	t.Cleanup(func() { stop(); <-served })

	page := browser(t, chrome)
	do(t, page, chromedp.EmulateViewport(1280, 900))
	doIn(t, page, time.Minute, chromedp.Navigate(base+"/reproduce"), chromedp.WaitVisible(chromedp.ID("figure-map")))
	total := 0
	for _, p := range studies.FigureMap() {
		total += len(p.Figures)
	}
	if got := js[int](t, page, `document.querySelectorAll('.figure-map tr[data-figure]').length`); got != total {
		t.Errorf("%d figure rows drawn, want the map's %d", got, total)
	}
	if w := js[int](t, page, `document.documentElement.scrollWidth`); w > 1280 {
		wide := js[string](t, page, `Array.from(document.querySelectorAll('main *')).filter(el => el.getBoundingClientRect().right > 1281).slice(0, 5).map(el => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().right)).join(', ')`)
		t.Errorf("/reproduce is %d px wide in a 1280 px window (widest: %s)", w, wide)
	}
	shot, err := chromedp.Run(page, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	nonBlank(t, "reproduce map", shot, 0.05)
	saveShot("reproduce-map.png", shot)
	for _, id := range []string{"map-gnndrive", "map-helios"} {
		if b, err := chromedp.Run(page, chromedp.Screenshot(chromedp.ID(id))); err == nil {
			saveShot("reproduce-"+id+".png", b)
		}
	}
	do(t, page, chromedp.Click(chromedp.CSS(`div.map-study[data-study="gnndrive-table2"] a.latest`)))
	waitJS(t, page, 20*time.Second, "the latest experiment of gnndrive-table2",
		fmt.Sprintf(`location.pathname === '/experiments/%d' && document.getElementById('study-table') !== null`, x.ID))
	if v := js[string](t, page, `document.getElementById('study-ratios').textContent`); !strings.Contains(v, "2.64×") {
		t.Errorf("the experiment's study ratios: %q", v)
	}
}
