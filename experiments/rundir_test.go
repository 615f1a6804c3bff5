package experiments

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outcore/store"
)

// TestRecreatedDatabaseKeepsRunsApart reproduces the mixed-records
// attack: a data directory's outcore.db is deleted and created again (as
// the server advises when it is gone), so run ids restart at 1. The new
// run 1 must not append to the old run 1's record log, and a crash-restart
// must not ingest the old run's epochs as the new run's (a 2-epoch run
// showed 8 epochs).
func TestRecreatedDatabaseKeepsRunsApart(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	old := h.create(`{"dataset":"tiny","system":"fake","epochs":5,"options":{"epoch_ms":"5"}}`)
	h.start()
	oldRun := h.waitRuns(old.ID, "finished", finished)[0]
	if oldRun.Status != store.StatusDone || oldRun.EpochsDone != 5 {
		t.Fatalf("old run: %s, %d epochs", oldRun.Status, oldRun.EpochsDone)
	}
	oldLog := h.m.recordLogPath(oldRun.ID)
	h.stop()
	h.m.Close()
	h.st.Close()

	// Delete the database and create it again.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(h.dataDir, store.FileName) + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	st, err := store.OpenDataDir(ctx, h.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	opts := testOptions(h.dataDir, st)
	opts.Logf = t.Logf
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	h2 := &harness{t: t, dataDir: h.dataDir, st: st, m: m}
	t.Cleanup(h2.stop)
	if m.runDir(1) == filepath.Dir(oldLog) {
		t.Errorf("the new database's run 1 has the old run 1's directory %s", m.runDir(1))
	}

	// Run 1 of the new database, left "running" by a server that died
	// before its child started: the next queue ingests its record log.
	e := h2.create(`{"dataset":"tiny","system":"fake","epochs":2,"options":{"epoch_ms":"5"}}`)
	runs, _ := st.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
	if runs[0].ID != oldRun.ID {
		t.Fatalf("the new database's first run is %d, the old one's %d: the test needs them equal", runs[0].ID, oldRun.ID)
	}
	if err := st.Update(ctx, func(tx *store.Tx) error {
		ok, err := tx.ClaimRun(runs[0].ID)
		if err == nil && !ok {
			err = fmt.Errorf("not claimed")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	h2.start()
	r := h2.waitRuns(e.ID, "interrupted", finished)[0]
	if r.Status != store.StatusInterrupted || r.EpochsDone != 0 {
		t.Fatalf("crash-restart of the new run 1: %s with %d epochs, want interrupted with none (the old run 1 had 5)", r.Status, r.EpochsDone)
	}
	if eps, _ := st.Epochs(ctx, r.ID); len(eps) != 0 {
		t.Fatalf("the new run 1 holds %d epochs of the old run's records", len(eps))
	}

	// A run of the new database from start to end: its own 2 epochs, its
	// own record log; the old one is untouched.
	e = h2.create(`{"dataset":"tiny","system":"fake","epochs":2,"options":{"epoch_ms":"5"}}`)
	r = h2.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusDone || r.EpochsDone != 2 {
		t.Fatalf("new run: %s, %d epochs", r.Status, r.EpochsDone)
	}
	recs, err := readRecordLog(m.recordLogPath(r.ID), r)
	if err != nil || len(recs.epochs) != 2 {
		t.Fatalf("new run's record log: %d epochs (%v), want 2", len(recs.epochs), err)
	}
	if recs, _ := readRecordLog(oldLog, store.Run{}); len(recs.epochs) != 5 {
		t.Fatalf("the old run's record log now holds %d epochs, want its 5", len(recs.epochs))
	}
}

// TestLegacyRunDirectoryMovedAside: a database older than identities
// keeps runs/<id>; a run that starts where an older run's files lie gets
// a fresh directory (the old files moved aside, said in an event), so it
// appends to nothing and its record log holds only its own records.
func TestLegacyRunDirectoryMovedAside(t *testing.T) {
	h := newHarness(t, nil)
	h.m.dbID = "" // runs/<id>, as for a database with runs before 0007
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":2,"options":{"epoch_ms":"5"}}`)
	runs, _ := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	dir := h.m.runDir(runs[0].ID)
	if dir != filepath.Join(h.dataDir, "runs", fmt.Sprint(runs[0].ID)) {
		t.Fatalf("legacy run directory %s", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var old strings.Builder
	for i := range 6 {
		fmt.Fprintf(&old, `{"type":"epoch","epoch":%d,"epoch_s":1}`+"\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, RecordLogFile), []byte(old.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	h.start()
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusDone || r.EpochsDone != 2 {
		t.Fatalf("run: %s, %d epochs", r.Status, r.EpochsDone)
	}
	recs, _ := readRecordLog(h.m.recordLogPath(r.ID), r)
	if len(recs.epochs) != 2 {
		t.Fatalf("record log holds %d epochs, want the run's 2", len(recs.epochs))
	}
	stale, _ := filepath.Glob(dir + ".stale-*")
	if len(stale) != 1 {
		t.Fatalf("old files moved aside to %v", stale)
	}
	evs, _ := h.st.RunEvents(context.Background(), r.ID)
	found := false
	for _, ev := range evs {
		found = found || strings.Contains(ev.Msg, "held files of an older run")
	}
	if !found {
		t.Error("no event says the old files were moved aside")
	}
}
