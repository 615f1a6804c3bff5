package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outcore/experiments/grid"
	"outcore/internal/units"
)

// startServe runs `outcore serve` on a fresh data directory, as `make run`
// does (the default dataset generated from preset, the examples written),
// and returns its address once it answers.
func startServe(t *testing.T, bin, dir, preset string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out strings.Builder
	cmd := exec.Command(bin, "serve", "--data-dir", dir, "--addr", addr, "--default-preset", preset, "--concurrency", "2")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = os.Environ() // the storage probe off, as TestMain set it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server output:\n%s", out.String())
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(2 * time.Minute); ; {
		resp, err := http.Get(base + "/api/csrf")
		if err == nil {
			resp.Body.Close()
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not answer within 2 minutes: %v\n%s", err, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// previewAgrees compares the preview on screen with the server's answer
// to the form on screen (its fields as they are now): the run count and
// every cell of the matrix with its title (why it cannot start, or the
// estimate). It returns "" when they agree, else the difference.
const previewAgrees = `(async () => {
	const form = document.getElementById('experiment-form');
	const body = new URLSearchParams(new FormData(form));
	const tok = document.querySelector('meta[name="csrf-token"]').content;
	const r = await fetch('/experiments/preview', {method: 'POST', body,
		headers: {'Content-Type': 'application/x-www-form-urlencoded', 'X-CSRF-Token': tok, 'HX-Request': 'true'}});
	const d = document.createElement('div');
	d.innerHTML = await r.text();
	const sum = root => {
		const runs = root.querySelector('#preview-runs');
		const cells = Array.from(root.querySelectorAll('#preview-cells td')).map(td => td.textContent + ' ' + (td.title || ''));
		return (runs ? runs.textContent : 'no run count') + ' | ' + cells.join(' ; ');
	};
	if (r.status !== 200) return 'the server answers the form on screen with ' + r.status + ': ' + d.textContent.slice(0, 300);
	const want = sum(d), got = sum(document);
	return want === got ? '' : 'on screen: ' + got + '\n  the form on screen: ' + want;
})()`

// waitPreviewAgrees waits until the preview on screen is the server's
// answer to the form on screen.
func waitPreviewAgrees(t *testing.T, page context.Context, what string) {
	t.Helper()
	var diff string
	for deadline := time.Now().Add(15 * time.Second); ; {
		if diff = js[string](t, page, previewAgrees); diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: the preview does not answer the form on screen: %s", what, diff)
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestFreshDataDirInBrowser walks the new-experiment form as a new user
// does, on a real `outcore serve` with a fresh data directory holding the
// default dataset of `make run` (preset small, 100 MB of features): the
// form's first grid goes out of core at the example's batch and fanout
// and its runs start; the preview always answers the form on screen (as
// it is typed, after the browser restores it, generating from a preset
// with ginex ticked); Retry on a run's page goes to the new attempt; and
// every page fits a 1,280-pixel-wide window.
func TestFreshDataDirInBrowser(t *testing.T) {
	chrome := browserTest(t)
	bin := buildOutcore(t)
	dir := t.TempDir()
	base := startServe(t, bin, dir, "small")
	meta := dataset0(t, dir)
	fb := meta.FeatureBytes()
	page := browser(t, chrome)
	shot := func(name string) {
		if b, err := chromedp.Run(page, chromedp.FullScreenshot(100)); err == nil {
			saveShot(name, b)
		}
	}

	// 1. The form's first grid: the example's batch and fanout, limits
	// below the features.
	doIn(t, page, time.Minute, chromedp.Navigate(base+"/experiments/new"), chromedp.WaitVisible(chromedp.ID("create")))
	shot("form-fresh.png")
	limits := js[string](t, page, `document.getElementById('mem_limits').value`)
	below := 0
	for _, l := range splitList(limits) {
		b, err := units.ParseMemLimit(l, fb)
		if err != nil {
			t.Fatalf("default limit %q: %v", l, err)
		}
		if b < fb {
			below++
		}
	}
	if below < 2 {
		t.Errorf("the form's first limits %q: %d below the %s of features; the grid does not go out of core", limits, below, units.Bytes(fb))
	}
	if b, f := js[string](t, page, `document.getElementById('batches').value`), js[string](t, page, `document.getElementById('fanouts').value`); b != fmt.Sprint(ExampleBatch) || f != grid.FormatFanout(ExampleFanout()) {
		t.Errorf("the form's first batch %q and fanout %q, the example's %d and %s", b, f, ExampleBatch, grid.FormatFanout(ExampleFanout()))
	}
	if est := js[string](t, page, `(document.getElementById('preview-estimate') || {}).textContent || ''`); est == "" {
		t.Error("the form's first grid has no estimate")
	}
	waitPreviewAgrees(t, page, "the first render")

	// 2. The preview follows the form: typed fast, one value after another.
	typeInto(t, page, "fanouts", "10,10,10")
	typeInto(t, page, "fanouts", "10,5")
	waitPreviewAgrees(t, page, "fanout typed 10,10,10 then 10,5")
	typeInto(t, page, "fanouts", "25,25")
	waitPreviewAgrees(t, page, "fanout 25,25")
	// The browser restores the typed fields when the user comes back to
	// the page: the preview follows them, not the page's first render.
	// Browsers set restored values without input events, then fire
	// pageshow (headless Chromium here restores nothing on reload or back:
	// the test restores the field as a browser does).
	doIn(t, page, time.Minute, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("create")))
	waitJS(t, page, 10*time.Second, "htmx on the reloaded form", `!!window.htmx && !!document.getElementById('preview-cells')`)
	js[string](t, page, `(() => { document.getElementById('fanouts').value = '25,25'; window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: false})); return '' })()`)
	waitPreviewAgrees(t, page, "the form restored by the browser")
	// Generating from a preset with ginex ticked (a dataset not made yet).
	do(t, page, chromedp.Click(`input[name=dataset_mode][value=generate]`))
	choose(t, page, "preset", "tiny")
	typeInto(t, page, "new_dataset", "fresh-tiny")
	if !js[bool](t, page, `document.querySelector('input[name=variants][value=ginex]').checked`) {
		do(t, page, chromedp.Click(`input[name=variants][value=ginex]`))
	}
	waitPreviewAgrees(t, page, "generate from preset tiny with ginex")
	shot("form-generate-ginex.png")

	// 3. The first grid, as first shown, is created and its runs start.
	doIn(t, page, time.Minute, chromedp.Navigate(base+"/experiments/new"), chromedp.WaitVisible(chromedp.ID("create")))
	js[string](t, page, `(() => { const f = document.getElementById('experiment-form'); f.reset(); return '' })()`)
	do(t, page, chromedp.Click(chromedp.ID("create")))
	exID := experimentOnPage(t, page)
	var started newcomerRun
	for deadline := time.Now().Add(5 * time.Minute); started.ID == 0; {
		for _, r := range experimentRuns(t, page, exID) {
			if r.Status != "queued" && r.MemLimitBytes > 0 && r.MemLimitBytes < fb {
				started = r
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run of the form's first grid below the %s of features started within 5 minutes", units.Bytes(fb))
		}
		time.Sleep(time.Second)
	}
	if started.Status == "failed" || started.Status == "oom" {
		t.Errorf("run %d (%s at %s) ended %s: %s", started.ID, started.System, units.Bytes(started.MemLimitBytes), started.Status, started.Error)
	}

	// 4. Retry on a run's page goes to the new attempt.
	apiPost(t, page, fmt.Sprintf("/api/runs/%d/cancel", started.ID), "{}")
	doIn(t, page, time.Minute, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, started.ID)))
	waitJS(t, page, time.Minute, "the retry button of the cancelled run", `!!document.getElementById('retry-run')`)
	do(t, page, chromedp.Click(chromedp.ID("retry-run")))
	waitJS(t, page, 20*time.Second, "the new attempt's page",
		fmt.Sprintf(`/^\/runs\/\d+$/.test(location.pathname) && location.pathname !== '/runs/%d' && !!document.getElementById('epochs')`, started.ID))
	var retried int64
	fmt.Sscanf(js[string](t, page, `location.pathname`), "/runs/%d", &retried)
	if got := js[string](t, page, fmt.Sprintf(`(async () => String((await (await fetch('/api/runs/%d')).json()).retry_of || 0))()`, retried)); got != fmt.Sprint(started.ID) {
		t.Errorf("after Retry on run %d the page is run %d, whose retry_of is %s", started.ID, retried, got)
	}

	// 5. Every page fits a 1,280-pixel-wide window: nothing scrolls
	// sideways.
	other := apiPost(t, page, "/api/experiments", `{"name":"second","dataset":"default","system":"reference","mem_limit":"50%","epochs":1}`)
	otherID, _ := other["id"].(float64)
	do(t, page, chromedp.EmulateViewport(1280, 900))
	for _, p := range []string{"/experiments", fmt.Sprintf("/experiments/%d", exID), fmt.Sprintf("/runs/%d", started.ID),
		fmt.Sprintf("/runs/%d", retried), "/experiments/new", "/datasets", "/reproduce", "/runs",
		fmt.Sprintf("/compare?exp=%d&exp=%d&mixed=ok", exID, int64(otherID))} {
		doIn(t, page, time.Minute, chromedp.Navigate(base+p), chromedp.WaitReady("main"))
		time.Sleep(time.Second) // charts and fragments drawn
		w := js[int](t, page, `document.documentElement.scrollWidth`)
		if w > 1280 {
			wide := js[string](t, page, `Array.from(document.querySelectorAll('main *')).filter(el => el.getBoundingClientRect().right > 1281).slice(0, 5).map(el => el.tagName + (el.id ? '#' + el.id : '') + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().right)).join(', ')`)
			t.Errorf("%s is %d px wide in a 1280 px window (widest: %s)", p, w, wide)
		}
		saveShot("w1280"+strings.NewReplacer("/", "_", "?", "_", "&", "_", "=", "").Replace(p)+".png", func() []byte {
			b, _ := chromedp.Run(page, chromedp.FullScreenshot(100))
			return b
		}())
	}
}

// experimentRuns reads an experiment's runs through the API.
func experimentRuns(t *testing.T, page context.Context, id int64) []newcomerRun {
	t.Helper()
	raw := js[string](t, page, fmt.Sprintf(`(async () => JSON.stringify(await (await fetch('/api/experiments/%d/runs')).json()))()`, id))
	var v struct {
		Runs []newcomerRun `json:"runs"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("runs of experiment %d: %v: %s", id, err, raw)
	}
	return v.Runs
}
