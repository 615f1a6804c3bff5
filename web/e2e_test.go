package web

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"log"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"outcore/experiments/studies"

	"github.com/chromedp/chromedp"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments"
	"outcore/experiments/grid"
	"outcore/report"
	"outcore/store"
)

// The end-to-end test drives a real headless Chromium against a real
// server: the real experiment queue runs real `outcore train` children on
// the tiny dataset, and the page follows them over the live stream.

// findChromium returns Debian's chromium, or "" when it is not installed.
func findChromium() string {
	for _, p := range []string{os.Getenv("OUTCORE_CHROMIUM"), "/usr/bin/chromium"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

// buildOutcore builds the outcore binary the queue runs as children.
func buildOutcore(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "outcore")
	cmd := exec.Command("go", "build", "-o", bin, "outcore/cmd/outcore")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build outcore: %v\n%s", err, out)
	}
	return bin
}

// browserTest skips t under -short (the browser tests run in the full
// pass) and where Chromium is not installed, and returns its path.
func browserTest(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the browser test runs in the full pass (go test without -short)")
	}
	chrome := findChromium()
	if chrome == "" {
		t.Skip("chromium is not installed (scripts/install-deps.sh installs Debian's chromium): skipping the browser test")
	}
	return chrome
}

// browser starts headless Chromium with the flags that work as root here.
func browser(t *testing.T, chrome string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// Pages in background tabs must not be throttled: the test times them.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // start the browser now
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// js evaluates an expression in the page.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS polls a boolean expression until it holds.
func waitJS(t *testing.T, ctx context.Context, d time.Duration, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s (last error %v)", d, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// typeInto clears an input, then types text into it key by key.
func typeInto(t *testing.T, ctx context.Context, id, text string) {
	t.Helper()
	js[string](t, ctx, fmt.Sprintf(`(el => { el.value = ''; return el.value })(document.getElementById(%q))`, id))
	do(t, ctx, chromedp.SendKeys(chromedp.ID(id), text))
}

// choose picks an option of a select as a user would (value, then change event).
func choose(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	got := js[string](t, ctx, fmt.Sprintf(`(el => { el.value = %q; el.dispatchEvent(new Event('change', {bubbles: true})); return el.value })(document.getElementById(%q))`, value, id))
	if got != value {
		t.Fatalf("select %s has no option %q", id, value)
	}
}

// nonBlank checks that a PNG is not a blank (single-colour) picture: a
// share of its pixels must differ from the background (the corner colour).
func nonBlank(t *testing.T, what string, b []byte, minShare float64) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", what, err)
	}
	bg := img.At(img.Bounds().Min.X, img.Bounds().Min.Y)
	br, bgc, bb, _ := bg.RGBA()
	var differ, total int
	colours := map[[3]uint32]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			total++
			if pr != br || pg != bgc || pb != bb {
				differ++
			}
			if len(colours) < 64 {
				colours[[3]uint32{pr >> 12, pg >> 12, pb >> 12}] = true
			}
		}
	}
	share := float64(differ) / float64(total)
	if share < minShare || len(colours) < 3 {
		t.Errorf("%s looks blank: %.2f%% of pixels differ from the background, %d colours", what, 100*share, len(colours))
	}
}

// saveShot keeps a screenshot when OUTCORE_E2E_SHOTS names a folder.
func saveShot(name string, b []byte) {
	if dir := os.Getenv("OUTCORE_E2E_SHOTS"); dir != "" {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
}

func TestEndToEndBrowser(t *testing.T) {
	chrome := browserTest(t)
	bin := buildOutcore(t)

	dir := t.TempDir()
	copyDir(t, tinyDir, filepath.Join(dataset.DatasetsDir(dir), "tiny"))
	ctx, stop := context.WithCancel(context.Background())
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	logf := func(format string, a ...any) {
		logMu.Lock()
		fmt.Fprintf(&logs, format+"\n", a...)
		logMu.Unlock()
	}
	mgr, err := experiments.New(experiments.Options{DataDir: dir, Store: st, Binary: bin, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(ctx, Config{Store: st, Queue: mgr, DataDir: dir, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); srv.Serve(ctx, ln) }()
	go func() { defer wg.Done(); mgr.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		wg.Wait()
		mgr.Close()
		st.Close()
		if t.Failed() {
			logMu.Lock()
			t.Logf("runner log:\n%s", logs.String())
			logMu.Unlock()
		}
	})

	page := browser(t, chrome)

	// 1. The form: fill it in, see the live preview and inline errors, submit.
	do(t, page, chromedp.Navigate(base+"/experiments/new"), chromedp.WaitVisible(chromedp.ID("create")))
	choose(t, page, "dataset", "tiny")
	typeInto(t, page, "name", "e2e on tiny")
	for _, v := range Variants() {
		want := v == "pyg+" || v == "gnndrive"
		checked := js[bool](t, page, fmt.Sprintf(`document.querySelector('input[name=variants][value=%q]').checked`, v))
		if checked != want {
			do(t, page, chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[name=variants][value=%q]`, v))))
		}
	}
	// A limit no variant can start in: the preview marks its cells, and a
	// submit lists every problem in words (the queue's one validation),
	// unless the cells that cannot start are skipped (the form's default,
	// as the example's): not here.
	if js[bool](t, page, `document.getElementById('skip_infeasible').checked`) {
		do(t, page, chromedp.Click(chromedp.ID("skip_infeasible")))
	}
	typeInto(t, page, "mem_limits", "1MiB, 64MiB")
	typeInto(t, page, "batches", "1024")
	typeInto(t, page, "fanouts", "5,5")
	typeInto(t, page, "epochs", "2")
	typeInto(t, page, "repeats", "0")
	waitJS(t, page, 10*time.Second, "the inline error under repeats",
		`document.getElementById('err-repeats').textContent.includes('repeats')`)
	waitJS(t, page, 10*time.Second, "the preview to mark the 1 MiB cells impossible",
		`document.querySelectorAll('#preview-cells td[data-impossible]').length === 2 &&
		 Array.from(document.querySelectorAll('#preview-cells td[data-impossible]')).every(td => td.title.includes('cannot start:') && td.title.includes('needs to start on tiny'))`)
	typeInto(t, page, "repeats", "2")
	waitJS(t, page, 10*time.Second, "the preview to list the 1 MiB problems",
		`document.getElementById('err-mem_limits').textContent.includes('needs to start') && document.getElementById('err-repeats').textContent === ''`)
	do(t, page, chromedp.Click(chromedp.ID("create")))
	waitJS(t, page, 20*time.Second, "the submitted form shown again with its problems",
		`location.pathname === '/experiments' && document.readyState === 'complete' && !!document.getElementById('err-mem_limits') &&
		 document.getElementById('err-mem_limits').textContent.includes('needs to start')`)
	problems := js[string](t, page, `document.getElementById('err-mem_limits').textContent`)
	for _, v := range []string{"pyg+", "gnndrive"} {
		if !strings.Contains(problems, `"1MiB" is 1MiB, below the`) || !strings.Contains(problems, "that "+v+" needs to start on tiny") {
			t.Errorf("the submit's problems do not say why %s cannot run at 1 MiB: %q", v, problems)
		}
	}
	shot, err := chromedp.Run(page, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	nonBlank(t, "form with problems", shot, 0.05)
	saveShot("new-problems.png", shot)
	typeInto(t, page, "mem_limits", "64MiB, 128MiB")
	typeInto(t, page, "repeats", "2")
	waitJS(t, page, 10*time.Second, "the preview to count 8 runs without errors",
		`document.getElementById('preview-runs').textContent.trim() === '8' && document.getElementById('err-repeats').textContent === ''`)
	shot, err = chromedp.Run(page, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	nonBlank(t, "new-experiment form", shot, 0.05)
	saveShot("new.png", shot)
	do(t, page, chromedp.Click(chromedp.ID("create")))
	waitJS(t, page, 20*time.Second, "the experiment page", `/\/experiments\/\d+$/.test(location.pathname) && !!document.getElementById('queue-rows')`)
	loc := js[string](t, page, `location.pathname`)
	expID, _ := strconv.ParseInt(strings.TrimPrefix(loc, "/experiments/"), 10, 64)
	xp, err := st.Experiment(ctx, expID)
	if err != nil || xp.Name != "e2e on tiny" || xp.Counts.Total != 8 {
		t.Fatalf("stored experiment %+v, %v", xp, err)
	}
	runs, _ := st.Runs(ctx, store.RunFilter{ExperimentID: expID, Current: true})

	// A second tab follows the last run's page from before it starts and
	// notes when each epoch row appears.
	runTab, cancelTab := chromedp.NewContext(page)
	defer cancelTab()
	last := runs[len(runs)-1]
	do(t, runTab, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, last.ID)), chromedp.WaitVisible(chromedp.ID("epoch-rows")))
	js[chromedp.Void](t, runTab, `window.__arrivals = {};
		new MutationObserver(() => document.querySelectorAll('#epoch-rows tr').forEach(r => {
			if (!(r.id in window.__arrivals)) window.__arrivals[r.id] = Date.now();
		})).observe(document.getElementById('epoch-rows'), {childList: true}); true`)

	// Note when the hub publishes each update of the last run's page.
	published := map[int64]time.Time{}
	var pubMu sync.Mutex
	go func() {
		cursor := srv.Hub().LastID()
		for ctx.Err() == nil {
			evs, _, _, wake := srv.Hub().Since(RunScope(last.ID), cursor)
			pubMu.Lock()
			for _, ev := range evs {
				published[ev.ID] = time.Now()
				cursor = ev.ID
			}
			pubMu.Unlock()
			select {
			case <-wake:
			case <-ctx.Done():
			}
		}
	}()

	// 2. Watch the runs finish live: no reload, rows change status in place.
	js[chromedp.Void](t, page, `window.__noReload = 42; window.__seen = {};
		setInterval(() => document.querySelectorAll('#queue-rows tr').forEach(r => window.__seen[r.dataset.status] = true), 50); true`)
	waitJS(t, page, 5*time.Minute, "all 8 runs to finish on the page",
		`document.querySelectorAll('#queue-rows tr[data-status=done], #queue-rows tr[data-status=oom], #queue-rows tr[data-status=failed]').length === 8`)
	if !js[bool](t, page, `window.__noReload === 42 && window.__seen.running === true && window.__seen.done === true`) {
		t.Error("the page did not follow the runs live (reloaded, or never showed a running run)")
	}
	if got := js[string](t, page, `document.getElementById('live-text').textContent`); got != "live" {
		t.Errorf("live indicator says %q", got)
	}
	runs, _ = st.Runs(ctx, store.RunFilter{ExperimentID: expID, Current: true})
	measured := map[string]bool{} // grid points with a finished run: one time-to-accuracy line each
	for _, r := range runs {
		if !store.Finished(r.Status) {
			t.Fatalf("run %d is %s in the store but finished on the page", r.ID, r.Status)
		}
		if r.Status == store.StatusDone {
			measured[fmt.Sprint(r.System, r.MemLimitBytes)] = true
		}
		if r.Status == store.StatusFailed {
			t.Errorf("run %d failed: %s\n%s", r.ID, r.Error, r.StderrTail)
		}
	}
	if len(measured) == 0 {
		t.Fatal("no run finished as done")
	}

	// 3. Every chart renders (SVG in the DOM, a non-blank picture).
	waitJS(t, page, 20*time.Second, "the charts to show every finished run",
		fmt.Sprintf(`document.querySelector('[data-chart=time-to-accuracy]').getAttribute('data-series') === '%d'`, len(measured)))
	type chartState struct {
		ID, Rendered, Text string
		Paths              int
	}
	states := js[[]chartState](t, page, `Array.from(document.querySelectorAll('[data-chart]')).map(el => ({
		ID: el.dataset.chart, Rendered: el.dataset.rendered || '', Text: el.textContent.trim(),
		Paths: el.querySelectorAll('svg path, svg rect, svg line').length}))`)
	if len(states) != len(report.ChartIDs)-1 {
		t.Errorf("%d charts on the page, want %d", len(states), len(report.ChartIDs)-1)
	}
	mustDraw := map[string]bool{"epoch-vs-mem": true, "normalised": true, "stages": true, "disk-read": true,
		"amplification": true, "time-to-accuracy": true}
	for _, s := range states {
		switch s.Rendered {
		case "chart":
			if s.Paths < 5 {
				t.Errorf("chart %s has an SVG with %d shapes", s.ID, s.Paths)
				continue
			}
			b, err := chromedp.Run(page, chromedp.Screenshot(chromedp.CSS(`[data-chart="`+s.ID+`"]`)))
			if err != nil {
				t.Fatalf("screenshot %s: %v", s.ID, err)
			}
			nonBlank(t, "chart "+s.ID, b, 0.02)
			saveShot("chart-"+s.ID+".png", b)
		case "empty":
			if mustDraw[s.ID] || s.Text == "" {
				t.Errorf("chart %s shows no data: %q", s.ID, s.Text)
			}
		default:
			t.Errorf("chart %s not rendered (data-rendered=%q)", s.ID, s.Rendered)
		}
	}
	// The stage breakdown the page draws is wall-clock: each bar's stacked
	// total is within 5 % of its epoch time, for every variant.
	checkStageStacks(t, page, "experiment")

	// The runs view: one line per run across parallel axes, regrouped on
	// demand.
	waitJS(t, page, 20*time.Second, "the runs view to draw every run",
		`document.getElementById('runs-parallel').dataset.lines === '8' && document.querySelectorAll('#run-groups tbody tr').length > 0`)
	if n := js[int](t, page, `document.querySelectorAll('#runs-parallel svg path').length`); n < 8 {
		t.Errorf("runs view has %d SVG paths for 8 runs", n)
	}
	js[chromedp.Void](t, page, `const g = document.getElementById('group-by'); g.value = 'mem_limit'; g.dispatchEvent(new Event('change', {bubbles: true})); true`)
	waitJS(t, page, 20*time.Second, "the runs view to regroup by memory limit",
		`document.getElementById('runs-parallel').dataset.groupBy === 'mem_limit' && Array.from(document.querySelectorAll('#run-groups tbody tr')).every(r => /MiB|GiB/.test(r.dataset.group))`)
	if b, err := chromedp.Run(page, chromedp.Screenshot(chromedp.CSS("#runs-view"))); err == nil {
		nonBlank(t, "runs view", b, 0.02)
		saveShot("runs-view.png", b)
	}
	shot, err = chromedp.Run(page, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	nonBlank(t, "experiment page", shot, 0.05)
	saveShot("experiment.png", shot)

	// 4. The CSV the page links to matches the database.
	fetchText := func(href string) string {
		return js[string](t, page, fmt.Sprintf(`fetch(%q).then(r => r.ok ? r.text() : Promise.reject(r.status))`, href))
	}
	epochsHref := js[string](t, page, `document.getElementById('export-epochs').getAttribute('href')`)
	rows, err := csv.NewReader(strings.NewReader(fetchText(epochsHref))).ReadAll()
	if err != nil {
		t.Fatalf("epochs CSV: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, c := range []string{"run_id", "epoch", "epoch_s", "val_acc", "bytes_read"} {
		if _, ok := col[c]; !ok {
			t.Fatalf("epochs CSV lacks column %s: %v", c, rows[0])
		}
	}
	want := map[string]store.Epoch{}
	for _, r := range runs {
		eps, err := st.Epochs(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range eps {
			want[fmt.Sprintf("%d/%d", r.ID, e.EpochRecord.Epoch)] = e
		}
	}
	if len(rows)-1 != len(want) {
		t.Errorf("epochs CSV has %d rows, the store %d epochs", len(rows)-1, len(want))
	}
	for _, row := range rows[1:] {
		key := row[col["run_id"]] + "/" + row[col["epoch"]]
		e, ok := want[key]
		if !ok {
			t.Errorf("CSV row %s not in the store", key)
			continue
		}
		for name, v := range map[string]float64{"epoch_s": e.EpochS, "val_acc": e.ValAcc, "bytes_read": float64(e.BytesRead)} {
			got, err := strconv.ParseFloat(row[col[name]], 64)
			if err != nil || got != v {
				t.Errorf("CSV %s %s = %q, store %v", key, name, row[col[name]], v)
			}
		}
	}
	runsCSV, err := csv.NewReader(strings.NewReader(fetchText(js[string](t, page,
		`document.getElementById('export-runs').getAttribute('href')`)))).ReadAll()
	if err != nil || len(runsCSV) != len(runs)+1 {
		t.Fatalf("runs CSV: %d rows, %v", len(runsCSV), err)
	}
	rc := map[string]int{}
	for i, h := range runsCSV[0] {
		rc[h] = i
	}
	status := map[string]string{}
	for _, r := range runs {
		status[strconv.FormatInt(r.ID, 10)] = r.Status
	}
	for _, row := range runsCSV[1:] {
		if status[row[rc["run_id"]]] != row[rc["status"]] {
			t.Errorf("runs CSV: run %s is %q, store %q", row[rc["run_id"]], row[rc["status"]], status[row[rc["run_id"]]])
		}
	}
	for _, f := range []string{"epoch-vs-mem.csv", "epoch-vs-mem.svg", "stages.pdf"} {
		if b := fetchText(fmt.Sprintf("/experiments/%d/charts/%s", expID, f)); len(b) < 100 {
			t.Errorf("%s: %d bytes", f, len(b))
		}
	}

	// 5. Epoch rows reached the run page within a second of the runner
	// receiving them from the child (store received_at vs the browser clock).
	arrivals := js[map[string]float64](t, runTab, `window.__arrivals`)
	eps, _ := st.Epochs(ctx, last.ID)
	if len(eps) == 0 {
		t.Fatalf("run %d has no epochs", last.ID)
	}
	for _, e := range eps {
		id := fmt.Sprintf("epoch-%d-%d", last.ID, e.EpochRecord.Epoch)
		at, ok := arrivals[id]
		if !ok {
			t.Errorf("epoch row %s never appeared live on the run page", id)
			continue
		}
		lag := time.UnixMilli(int64(at)).Sub(e.ReceivedAt)
		var pub time.Duration
		evs, _ := st.RunEvents(ctx, last.ID, store.EventEpoch)
		pubMu.Lock()
		for _, ev := range evs {
			if strings.HasPrefix(ev.Msg, fmt.Sprintf("epoch %d:", e.EpochRecord.Epoch)) {
				pub = published[ev.ID].Sub(e.ReceivedAt)
			}
		}
		pubMu.Unlock()
		t.Logf("epoch %d of run %d: published %v and on the page %v after the runner received it", e.EpochRecord.Epoch, last.ID, pub, lag)
		if lag > time.Second {
			t.Errorf("epoch row %s appeared %v after the runner received it (> 1 s; the hub published it after %v)", id, lag, pub)
		}
	}
	if n := js[int](t, runTab, `document.querySelectorAll('#epoch-rows tr').length`); n != len(eps) {
		t.Errorf("run page shows %d epoch rows, store has %d (duplicates or losses)", n, len(eps))
	}
	waitJS(t, runTab, 20*time.Second, "the run page's charts",
		`Array.from(document.querySelectorAll('[data-chart]')).every(el => el.dataset.rendered === 'chart')`)
	shot, err = chromedp.Run(runTab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	nonBlank(t, "run page", shot, 0.05)
	saveShot("run.png", shot)

	// 6. The experiment list shows it finished.
	do(t, page, chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(chromedp.ID(fmt.Sprintf("exp-%d", expID))))
	if got := js[string](t, page, fmt.Sprintf(`document.getElementById('exp-%d').dataset.state`, expID)); got != "finished" {
		t.Errorf("list shows the experiment as %q", got)
	}
	shot, _ = chromedp.Run(page, chromedp.FullScreenshot(100))
	nonBlank(t, "experiment list", shot, 0.05)
	saveShot("list.png", shot)

	e2eTagsAndFilter(t, page, base, expID)
	e2eBundle(t, ctx, page, st, base, expID)
	e2eCancelAndRequeue(t, ctx, page, st, base)
	e2eCompare(t, ctx, page, st, base, expID)

	do(t, page, chromedp.Navigate(base+"/datasets"), chromedp.WaitVisible(chromedp.ID("dataset-tiny")))
	shot, _ = chromedp.Run(page, chromedp.FullScreenshot(100))
	nonBlank(t, "datasets page", shot, 0.05)
	saveShot("datasets.png", shot)
}

// submitForm submits a form as its button would (its submit event first).
func submitForm(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	js[chromedp.Void](t, ctx, fmt.Sprintf(`document.getElementById(%q).requestSubmit(); true`, id))
}

// e2eTagsAndFilter tags the experiment from its page, then finds it in the
// list by tag and outcome, and not by another tag.
func e2eTagsAndFilter(t *testing.T, page context.Context, base string, expID int64) {
	do(t, page, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, expID)), chromedp.WaitVisible(chromedp.ID("meta-card")))
	js[chromedp.Void](t, page, `document.getElementById('meta-card').open = true; true`)
	typeInto(t, page, "meta-tags", "paper e2e")
	typeInto(t, page, "meta-notes", "the browser test's grid")
	submitForm(t, page, "meta-form")
	waitJS(t, page, 20*time.Second, "the tags on the experiment page",
		`!!document.querySelector('.sub .tag[data-tag=paper]') && !!document.querySelector('.sub .tag[data-tag=e2e]') && (document.getElementById('experiment-notes') || {}).textContent === "the browser test's grid"`)
	do(t, page, chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(chromedp.ID("filter")))
	typeInto(t, page, "filter", "tag=paper outcome=done limit<=128MiB")
	submitForm(t, page, "filter-form")
	waitJS(t, page, 20*time.Second, "the filtered list to show the experiment",
		fmt.Sprintf(`location.search.includes('q=') && !!document.getElementById('exp-%d') && document.getElementById('filter-count').textContent.startsWith('1 of')`, expID))
	shot, err := chromedp.Run(page, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	nonBlank(t, "filtered list", shot, 0.05)
	saveShot("list-filtered.png", shot)
	typeInto(t, page, "filter", "tag=nope")
	submitForm(t, page, "filter-form")
	waitJS(t, page, 20*time.Second, "the list to say nothing matches", `!!document.getElementById('no-match')`)
	typeInto(t, page, "filter", "limit<12XB")
	submitForm(t, page, "filter-form")
	waitJS(t, page, 20*time.Second, "the filter's error in words",
		`(document.getElementById('filter-error') || {textContent: ''}).textContent.includes('is not a size')`)
}

// fetchBytes fetches a URL in the page (its cookies) and returns the body.
func fetchBytes(t *testing.T, page context.Context, href string) []byte {
	t.Helper()
	b64 := js[string](t, page, fmt.Sprintf(`fetch(%q).then(r => r.ok ? r.arrayBuffer() : Promise.reject(r.status)).then(buf => {
		let s = ''; const b = new Uint8Array(buf);
		for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
		return btoa(s); })`, href))
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("%s: %v", href, err)
	}
	return b
}

// e2eBundle downloads the paper bundle the experiment page links to and
// checks it against the database: CSV rows, SVG and PDF that parse, "±"
// in the PDF's text.
func e2eBundle(t *testing.T, ctx, page context.Context, st *store.Store, base string, expID int64) {
	do(t, page, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, expID)), chromedp.WaitVisible(chromedp.ID("export-bundle")))
	href := js[string](t, page, `document.getElementById('export-bundle').getAttribute('href')`)
	b := fetchBytes(t, page, href)
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("bundle is not a zip (%d bytes): %v", len(b), err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	runs, _ := st.Runs(ctx, store.RunFilter{ExperimentID: expID})
	rows, err := csv.NewReader(bytes.NewReader(files["runs.csv"])).ReadAll()
	if err != nil || len(rows) != len(runs)+1 {
		t.Errorf("bundle runs.csv: %d rows for %d runs (%v)", len(rows)-1, len(runs), err)
	}
	want := map[string]string{}
	epochs := 0
	for _, r := range runs {
		want[strconv.FormatInt(r.ID, 10)] = r.Status
		eps, _ := st.Epochs(ctx, r.ID)
		epochs += len(eps)
	}
	if len(rows) > 0 {
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		for _, row := range rows[1:] {
			if want[row[col["run_id"]]] != row[col["status"]] {
				t.Errorf("bundle runs.csv: run %s is %q, the store says %q", row[col["run_id"]], row[col["status"]], want[row[col["run_id"]]])
			}
		}
	}
	if er, err := csv.NewReader(bytes.NewReader(files["epochs.csv"])).ReadAll(); err != nil || len(er)-1 != epochs {
		t.Errorf("bundle epochs.csv: %d rows, the store %d epochs (%v)", len(er)-1, epochs, err)
	}
	figures := 0
	for name, body := range files {
		switch {
		case strings.HasSuffix(name, ".svg"):
			figures++
			dec := xml.NewDecoder(bytes.NewReader(body))
			for {
				_, err := dec.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Errorf("%s does not parse: %v", name, err)
					break
				}
			}
		case strings.HasSuffix(name, ".pdf"):
			txt, err := report.PDFText(body)
			if err != nil || !strings.Contains(txt, "±") || strings.Contains(txt, "Â") {
				t.Errorf("%s: text %q (%v)", name, txt, err)
			}
			if !strings.Contains(txt, fmt.Sprintf("experiment %d", expID)) {
				t.Errorf("%s does not name experiment %d in its metadata", name, expID)
			}
		}
	}
	if figures < 5 {
		t.Errorf("bundle holds %d SVG figures", figures)
	}
	for _, name := range []string{"grid.json", "host.json", "VERSION", "README.md", "replot.py", "charts/stages.csv"} {
		if len(files[name]) == 0 {
			t.Errorf("bundle lacks %s", name)
		}
	}
}

// apiPost posts JSON from the page with its CSRF token.
func apiPost(t *testing.T, page context.Context, path, body string) map[string]any {
	t.Helper()
	return js[map[string]any](t, page, fmt.Sprintf(`fetch(%q, {method: 'POST', headers: {'Content-Type': 'application/json',
		'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content}, body: %q}).then(r => r.json())`, path, body))
}

// e2eCancelAndRequeue cancels a running experiment from its page (the
// button asks first), sees its runs cancelled, not failed, and requeues them.
func e2eCancelAndRequeue(t *testing.T, ctx, page context.Context, st *store.Store, base string) {
	x := apiPost(t, page, "/api/experiments", `{"name":"e2e cancel","dataset":"tiny","model":"sage","epochs":1000,"axes":{"system":["gnndrive"],"mem_limit":["128MiB"],"repeat":2}}`)
	id, ok := x["id"].(float64)
	if !ok {
		t.Fatalf("create through the API: %v", x)
	}
	do(t, page, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, int64(id))), chromedp.WaitVisible(chromedp.ID("queue-rows")))
	waitJS(t, page, 2*time.Minute, "a run of the long experiment to run", `!!document.querySelector('#queue-rows tr[data-status=running]')`)
	js[chromedp.Void](t, page, `window.__asked = []; window.confirm = m => { window.__asked.push(m); return true; }; true`)
	do(t, page, chromedp.Click(chromedp.ID("cancel-experiment")))
	waitJS(t, page, 60*time.Second, "both runs shown cancelled",
		`document.querySelectorAll('#queue-rows tr[data-status=cancelled]').length === 2 && document.getElementById('count-cancelled').textContent.trim() === '2'`)
	if asked := js[[]string](t, page, `window.__asked`); len(asked) != 1 || !strings.Contains(asked[0], "Cancel the 1 queued and 1 running run(s)") {
		t.Errorf("cancel asked %q", asked)
	}
	if st := js[string](t, page, `document.querySelector('#experiment-summary [data-status]').dataset.status`); st != "cancelled" {
		t.Errorf("experiment reads %q after cancel", st)
	}
	shot, _ := chromedp.Run(page, chromedp.FullScreenshot(100))
	nonBlank(t, "cancelled experiment", shot, 0.05)
	saveShot("experiment-cancelled.png", shot)
	charts := js[string](t, page, fmt.Sprintf(`fetch('/experiments/%d/charts.json').then(r => r.text())`, int64(id)))
	if !strings.Contains(charts, `"status":"cancelled"`) || strings.Contains(charts, `"status":"failed"`) {
		t.Error("chart cells of cancelled runs do not say cancelled")
	}
	do(t, page, chromedp.Click(chromedp.ID("requeue-experiment")))
	waitJS(t, page, 60*time.Second, "the requeued runs", `document.querySelectorAll('#queue-rows tr[data-status=queued], #queue-rows tr[data-status=running]').length === 2`)
	runs, _ := st.Runs(ctx, store.RunFilter{ExperimentID: int64(id), Current: true})
	for _, r := range runs {
		if r.Attempt != 2 {
			t.Errorf("run %d is attempt %d after requeue", r.ID, r.Attempt)
		}
	}
	apiPost(t, page, fmt.Sprintf("/api/experiments/%d/cancel", int64(id)), "")
	waitJS(t, page, 60*time.Second, "the second cancel", `document.querySelectorAll('#queue-rows tr[data-status=cancelled]').length === 2`)
}

// e2eCompare runs a small second grid, ticks it and the first in the list
// and compares them.
func e2eCompare(t *testing.T, ctx, page context.Context, st *store.Store, base string, expID int64) {
	x := apiPost(t, page, "/api/experiments", `{"name":"e2e again","dataset":"tiny","model":"sage","epochs":2,"batch_size":1024,"fanout":"5,5","axes":{"system":["pyg+"],"mem_limit":["64MiB"],"repeat":1}}`)
	id, ok := x["id"].(float64)
	if !ok {
		t.Fatalf("create through the API: %v", x)
	}
	waitFor(t, 3*time.Minute, "the second grid to finish", func() bool {
		e, err := st.Experiment(ctx, int64(id))
		return err == nil && e.Counts.Finished() == e.Counts.Total
	})
	do(t, page, chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(chromedp.ID("compare-selected")))
	for _, eid := range []int64{expID, int64(id)} {
		do(t, page, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#exp-%d input[name=exp]`, eid))))
	}
	do(t, page, chromedp.Click(chromedp.ID("compare-selected")))
	waitJS(t, page, 30*time.Second, "the comparison's charts",
		`location.pathname === '/compare' && (document.querySelector('[data-chart=epoch-vs-mem]') || {dataset: {}}).dataset.rendered === 'chart'`)
	if n := js[int](t, page, `document.querySelectorAll('#changes tbody tr').length`); n < 1 {
		t.Errorf("the comparison lists %d changed cells, want pyg+ at 64 MiB", n)
	}
	series := js[string](t, page, `fetch(document.getElementById('charts-root').dataset.chartsUrl).then(r => r.text())`)
	for _, eid := range []int64{expID, int64(id)} {
		if !strings.Contains(series, fmt.Sprintf("exp #%d", eid)) {
			t.Errorf("the comparison's charts have no series of experiment %d", eid)
		}
	}
	shot, _ := chromedp.Run(page, chromedp.FullScreenshot(100))
	nonBlank(t, "comparison page", shot, 0.05)
	saveShot("compare.png", shot)
}

// TestReproduceBrowser: on the Reproduce page every study is one click:
// Start creates its experiment (one run per system and limit, the
// variants' own options included) and lands on the experiment page,
// whose study table shows the paper's numbers beside ours (pending until
// runs finish; the queue is not running here, and the variants' memory
// floors are the queue's own tests).
func TestReproduceBrowser(t *testing.T) {
	chrome := browserTest(t)
	e := newEnvWith(t, t.TempDir(), func(o *experiments.Options) {
		o.MinMemory = func(train.Config, dataset.Meta) int64 { return 0 }
	})
	studyDataset(t, e.dir)
	addr, stop, served := serveLoopback(t, e.srv)
	base := "http://" + addr
	t.Cleanup(func() { stop(); <-served })

	page := browser(t, chrome)
	for _, s := range studies.Papers() {
		do(t, page, chromedp.Navigate(base+"/reproduce"), chromedp.WaitVisible(chromedp.ID("start-on-"+s.ID)))
		choose(t, page, "dataset-"+s.ID, "tiny8")
		do(t, page, chromedp.Click(chromedp.ID("start-on-"+s.ID)))
		waitJS(t, page, 20*time.Second, "the experiment page of "+s.ID,
			fmt.Sprintf(`/\/experiments\/\d+$/.test(location.pathname) && document.getElementById('study-table') !== null && document.getElementById('study-table').dataset.study === %q`, s.ID))
		runs := js[int](t, page, `document.querySelectorAll('#queue-rows tr').length`)
		// one run per cell: per system and limit, times the values of any
		// other axis the study sweeps (GNNDrive Fig. 10's batch sizes)
		own, err := s.Grid("")
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		g, err := grid.ParseGrid(own)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		if want := len(g.Cells()); runs != want {
			t.Errorf("%s: %d runs on the page, want %d", s.ID, runs, want)
		}
		rows := js[int](t, page, `document.querySelectorAll('#study-rows tbody tr').length`)
		// a row per system and limit, times the cells of the axes a run
		// keeps in its configuration (the structure studies' ids axis)
		wantRows := len(s.Systems) * len(s.MemLimits) * max(1, len(g.Axes.IDs))
		for _, ax := range g.Axes.Extra {
			wantRows *= len(ax.Values)
		}
		if rows != wantRows {
			t.Errorf("%s: %d rows in the study table, want %d", s.ID, rows, wantRows)
		}
		// the paper's numbers are on the page, ours pending
		for _, p := range s.Points {
			sel := fmt.Sprintf(`#study-rows tr[data-system=%q][data-limit=%q] td.paper`, p.System, p.MemLimit)
			got := js[string](t, page, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ''`, sel))
			// in the metric's unit: seconds, or a ratio (DiskGNN Fig. 12's blowup)
			if want := studyValue(s.Metric, p.Value); got != want {
				t.Errorf("%s: paper cell of %s at %s is %q, want %q", s.ID, p.System, p.MemLimit, got, want)
			}
		}
		ratios := js[string](t, page, `(document.getElementById('study-ratios') || {}).textContent || ''`)
		for _, r := range s.Ratios {
			if !strings.Contains(ratios, r.Paper) || !strings.Contains(ratios, "pending") {
				t.Errorf("%s: ratio table %q lacks %s's %s or the pending mark", s.ID, ratios, r.Label, r.Paper)
			}
		}
		shot, err := chromedp.Run(page, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		saveShot("reproduce-"+s.ID+".png", shot)
	}
	xs, err := e.st.ListExperiments(context.Background())
	if err != nil || len(xs) != len(studies.Papers()) {
		t.Fatalf("%d experiments for %d studies (%v)", len(xs), len(studies.Papers()), err)
	}
}

// checkStageStacks checks the stage breakdown of the experiment page open
// in page: it is wall-clock, so each bar's stacked total is within 5 % of
// its epoch time (the bar's marker), pipelined variants included. It
// returns the bars' categories.
func checkStageStacks(t *testing.T, page context.Context, what string) []string {
	t.Helper()
	type stackCheck struct {
		Cat          string
		Total, Epoch float64
	}
	stacks := js[[]stackCheck](t, page, `fetch(document.getElementById('charts-root').dataset.chartsUrl).then(r => r.json()).then(d => {
		const ch = d.charts.find(c => c.id === 'stages'); if (!ch) return []; const tot = {}, mark = {};
		ch.series.forEach(s => s.points.forEach(p => { if (p.y === null) return;
			if (s.role === 'marker') mark[p.x] = p.y; else tot[p.x] = (tot[p.x] || 0) + p.y; }));
		return Object.keys(mark).map(x => ({Cat: ch.categories[x], Total: tot[x] || 0, Epoch: mark[x]})); })`)
	if len(stacks) == 0 {
		t.Errorf("%s: the stage breakdown has no bar with an epoch time", what)
	}
	var cats []string
	for _, sc := range stacks {
		cats = append(cats, sc.Cat)
		if math.Abs(sc.Total-sc.Epoch) > 0.05*sc.Epoch {
			t.Errorf("%s: stage breakdown %s: stacked %.4f s, epoch time %.4f s", what, sc.Cat, sc.Total, sc.Epoch)
		}
	}
	return cats
}
