package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"outcore/experiments/studies"

	"github.com/chromedp/chromedp"

	"outcore/engine/dataset"
	"outcore/engine/devprofile"
	"outcore/engine/train"
	"outcore/internal/units"
)

// TestNewcomerPath walks what a new user does first, on a real `outcore
// serve` with a fresh data directory, as `make run` makes it (the default
// dataset from a preset — tiny here, to keep the test short — and the
// ready-to-start examples): start the example (the page says how many
// runs and how long first) and see every run end done, or listed as
// refused with its reason before it starts, and its stage breakdown add
// up to each epoch; start each study from the
// Reproduce page with its small-scale form and see it run; open a run
// that ran out of memory and see the limit its cgroup had.
func TestNewcomerPath(t *testing.T) {
	chrome := browserTest(t)
	bin := buildOutcore(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out strings.Builder
	cmd := exec.Command(bin, "serve", "--data-dir", dir, "--addr", addr, "--default-preset", "tiny", "--concurrency", "2")
	cmd.Stdout, cmd.Stderr = &out, &out
	// As a newcomer's: the storage is measured on the first start.
	cmd.Env = append(os.Environ(), devprofile.ProbeEnv+"=")
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
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := http.Get(base + "/api/csrf")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not answer within 60 s: %v\n%s", err, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	page := browser(t, chrome)

	// 0. The first start measures this host's storage in the background:
	// the pages say so until it ends, then say what it measured.
	doIn(t, page, time.Minute, chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(`[id="start-example-memory-limits.json"]`))
	if banner := js[string](t, page, `(document.getElementById('storage-probe') || {}).textContent || ''`); strings.Contains(banner, "Measuring this host's storage") {
		shot, _ := chromedp.Run(page, chromedp.FullScreenshot(100))
		saveShot("storage-probe.png", shot)
		waitJS(t, page, time.Minute, "the storage banner to say what was measured",
			`(document.getElementById('storage-probe') || {}).textContent.includes("measured this host's storage (short mode, once)")`)
	} else if !strings.Contains(out.String(), "storage: measured this host's storage (short mode, once)") {
		t.Errorf("the first start neither showed the storage measurement nor logged it: banner %q", banner)
	}

	// 1. The example, from the experiment list of a fresh install.
	doIn(t, page, time.Minute, chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(`[id="start-example-memory-limits.json"]`))
	do(t, page, chromedp.Click(`[id="start-example-memory-limits.json"]`))
	waitJS(t, page, 20*time.Second, "the example's start page", `!!document.getElementById('confirm-start')`)
	runs := js[int](t, page, `+document.getElementById('confirm-runs').dataset.runs`)
	refused := js[int](t, page, `document.getElementById('confirm-refused') ? +document.getElementById('confirm-refused').dataset.refused : 0`)
	estimate := js[string](t, page, `(document.getElementById('confirm-estimate') || {}).textContent || ''`)
	if runs <= 0 || !strings.Contains(estimate, "roughly") {
		t.Fatalf("the start page says %d runs, estimate %q", runs, estimate)
	}
	do(t, page, chromedp.Click(chromedp.ID("confirm-start")))
	exID := experimentOnPage(t, page)
	rs := waitFinished(t, page, exID, runs, 15*time.Minute)
	for _, r := range rs {
		if r.Status != "done" {
			t.Errorf("example run %d (%s at %d bytes) ended %s: %s", r.ID, r.System, r.MemLimitBytes, r.Status, r.Error)
		}
	}
	// Every run's epochs have their I/O floor, and the run page names its
	// profile.
	if len(rs) > 0 {
		doIn(t, page, time.Minute, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, rs[0].ID)), chromedp.WaitVisible(chromedp.ID("epochs")))
		if facts := js[string](t, page, `document.body.textContent`); !strings.Contains(facts, "against the storage profile") {
			t.Errorf("run %d's page does not name the profile of its I/O floor", rs[0].ID)
		}
		for _, r := range rs {
			resp, err := http.Get(fmt.Sprintf("%s/api/runs/%d/epochs", base, r.ID))
			if err != nil {
				t.Fatal(err)
			}
			var eps struct {
				Epochs []struct {
					IOFloorS *float64 `json:"io_floor_s"`
				} `json:"epochs"`
			}
			json.NewDecoder(resp.Body).Decode(&eps)
			resp.Body.Close()
			for i, e := range eps.Epochs {
				if e.IOFloorS == nil {
					t.Errorf("example run %d epoch %d has no io_floor_s", r.ID, i)
				}
			}
		}
	}
	doIn(t, page, time.Minute, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, exID)), chromedp.WaitVisible(chromedp.ID("queue")))
	reasons := js[[]string](t, page, `Array.from(document.querySelectorAll('#refused tr[data-outcome=refused] .refused-reason')).map(td => td.textContent)`)
	if len(reasons) != refused {
		t.Errorf("%d refused cells on the page, the start page said %d", len(reasons), refused)
	}
	for _, r := range reasons {
		if !strings.Contains(r, "needs to start on default") {
			t.Errorf("refused without a reason: %q", r)
		}
	}
	expIDs := []int64{exID}

	// 2. The headline studies, from the Reproduce page's small-scale form
	// (every study's form is started by TestReproduceSmallFormStartsEveryStudy).
	for _, s := range newcomerStudies(t) {
		doIn(t, page, time.Minute, chromedp.Navigate(base+"/reproduce"), chromedp.WaitVisible(chromedp.ID("start-small-"+s.ID)))
		do(t, page, chromedp.Click(chromedp.ID("start-small-"+s.ID)))
		id := experimentOnPage(t, page)
		waitJS(t, page, 10*time.Second, "the study table of "+s.ID,
			fmt.Sprintf(`(document.getElementById('study-table') || {dataset: {}}).dataset.study === %q && document.getElementById('study-dataset').textContent === 'default'`, s.ID))
		expIDs = append(expIDs, id)
	}
	// The last study's page is still open: its table follows the runs
	// without a reload (the live stream re-renders it).
	waitFinished(t, page, expIDs[len(expIDs)-1], -1, 10*time.Minute)
	waitJS(t, page, 30*time.Second, "the open study table to show a number of ours without a reload",
		`Array.from(document.querySelectorAll('#study-rows tbody tr td:nth-child(4)')).some(td => td.textContent.trim().endsWith(' s'))`)
	for i, id := range expIDs[1:] {
		s := newcomerStudies(t)[i]
		rs := waitFinished(t, page, id, -1, 10*time.Minute)
		done := 0
		for _, r := range rs {
			switch r.Status {
			case "done":
				done++
			case "oom":
			default:
				t.Errorf("study %s: run %d (%s) ended %s: %s", s.ID, r.ID, r.System, r.Status, r.Error)
			}
		}
		if done == 0 {
			t.Errorf("study %s: no run finished", s.ID)
		}
		// the study table followed the runs without a reload
		doIn(t, page, time.Minute, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, id)), chromedp.WaitVisible(chromedp.ID("study-rows")))
		if pending := js[int](t, page, `Array.from(document.querySelectorAll('#study-rows tbody tr td:nth-child(4)')).filter(td => td.textContent.trim() === '–').length`); pending == len(s.Systems)*len(s.MemLimits) {
			t.Errorf("study %s: no number of ours in its table", s.ID)
		}
		// Each ratio shows its evidence: n per side and the epochs' kind
		// (one cold epoch a run here: not enough for a verdict).
		if len(s.Ratios) > 0 {
			ev := js[[]string](t, page, `Array.from(document.querySelectorAll('#study-ratios td.evidence')).map(td => td.textContent)`)
			verdicts := js[[]string](t, page, `Array.from(document.querySelectorAll('#study-ratios td.verdict')).map(td => td.textContent)`)
			for i, e := range ev {
				if !strings.Contains(e, "n=") || (strings.Contains(verdicts[i], "within") || strings.Contains(verdicts[i], "outside")) && !strings.Contains(verdicts[i], "not enough evidence") && !strings.Contains(e, "quiet warm") {
					t.Errorf("study %s: ratio %d shows evidence %q, verdict %q", s.ID, i, e, verdicts[i])
				}
			}
		}
	}
	// The example's stage breakdown is wall-clock: each bar's stacked total
	// is within 5 % of its epoch time, and every variant that ran has a bar.
	doIn(t, page, time.Minute, chromedp.Navigate(fmt.Sprintf("%s/experiments/%d", base, exID)), chromedp.WaitVisible(chromedp.ID("charts-root")))
	cats := strings.Join(checkStageStacks(t, page, "the example"), "\n")
	for _, r := range rs {
		if r.Status == "done" && !strings.Contains(cats, r.System) {
			t.Errorf("the example's stage breakdown has no bar of %s (bars: %q)", r.System, cats)
		}
	}

	// 3. A run that runs out of memory: its page names the cgroup's limit.
	// The reference pipeline with its model step charged to a budget at
	// the runtime's floor is killed at once (every variant is at 12 MiB).
	meta := dataset0(t, dir)
	limit := train.ConservativeMinMemory(meta) + 64<<10
	grid := fmt.Sprintf(`{"name":"oom","dataset":"default","system":"reference","model_mem":"host","epochs":1,"mem_limit":"%d"}`, limit)
	oomID := js[int](t, page, fmt.Sprintf(`(async () => {
		const tok = (await (await fetch('/api/csrf')).json()).token;
		const r = await fetch('/api/experiments', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': tok}, body: %q});
		return (await r.json()).id || 0 })()`, grid))
	if oomID == 0 {
		t.Fatal("the OOM grid was not created")
	}
	rs = waitFinished(t, page, int64(oomID), 1, 3*time.Minute)
	if rs[0].Status != "oom" {
		t.Fatalf("the reference at %d bytes with its step on the host ended %s (%s)", limit, rs[0].Status, rs[0].Error)
	}
	doIn(t, page, time.Minute, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, rs[0].ID)), chromedp.WaitVisible(chromedp.ID("run-oom-cause")))
	cause := js[string](t, page, `document.getElementById('run-oom-cause').textContent`)
	want := "of its " + units.Bytes(limit) + " limit" // no step held outside: the cgroup's limit is the budget
	if !strings.Contains(cause, want) {
		t.Errorf("OOM banner %q, want %q", cause, want)
	}
}

// doIn is do with a deadline: a page that never shows what is waited
// for fails the test instead of hanging it.
func doIn(t *testing.T, page context.Context, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(page, d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%v (within %s)", err, d)
	}
}

// newcomerRun is what the test reads of /api/experiments/{id}/runs.
type newcomerRun struct {
	ID            int64  `json:"id"`
	Status        string `json:"status"`
	System        string `json:"system"`
	MemLimitBytes int64  `json:"mem_limit_bytes"`
	Error         string `json:"error"`
}

// experimentOnPage waits for an experiment's page and returns its id.
func experimentOnPage(t *testing.T, page context.Context) int64 {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; {
		if js[bool](t, page, `/\/experiments\/\d+$/.test(location.pathname) && !!document.getElementById('queue')`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no experiment page after 60 s: at %s: %.600s", js[string](t, page, `location.href`), js[string](t, page, `document.body ? document.body.innerText : ''`))
		}
		time.Sleep(200 * time.Millisecond)
	}
	var id int64
	fmt.Sscanf(js[string](t, page, `location.pathname`), "/experiments/%d", &id)
	return id
}

// waitFinished polls an experiment's runs until every one has an outcome
// (want >= 0: that many runs) and returns them.
func waitFinished(t *testing.T, page context.Context, id int64, want int, d time.Duration) []newcomerRun {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		raw := js[string](t, page, fmt.Sprintf(`(async () => JSON.stringify(await (await fetch('/api/experiments/%d/runs')).json()))()`, id))
		var v struct {
			Runs []newcomerRun `json:"runs"`
		}
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatalf("runs of experiment %d: %v: %s", id, err, raw)
		}
		left := 0
		for _, r := range v.Runs {
			if r.Status == "queued" || r.Status == "running" {
				left++
			}
		}
		if left == 0 && (want < 0 || len(v.Runs) == want) {
			return v.Runs
		}
		if time.Now().After(deadline) {
			t.Fatalf("experiment %d: %d of %d runs not finished after %s", id, left, len(v.Runs), d)
		}
		time.Sleep(time.Second)
	}
}

// dataset0 reads the default dataset's meta in a data directory.
func dataset0(t *testing.T, dir string) dataset.Meta {
	t.Helper()
	m, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(dir), "default"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newcomerStudyIDs are the studies the newcomer's browser test runs to
// the end at small scale: the headline studies the test ran before the
// registry grew to every figure (running all of them would take the test
// past its time; each study's small-scale form is started by
// TestReproduceSmallFormStartsEveryStudy).
var newcomerStudyIDs = []string{"gnndrive-fig2", "gnndrive-fig9", "gnndrive-table2", "ginex-overall", "diskgnn-fig9"}

// newcomerStudies are the studies of newcomerStudyIDs.
func newcomerStudies(t *testing.T) []studies.Study {
	t.Helper()
	var out []studies.Study
	for _, id := range newcomerStudyIDs {
		s, ok := studies.Lookup(id)
		if !ok || !s.IsPaper() {
			t.Fatalf("newcomer study %q is not a reproduction study", id)
		}
		out = append(out, s)
	}
	return out
}
