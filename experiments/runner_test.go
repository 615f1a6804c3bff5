package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/experiments/supervise"
	"outcore/store"
)

// TestGridRunsToDone runs a small grid through real child processes in
// real cgroups and checks what the store holds afterwards.
func TestGridRunsToDone(t *testing.T) {
	h := newHarness(t, nil)
	cg := haveCgroups(t)
	ch, unsub := h.m.SubscribeFrom(0)
	defer unsub()
	h.start()
	e := h.create(`{"dataset":"tiny","epochs":3,"options":{"epoch_ms":"30"},
		"axes":{"system":["fake","fake2"],"mem_limit":["256MiB","none"]}}`)
	runs := h.waitRuns(e.ID, "finished", finished)
	ctx := context.Background()
	for _, r := range runs {
		if r.Status != store.StatusDone {
			t.Fatalf("run %d: %s %s\n%s", r.ID, r.Status, r.Error, r.StderrTail)
		}
		if r.EpochsDone != 3 || r.MeanEpochS == nil || *r.MeanEpochS != 0.075 || r.BestValAcc == nil || *r.BestValAcc != 0.52 {
			t.Errorf("run %d aggregates: epochs %d mean %v best %v", r.ID, r.EpochsDone, r.MeanEpochS, r.BestValAcc)
		}
		if r.LimitEnforced != (cg && r.MemLimitBytes > 0) || r.LimitNote == "" {
			t.Errorf("run %d: limit_enforced %v (limit %d), note %q", r.ID, r.LimitEnforced, r.MemLimitBytes, r.LimitNote)
		}
		if cg && !strings.Contains(r.CgroupPath, "/outcore/run") {
			t.Errorf("run %d cgroup %q", r.ID, r.CgroupPath)
		}
		if cg {
			if _, err := os.Stat(r.CgroupPath); !os.IsNotExist(err) {
				t.Errorf("run %d: cgroup %s not removed (%v)", r.ID, r.CgroupPath, err)
			}
		}
		var host metrics.HostFacts
		if err := json.Unmarshal(r.Host, &host); err != nil || host.Kernel == "" || host.Cores == 0 || host.MemBytes == 0 || host.GEMM != "fake" || host.GoVersion == "" {
			t.Errorf("run %d host facts %s (%v)", r.ID, r.Host, err)
		}
		if r.IOBackend != "pread" || !strings.Contains(string(r.Devices), `"sample":"cpu"`) || !strings.Contains(string(r.Deviations), "fake child") {
			t.Errorf("run %d start record: io %q devices %s deviations %s", r.ID, r.IOBackend, r.Devices, r.Deviations)
		}
		if r.OutcoreVersion == "" || r.GoVersion == "" || r.Summary == nil || r.PeakRSSBytes == nil || r.StartedAt.IsZero() || r.EndedAt.IsZero() {
			t.Errorf("run %d: version %q go %q summary %v peak %v", r.ID, r.OutcoreVersion, r.GoVersion, r.Summary != nil, r.PeakRSSBytes)
		}
		if cg && (r.PeakCgroupBytes == nil || *r.PeakCgroupBytes <= 0) {
			t.Errorf("run %d: no cgroup peak", r.ID)
		}
		eps, _ := h.st.Epochs(ctx, r.ID)
		if len(eps) != 3 || !eps[0].Warmup || eps[2].Tiers["device"].Hits != 10 {
			t.Errorf("run %d epochs %+v", r.ID, eps)
		}
		smp, _ := h.st.Samples(ctx, r.ID, 0, 0, 0)
		if len(smp) != 3 || smp[0].RSSBytes <= 0 || (cg && smp[0].CgroupBytes <= 0) {
			t.Errorf("run %d samples %+v", r.ID, smp)
		}
		// transient events pruned at the end, the rest kept
		evs, _ := h.st.RunEvents(ctx, r.ID)
		kinds := map[string]int{}
		for _, ev := range evs {
			kinds[ev.Kind]++
		}
		if kinds[store.EventEpoch] != 3 || kinds[store.EventSample] != 0 || kinds[store.EventProgress] != 0 || kinds[store.EventStatus] < 3 || kinds[store.EventLog] < 4 {
			t.Errorf("run %d events by kind %v", r.ID, kinds)
		}
		if !bytes.Contains([]byte(fmt.Sprint(evs)), []byte("stdout: not json")) {
			t.Errorf("run %d: the stray stdout line was not kept as a log event", r.ID)
		}
		// The child was told its group by flag (no environment variables).
		placed := r.CgroupPath
		if placed == "" {
			placed = supervise.NoGroup
		}
		if !bytes.Contains([]byte(fmt.Sprint(evs)), []byte("--cgroup "+placed)) {
			t.Errorf("run %d: the child was not told its group %s", r.ID, placed)
		}
		cfg, err := os.ReadFile(filepath.Join(h.m.runDir(r.ID), "config.json"))
		if err != nil || !bytes.Contains(cfg, []byte(`"system":"`+r.System+`"`)) {
			t.Errorf("run %d config file: %v %s", r.ID, err, cfg)
		}
	}
	// Runs ran one at a time, in queue order.
	for i := 1; i < len(runs); i++ {
		if runs[i].StartedAt.Before(runs[i-1].EndedAt) {
			t.Errorf("run %d started at %v before run %d ended at %v", runs[i].ID, runs[i].StartedAt, runs[i-1].ID, runs[i-1].EndedAt)
		}
	}
	// The live stream saw every kind, in id order, including samples and
	// progress of the runs while they ran.
	seen := map[string]int{}
	var last int64
	timeout := time.After(10 * time.Second)
	for seen[store.EventStatus] < 4*3 {
		select {
		case ev := <-ch:
			if ev.ID <= last {
				t.Fatalf("event %d after %d", ev.ID, last)
			}
			last = ev.ID
			seen[ev.Kind]++
		case <-timeout:
			t.Fatalf("live events: %v", seen)
		}
	}
	if seen[store.EventEpoch] != 12 || seen[store.EventExperiment] != 1 {
		t.Errorf("live events by kind %v", seen)
	}
	// The comparison groups the runs by cell.
	cells, err := h.st.Compare(ctx, e.ID)
	if err != nil || len(cells) != 4 || cells[0].Done != 1 {
		t.Fatalf("compare: %+v %v", cells, err)
	}
}

// TestOOMThenNextRun: a child that touches 300 MiB under a 64 MiB limit
// ends as oom with its limit recorded, and the queue goes on.
func TestOOMThenNextRun(t *testing.T) {
	if !haveCgroups(t) {
		t.Skip("memory cgroups unavailable: the limit cannot be enforced here")
	}
	h := newHarness(t, nil)
	h.start()
	hog := h.create(`{"dataset":"tiny","system":"fake","epochs":3,"mem_limit":"64MiB","options":{"alloc_mib":"300"}}`)
	next := h.create(`{"dataset":"tiny","system":"fake","epochs":2,"mem_limit":"64MiB"}`)
	r := h.waitRuns(hog.ID, "finished", finished)[0]
	if r.Status != store.StatusOOM || r.MemLimitBytes != 64<<20 || !r.LimitEnforced {
		t.Fatalf("hog: status %s limit %d enforced %v error %q", r.Status, r.MemLimitBytes, r.LimitEnforced, r.Error)
	}
	if r.Signal != "SIGKILL" || !strings.Contains(r.Error, "64MiB") || !strings.Contains(r.Error, "OOM killer") {
		t.Fatalf("hog: signal %q error %q", r.Signal, r.Error)
	}
	if r.PeakCgroupBytes == nil || *r.PeakCgroupBytes < 60<<20 {
		t.Fatalf("hog peak %v", r.PeakCgroupBytes)
	}
	n := h.waitRuns(next.ID, "finished", finished)[0]
	if n.Status != store.StatusDone {
		t.Fatalf("run after the OOM: %s %s", n.Status, n.Error)
	}
	cells, _ := h.st.Compare(context.Background(), hog.ID)
	if len(cells) != 1 || cells[0].OOM != 1 || cells[0].MemLimitBytes != 64<<20 {
		t.Fatalf("compare %+v", cells)
	}
}

// TestFailedKeepsStderrTail: a failing child's outcome carries its error
// and the last 64 KiB of stderr, starting at a line boundary.
func TestFailedKeepsStderrTail(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":2,"options":{"fail":"boom: disk on fire","stderr_kib":"100"}}`)
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusFailed || r.ExitCode == nil || *r.ExitCode != 3 {
		t.Fatalf("status %s exit %v", r.Status, r.ExitCode)
	}
	if !strings.Contains(r.Error, "boom: disk on fire") || !strings.HasSuffix(strings.TrimSpace(r.StderrTail), "boom: disk on fire") {
		t.Fatalf("error %q tail ends %q", r.Error, r.StderrTail[max(0, len(r.StderrTail)-80):])
	}
	if len(r.StderrTail) > supervise.TailBytes || len(r.StderrTail) < supervise.TailBytes-2000 || !strings.HasPrefix(r.StderrTail, "noise line") {
		t.Fatalf("tail of %d bytes starting %q", len(r.StderrTail), r.StderrTail[:20])
	}
	if r.EpochsDone != 1 {
		t.Fatalf("epochs before the failure: %d", r.EpochsDone)
	}
	full, err := os.ReadFile(filepath.Join(h.m.runDir(r.ID), "stderr.log"))
	if err != nil || len(full) < 100_000 {
		t.Fatalf("stderr.log: %d bytes, %v", len(full), err)
	}
}

// TestCancelRetryDelete: cancel a running and a queued run, retry one,
// delete the experiment.
func TestCancelRetryDelete(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	ctx := context.Background()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":3,"options":{"hang":"1","ignore_term":"1"},"axes":{"repeat":2}}`)
	runs := h.waitRuns(e.ID, "started", func(r store.Run) bool { return r.Status != store.StatusQueued || r.Seq == 1 })
	first, second := runs[0], runs[1]
	h.waitStatus(first.ID, store.StatusRunning)
	// wait for its first epoch so the child is in its hang
	for deadline := time.Now().Add(20 * time.Second); ; {
		if r, _ := h.st.Run(ctx, first.ID); r.EpochsDone == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("first epoch never arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := h.m.CancelRun(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	if r, _ := h.st.Run(ctx, second.ID); r.Status != store.StatusCancelled {
		t.Fatalf("queued run after cancel: %s", r.Status)
	}
	t0 := time.Now()
	if err := h.m.CancelRun(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	r := h.waitStatus(first.ID, store.StatusCancelled)
	// The child ignores SIGTERM: SIGKILL after the 2 s grace period.
	if d := time.Since(t0); d < 2*time.Second || r.Signal != "SIGKILL" || r.EpochsDone != 1 {
		t.Fatalf("cancelled after %v, signal %q, epochs %d", d, r.Signal, r.EpochsDone)
	}
	if err := h.m.CancelRun(ctx, first.ID); !errors.Is(err, ErrConflict) {
		t.Fatalf("second cancel: %v", err)
	}
	if _, err := h.m.RetryRun(ctx, 99999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("retry of a missing run: %v", err)
	}
	// Retry the cancelled queued run with a config that finishes: the
	// attempt copies the config, so use the experiment-level retry on a
	// grid that does not hang.
	e2 := h.create(`{"dataset":"tiny","system":"fake","epochs":1,"options":{"fail":"once"}}`)
	failedRun := h.waitRuns(e2.ID, "finished", finished)[0]
	if failedRun.Status != store.StatusFailed {
		t.Fatalf("status %s", failedRun.Status)
	}
	retried, err := h.m.RetryExperiment(ctx, e2.ID)
	if err != nil || len(retried) != 1 || retried[0].Attempt != 2 || retried[0].RetryOf != failedRun.ID {
		t.Fatalf("retry: %+v %v", retried, err)
	}
	h.waitStatus(retried[0].ID, store.StatusFailed) // same config, same failure
	all, _ := h.st.Runs(ctx, store.RunFilter{ExperimentID: e2.ID})
	if len(all) != 2 || !all[0].Superseded {
		t.Fatalf("attempts %+v", all)
	}
	exp2, _ := h.st.Experiment(ctx, e2.ID)
	if exp2.Counts.Total != 1 || exp2.Counts.Failed != 1 {
		t.Fatalf("counts after retry %+v", exp2.Counts)
	}
	// Delete removes rows and run files.
	if err := h.m.DeleteExperiment(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.Experiment(ctx, e.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted experiment: %v", err)
	}
	if eps, _ := h.st.Epochs(ctx, first.ID); len(eps) != 0 {
		t.Fatal("epochs of a deleted experiment remain")
	}
	if _, err := os.Stat(h.m.runDir(first.ID)); !os.IsNotExist(err) {
		t.Fatalf("run directory remains: %v", err)
	}
	if err := h.m.DeleteExperiment(ctx, e.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// TestDeleteStopsRunningExperiment: deleting an experiment whose run is
// running cancels it first.
func TestDeleteStopsRunningExperiment(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	ctx := context.Background()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":3,"options":{"hang":"1"}}`)
	r := h.waitRuns(e.ID, "running", func(r store.Run) bool { return r.Status == store.StatusRunning && r.PID != 0 })[0]
	if err := h.m.DeleteExperiment(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(r.PID, 0); err == nil {
		t.Fatalf("child %d still alive after delete", r.PID)
	}
}

// TestShutdownInterrupts: stopping the queue stops its children and marks
// their runs interrupted; a new queue does not rerun them, retry does.
func TestShutdownInterrupts(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	ctx := context.Background()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":3,"options":{"hang":"1"}}`)
	r := h.waitRuns(e.ID, "running", func(r store.Run) bool { return r.Status == store.StatusRunning && r.PID != 0 })[0]
	h.stop()
	got, _ := h.st.Run(ctx, r.ID)
	if got.Status != store.StatusInterrupted {
		t.Fatalf("status after shutdown: %s", got.Status)
	}
	nr, err := h.m.RetryRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if nr.Status != store.StatusQueued {
		t.Fatalf("retry status %s", nr.Status)
	}
}

// TestNoCgroupsRecordsWhy: without cgroups a run still runs, with
// limit_enforced false and a warning saying why.
func TestNoCgroupsRecordsWhy(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.NoCgroups = true })
	h.start()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":1,"mem_limit":"512MiB"}`)
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusDone || r.LimitEnforced || r.CgroupPath != "" || !strings.Contains(r.LimitNote, "disabled") {
		t.Fatalf("status %s enforced %v cgroup %q note %q", r.Status, r.LimitEnforced, r.CgroupPath, r.LimitNote)
	}
	evs, _ := h.st.RunEvents(context.Background(), r.ID, store.EventLog)
	found := false
	for _, ev := range evs {
		if ev.Level == "warn" && strings.Contains(ev.Msg, "NOT enforced") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no warning event: %+v", evs)
	}
}

// TestFeatureDimDerivesDataset: a feature_dim axis value other than the
// dataset's makes <dataset>-d<dim> with the same generator config when its
// run starts.
func TestFeatureDimDerivesDataset(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":1,"axes":{"feature_dim":[32,8]}}`)
	runs := h.waitRuns(e.ID, "finished", finished)
	for _, r := range runs {
		if r.Status != store.StatusDone {
			t.Fatalf("run %d %s %s", r.ID, r.Status, r.Error)
		}
	}
	base, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(h.dataDir), "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	d8, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(h.dataDir), "tiny-d8"))
	if err != nil {
		t.Fatal(err)
	}
	if d8.FeatureDim != 8 || d8.Nodes != base.Nodes || d8.Edges != base.Edges || d8.Source.Generator.Seed != base.Source.Generator.Seed {
		t.Fatalf("derived meta %+v", d8)
	}
	if runs[1].Dataset != "tiny-d8" || !strings.Contains(string(runs[1].Config), `"dataset":"tiny-d8"`) {
		t.Fatalf("run 1 dataset %q", runs[1].Dataset)
	}
	if _, err := h.st.Dataset(context.Background(), "tiny-d8"); err != nil {
		t.Fatalf("derived dataset not catalogued: %v", err)
	}
}

// TestIDsAxisDerivesTwins: the ids axis runs each cell on the dataset's
// twin numbered so, which the runner makes from the dataset's generator
// config when its first run starts: the same graph (edges, labels) with
// its ids scattered or community-local; the run's configuration and its
// cell say which.
func TestIDsAxisDerivesTwins(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":1,"axes":{"ids":["scattered","local"]}}`)
	runs := h.waitRuns(e.ID, "finished", finished)
	base, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(h.dataDir), "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	var edges []int64
	for i, want := range []string{"scattered", "local"} {
		r := runs[i]
		name := "tiny-ids-" + want
		if r.Status != store.StatusDone || r.Dataset != name || !strings.Contains(string(r.Config), `"ids":"`+want+`"`) || r.Cell != `{"ids":"`+want+`"}` {
			t.Fatalf("run %d: %s on %s, config %s, cell %q (%s)", r.ID, r.Status, r.Dataset, r.Config, r.Cell, r.Error)
		}
		m, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(h.dataDir), name))
		if err != nil {
			t.Fatal(err)
		}
		if g := m.Source.Generator; g == nil || !g.Structured() || m.Numbering() != want || m.Nodes != base.Nodes || g.Seed != base.Source.Generator.Seed {
			t.Fatalf("%s: meta %+v", name, m)
		}
		edges = append(edges, m.Edges)
	}
	if edges[0] != edges[1] {
		t.Fatalf("the twins have %d and %d edges: not the same graph", edges[0], edges[1])
	}
}

// TestExportStreams: CSV export of an experiment that ran.
func TestExportStreams(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":2,"axes":{"repeat":2}}`)
	h.waitRuns(e.ID, "finished", finished)
	for what, rows := range map[string]int{store.ExportRuns: 2, store.ExportEpochs: 4, store.ExportSamples: 4} {
		var buf bytes.Buffer
		if err := h.st.ExportCSV(context.Background(), &buf, e.ID, what); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil || len(recs) != rows+1 || recs[0][0] != "run_id" {
			t.Fatalf("%s: %d rows, %v", what, len(recs), err)
		}
	}
}

// TestSubscribeFromResumes: a subscriber that resumes from an id gets
// exactly the later events.
func TestSubscribeFromResumes(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":2}`)
	h.waitRuns(e.ID, "finished", finished)
	all, err := h.st.EventsSince(context.Background(), 0, 0)
	if err != nil || len(all) < 5 {
		t.Fatalf("%d events, %v", len(all), err)
	}
	mid := all[len(all)/2].ID
	ch, stop := h.m.SubscribeFrom(mid)
	var got []Event
	for len(got) < len(all)-len(all)/2-1 {
		select {
		case ev := <-ch:
			got = append(got, ev)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %d of %d events", len(got), len(all)-len(all)/2-1)
		}
	}
	stop()
	for i, ev := range got {
		if ev.ID != all[len(all)/2+1+i].ID {
			t.Fatalf("event %d: id %d, want %d", i, ev.ID, all[len(all)/2+1+i].ID)
		}
	}
	// The channel closes after stop.
	for range ch {
	}
	// A second queue process on the same data directory is refused.
	other, err := New(testOptions(h.dataDir, h.st))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Run(context.Background()); !errors.Is(err, ErrQueueBusy) {
		t.Fatalf("second queue: %v", err)
	}
}

// TestFinishedHook: Options.Finished hears of each run once its outcome is
// stored (the command line stores the run's digest there).
func TestFinishedHook(t *testing.T) {
	var mu sync.Mutex
	heard := map[int64]string{}
	h := newHarness(t, func(o *Options) {
		o.Finished = func(ctx context.Context, id int64) error {
			r, err := o.Store.Run(ctx, id)
			mu.Lock()
			heard[id] = r.Status
			mu.Unlock()
			return err
		}
	})
	h.start()
	e := h.create(`{"dataset":"tiny","epochs":1,"options":{"epoch_ms":"10"},"axes":{"system":["fake"],"repeat":2}}`)
	runs := h.waitRuns(e.ID, "finished", finished)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(heard)
		mu.Unlock()
		if n == len(runs) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range runs {
		if heard[r.ID] != store.StatusDone {
			t.Errorf("run %d: the hook saw status %q", r.ID, heard[r.ID])
		}
	}
}

// TestOOMRunKeepsItsDeviations: a run killed before its summary (the
// supervisor's oom summary lists no deviations) keeps the deviations its
// child logged while it prepared — the model step held outside the budget
// and the cgroup limit it makes — so its page shows the cgroup's limit,
// the chart's limit line and the deviation (store.Run.CgroupLimit reads
// the limit from it; web's TestOOMBannerShowsTheCgroupLimit).
func TestOOMRunKeepsItsDeviations(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	step := "the CPU trainer's model step (46 MiB) is held outside the 64 MiB memory budget, as the GPU memory it occupies in the papers; the cgroup limit is 110 MiB"
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":2,"mem_limit":"64MiB","options":{"oom":"1","deviate":"` + step + `"}}`)
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusOOM {
		t.Fatalf("status %s %s", r.Status, r.Error)
	}
	var devs []string
	if err := json.Unmarshal(r.Deviations, &devs); err != nil || !slices.Contains(devs, step) || !slices.Contains(devs, "fake child") {
		t.Fatalf("deviations %s (%v)", r.Deviations, err)
	}
}
