package web

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outcore/store"
)

// TestStatusWordsDoNotOverprint: two variants that both ran out of memory
// at one limit put their "OOM" words above one another on the epoch time
// vs memory limit chart, not a few pixels apart, where they overprinted
// into "OOOM".
func TestStatusWordsDoNotOverprint(t *testing.T) {
	chrome := browserTest(t)
	e := newEnv(t)
	x := e.create(`{"name":"marks","dataset":"tiny","epochs":2,"axes":{"system":["pyg+","gnndrive","ginex"],"mem_limit":["128MiB","256MiB"]}}`)
	for _, r := range e.runs(x.ID) {
		outcome := store.StatusDone
		if r.MemLimitBytes == 128<<20 {
			outcome = store.StatusOOM
		}
		e.play(r, 2, 1, outcome)
	}
	addr, stop, served := serveLoopback(t, e.srv)
	base := "http://" + addr
	t.Cleanup(func() { stop(); <-served })
	page := browser(t, chrome)
	do(t, page, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, x.ID)))
	waitJS(t, page, 20*time.Second, "three OOM words drawn",
		`Array.from(document.querySelectorAll('svg text')).filter(el => el.textContent === 'OOM').length >= 3`)
	overlaps := js[int](t, page, `(() => {
		const els = Array.from(document.querySelectorAll('svg text')).filter(el => el.textContent === 'OOM');
		let n = 0;
		for (let i = 0; i < els.length; i++) for (let j = i + 1; j < els.length; j++) {
			const a = els[i].getBoundingClientRect(), b = els[j].getBoundingClientRect();
			if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) n++;
		}
		return n })()`)
	if overlaps != 0 {
		t.Errorf("%d pairs of OOM words overprint", overlaps)
	}
}
