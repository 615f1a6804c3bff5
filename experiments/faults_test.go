package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/store"
)

// faultWindow fails the calls numbered [from, from+n) (1-based, counted
// from arm) with err.
type faultWindow struct {
	mu       sync.Mutex
	calls    int
	from, n  int
	err      error
	injected int
}

func (f *faultWindow) arm(from, n int, err error) {
	f.mu.Lock()
	f.calls, f.from, f.n, f.err, f.injected = 0, from, n, err, 0
	f.mu.Unlock()
}

func (f *faultWindow) hook() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		return nil
	}
	f.calls++
	if f.calls >= f.from && f.calls < f.from+f.n {
		f.injected++
		return f.err
	}
	return nil
}

// checkNoEpochLost: every epoch in the run's record log is stored, as
// epochs 0..n-1, and a run that ended done stored all of them.
func checkNoEpochLost(t *testing.T, h *harness, r store.Run, want int) {
	t.Helper()
	eps, err := h.st.Epochs(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := readRecordLog(h.m.recordLogPath(r.ID), r)
	if err != nil {
		t.Fatalf("record log: %v", err)
	}
	if len(eps) < len(recs.epochs) {
		t.Fatalf("run %d (%s: %s): the child reported %d epochs (record log), the store holds %d", r.ID, r.Status, r.Error, len(recs.epochs), len(eps))
	}
	for i, e := range eps {
		if e.Epoch != i {
			t.Fatalf("stored epochs are not 0..%d: %v", len(eps)-1, eps)
		}
	}
	if r.Status == store.StatusDone && len(eps) != want {
		t.Fatalf("run done with %d of %d epochs", len(eps), want)
	}
	if r.EpochsDone != len(eps) {
		t.Fatalf("epochs_done %d, stored %d", r.EpochsDone, len(eps))
	}
}

// TestStoreFaultsLoseNoEpoch injects a full disk and an I/O error into the
// store at every write step of a run (two consecutive writes fail): no
// epoch the child reported is lost once writes succeed again, and the run
// ends done: a refused write is retried, it does not stop the training.
func TestStoreFaultsLoseNoEpoch(t *testing.T) {
	h := newHarness(t, nil)
	var fw faultWindow
	h.m.writeFault = fw.hook
	h.start()
	const epochs = 3
	gridText := fmt.Sprintf(`{"dataset":"tiny","system":"fake","epochs":%d,"options":{"epoch_ms":"10"}}`, epochs)
	// Count the writes of a clean run: claim, events, start facts, the
	// start record, one per epoch, flushes, the outcome.
	e := h.create(gridText)
	fw.arm(1<<30, 0, errors.New("never"))
	h.waitRuns(e.ID, "finished", finished)
	writes := fw.calls
	fw.arm(0, 0, nil)
	// The writes every run makes whatever the timing: its start record,
	// one per epoch and its outcome (the claim may commit before arm;
	// samples, events and progress flush as the timing falls: a clean
	// run made 11 or 12 here, 7 on the CI host).
	if least := epochs + 2; writes < least {
		t.Fatalf("a run made %d writes, want at least %d (its start record, %d epochs, its outcome)", writes, least, epochs)
	}
	t.Logf("a clean run makes %d store writes", writes)
	for _, kind := range []struct {
		name string
		err  error
	}{
		{"ENOSPC", fmt.Errorf("%w: database or disk is full", store.ErrDiskFull)},
		{"EIO", fmt.Errorf("write outcore.db-wal: %w", syscall.EIO)},
	} {
		for step := 1; step <= writes; step++ {
			t.Run(fmt.Sprintf("%s at write %d", kind.name, step), func(t *testing.T) {
				e := h.create(gridText)
				fw.arm(step, 2, kind.err)
				h.m.signal()
				runs := h.waitRuns(e.ID, "finished", finished)
				fw.mu.Lock()
				injected, calls := fw.injected, fw.calls
				fw.mu.Unlock()
				fw.arm(0, 0, nil)
				if injected == 0 {
					if calls >= step {
						t.Fatalf("no fault injected at write %d of %d", step, calls)
					}
					t.Logf("this run made %d writes (flushes depend on timing); nothing to inject at %d", calls, step)
				}
				r := runs[0]
				checkNoEpochLost(t, h, r, epochs)
				// A refused write is retried while the training goes on.
				if r.Status != store.StatusDone {
					t.Fatalf("run ended %s (%s), want done: a store refusal must not stop the training", r.Status, r.Error)
				}
			})
		}
	}
}

// TestRecordLogFaultsLoseNoEpoch fails writes of the record log itself
// (ENOSPC): the lines are kept and written later, the store gets every
// epoch, and the run fails naming the reason.
func TestRecordLogFaultsLoseNoEpoch(t *testing.T) {
	h := newHarness(t, nil)
	var fw faultWindow
	h.m.logFault = fw.hook
	h.start()
	for _, step := range []int{1, 3, 6} {
		t.Run(fmt.Sprint("line ", step), func(t *testing.T) {
			e := h.create(`{"dataset":"tiny","system":"fake","epochs":3,"options":{"epoch_ms":"10"}}`)
			fw.arm(step, 3, syscall.ENOSPC)
			runs := h.waitRuns(e.ID, "finished", finished)
			fw.arm(0, 0, nil)
			r := runs[0]
			if r.Status != store.StatusFailed || !strings.HasPrefix(r.Error, "no space left on device") {
				t.Fatalf("run %s: %q", r.Status, r.Error)
			}
			checkNoEpochLost(t, h, r, 3)
			recs, _ := readRecordLog(h.m.recordLogPath(r.ID), r)
			eps, _ := h.st.Epochs(context.Background(), r.ID)
			if len(recs.epochs) != len(eps) {
				t.Fatalf("record log holds %d epochs, the store %d", len(recs.epochs), len(eps))
			}
		})
	}
}

// TestGhostRunCanBeCancelledAndDeleted: a run the store says is running
// though no child of it runs (a lost outcome write) is ended by a cancel,
// and its experiment can be deleted.
func TestGhostRunCanBeCancelledAndDeleted(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.KillGrace = 200 * time.Millisecond })
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":1}`)
	runs, _ := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	if err := h.st.Update(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ClaimRun(runs[0].ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	h.m.executeHook = func(r store.Run) { t.Errorf("run %d was started", r.ID) }
	// Run marks it interrupted at start; put it back to running afterwards
	// to make the ghost the running queue finds.
	h.start()
	h.waitStatus(runs[0].ID, store.StatusInterrupted)
	if err := h.st.Update(context.Background(), func(tx *store.Tx) error {
		nr, err := tx.RetryRun(runs[0].ID)
		if err != nil {
			return err
		}
		_, err = tx.ClaimRun(nr.ID)
		runs[0] = nr
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.m.CancelRun(context.Background(), runs[0].ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if r := h.waitStatus(runs[0].ID, store.StatusCancelled); !strings.Contains(r.Error, "already ended") {
		t.Fatalf("ghost cancelled with %q", r.Error)
	}
	done := make(chan error, 1)
	go func() { done <- h.m.DeleteExperiment(context.Background(), e.ID) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("delete: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("delete did not return")
	}
}

// TestRunnerPanicFailsTheRunOnly: a panic in the runner ends its run as
// failed with the panic's message; the queue goes on with the next run.
func TestRunnerPanicFailsTheRunOnly(t *testing.T) {
	h := newHarness(t, nil)
	first := h.create(`{"dataset":"tiny","system":"fake","epochs":1}`)
	second := h.create(`{"dataset":"tiny","system":"fake","epochs":1}`)
	var once sync.Once
	h.m.executeHook = func(store.Run) { once.Do(func() { panic("injected runner bug") }) }
	h.start()
	r1 := h.waitRuns(first.ID, "finished", finished)[0]
	r2 := h.waitRuns(second.ID, "finished", finished)[0]
	if r1.Status != store.StatusFailed || !strings.Contains(r1.Error, "internal error in the runner: injected runner bug") {
		t.Fatalf("panicking run: %s %q", r1.Status, r1.Error)
	}
	if r2.Status != store.StatusDone {
		t.Fatalf("next run: %s %q", r2.Status, r2.Error)
	}
}

// TestRecordLogIngestedAtStart: epochs a dead server logged but did not
// store are ingested by the next queue process before it marks the run
// interrupted; a line cut by the crash is skipped.
func TestRecordLogIngestedAtStart(t *testing.T) {
	h := newHarness(t, nil)
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":5}`)
	runs, _ := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	id := runs[0].ID
	if err := h.st.Update(context.Background(), func(tx *store.Tx) error {
		if _, err := tx.ClaimRun(id); err != nil {
			return err
		}
		return tx.InsertEpoch(id, &metrics.EpochRecord{Type: metrics.TypeEpoch, Epoch: 0, EpochS: 1})
	}); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(h.m.runDir(id), 0o755)
	var log strings.Builder
	for ep := 0; ep < 3; ep++ {
		fmt.Fprintf(&log, `{"type":"epoch","epoch":%d,"epoch_s":%d}`+"\n", ep, ep+1)
	}
	log.WriteString(`{"type":"sample","t":1,"rss_bytes":5}` + "\n" + `{"type":"epoch","epo`)
	if err := os.WriteFile(h.m.recordLogPath(id), []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	h.start()
	r := h.waitStatus(id, store.StatusInterrupted)
	eps, _ := h.st.Epochs(context.Background(), id)
	if len(eps) != 3 || r.EpochsDone != 3 || eps[2].EpochS != 3 {
		t.Fatalf("after ingest: %d epochs (epochs_done %d): %+v", len(eps), r.EpochsDone, eps)
	}
	if smp, _ := h.st.Samples(context.Background(), id, 0, 0, 0); len(smp) != 1 {
		t.Fatalf("samples %+v", smp)
	}
}

// TestFullDiskDuringRun fills a small tmpfs data directory while a run is
// running, frees it, and finds every epoch the child reported in the
// database, the run ended as failed with "no space left on device", and
// its experiment deletable.
func TestFullDiskDuringRun(t *testing.T) {
	dir := smallTmpfs(t, "24m", "the data directory")
	src := tinyDataset(t)
	dst := filepath.Join(dataset.DatasetsDir(dir), "tiny")
	os.MkdirAll(dst, 0o755)
	des, _ := os.ReadDir(src)
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, de.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(dir, st)
	opts.Logf = t.Logf
	h := harnessOn(t, dir, st, opts)
	m := h.m
	report := filepath.Join(t.TempDir(), "reported") // off the tmpfs
	e := h.create(fmt.Sprintf(`{"dataset":"tiny","system":"fake","epochs":60,"options":{"epoch_ms":"50","report":%q,"report_ms":"20"}}`, report))
	h.start()
	runs, _ := st.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
	id := runs[0].ID
	h.waitEpochs(id, 3)
	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler)
	full := time.Now()
	// The run is stopped when a record cannot be stored: its child exits.
	r, _ := st.Run(ctx, id)
	for syscall.Kill(r.PID, 0) == nil {
		if time.Since(full) > 20*time.Second {
			t.Fatalf("the child (pid %d) still runs %v after the disk filled", r.PID, time.Since(full))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // retries against the full disk
	if r, _ := st.Run(ctx, id); r.Status != store.StatusRunning {
		t.Logf("while the disk is full the run is %s", r.Status)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r = h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusFailed || !strings.HasPrefix(r.Error, "no space left on device") {
		t.Fatalf("run ended %s: %q", r.Status, r.Error)
	}
	checkNoEpochLost(t, h, r, 60)
	b, _ := os.ReadFile(report)
	reported := strings.Count(string(b), "epoch ")
	eps, _ := st.Epochs(ctx, id)
	if len(eps) < reported || reported < 3 {
		t.Fatalf("the child reported %d epochs, the store holds %d", reported, len(eps))
	}
	t.Logf("child reported %d epochs; the store holds %d; the run: %s", reported, len(eps), r.Error)
	if err := m.DeleteExperiment(ctx, e.ID); err != nil {
		t.Fatalf("delete after the full disk: %v", err)
	}
}

// TestQueuePanicIsSurvived: a panic of the queue loop (a bug) is logged
// and Standby starts the queue again; queued runs still run.
func TestQueuePanicIsSurvived(t *testing.T) {
	h := newHarness(t, nil)
	var once sync.Once
	h.m.loopHook = func() { once.Do(func() { panic("queue loop bug") }) }
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":1}`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.m.Standby(ctx, 50*time.Millisecond, nil) }()
	r := h.waitRuns(e.ID, "finished", finished)[0]
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Standby: %v", err)
	}
	if r.Status != store.StatusDone {
		t.Fatalf("run after the queue's panic: %s %s", r.Status, r.Error)
	}
}

// TestFullStoreTrainingGoesOn: the database (real SQLite) lies on a tmpfs
// that fills up while a run trains, its record log on a disk with room.
// The store refuses the run's writes; the training goes on (the child
// keeps reporting epochs), nothing is lost, and once space is freed every
// epoch is stored and the run ends done. (Before, the first refusal
// stopped the run although records.jsonl was still writable.)
func TestFullStoreTrainingGoesOn(t *testing.T) {
	dbDir := smallTmpfs(t, "8m", "the database")
	dir := newDataDir(t)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dbDir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(dir, st)
	var logMu sync.Mutex
	var logs []string
	opts.Logf = func(format string, a ...any) {
		logMu.Lock()
		logs = append(logs, fmt.Sprintf(format, a...))
		logMu.Unlock()
		t.Logf(format, a...)
	}
	h := harnessOn(t, dir, st, opts)
	const epochs = 40
	report := filepath.Join(t.TempDir(), "reported")
	e := h.create(fmt.Sprintf(`{"dataset":"tiny","system":"fake","epochs":%d,"options":{"epoch_ms":"60","report":%q,"report_ms":"20"}}`, epochs, report))
	h.start()
	runs, _ := st.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
	id := runs[0].ID
	h.waitEpochs(id, 2)
	filler := filepath.Join(dbDir, "filler")
	fillDisk(t, filler)
	// While the disk stays full the child goes on training: the epochs it
	// reports keep growing, and the store has refused a write.
	reported := func() int { b, _ := os.ReadFile(report); return strings.Count(string(b), "epoch ") }
	atFull := reported()
	refused := func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		for _, l := range logs {
			if strings.Contains(l, "the training goes on") {
				return true
			}
		}
		return false
	}
	for dl := time.Now().Add(20 * time.Second); !refused() || reported() < atFull+5; {
		if time.Now().After(dl) {
			t.Fatalf("refused %v; the child reported %d epochs at full, %d now", refused(), atFull, reported())
		}
		if r, _ := st.Run(ctx, id); r.Status != store.StatusRunning {
			t.Fatalf("the run ended %s (%s) while the store was full", r.Status, r.Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r, _ := st.Run(ctx, id); syscall.Kill(r.PID, 0) != nil {
		t.Fatalf("the child (pid %d) was stopped while the store was full", r.PID)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusDone {
		t.Fatalf("run ended %s: %q, want done", r.Status, r.Error)
	}
	checkNoEpochLost(t, h, r, epochs)
	evs, _ := st.RunEvents(ctx, id)
	said := false
	for _, ev := range evs {
		said = said || strings.Contains(ev.Msg, "the store refused this run's records for a while")
	}
	if !said {
		t.Error("no event says the store refused the run's records for a while")
	}
}

// TestDroppedWritesIngestedFromLog: while the store refuses writes, the
// queue keeps at most maxQueuedWrites and drops sample flushes beyond
// them; once the store accepts again, what was dropped is ingested from
// the record log, so every sample the child reported is stored.
func TestDroppedWritesIngestedFromLog(t *testing.T) {
	old := maxQueuedWrites
	maxQueuedWrites = 1
	t.Cleanup(func() { maxQueuedWrites = old })
	h := newHarness(t, nil)
	var fw faultWindow
	h.m.writeFault = fw.hook
	h.start()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":5,"options":{"epoch_ms":"1100","late_sample":"1"}}`)
	runs := h.waitRuns(e.ID, "with an epoch", func(r store.Run) bool { return r.EpochsDone >= 1 })
	fw.arm(1, 12, fmt.Errorf("%w: database or disk is full", store.ErrDiskFull)) // about 4 s of refusals
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if fw.injected < 12 {
		t.Fatalf("only %d writes refused", fw.injected)
	}
	if r.Status != store.StatusDone {
		t.Fatalf("run ended %s (%s)", r.Status, r.Error)
	}
	checkNoEpochLost(t, h, r, 5)
	recs, err := readRecordLog(h.m.recordLogPath(runs[0].ID), r)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := h.st.Samples(context.Background(), r.ID, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs.samples) == 0 || len(samples) < len(recs.samples) {
		t.Fatalf("the record log holds %d samples, the store %d", len(recs.samples), len(samples))
	}
}
