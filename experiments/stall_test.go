package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/store"
)

// waitRun waits (60 s at most) until run id satisfies ok, and returns it.
func (h *harness) waitRun(id int64, what string, ok func(store.Run) bool) store.Run {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := h.st.Run(context.Background(), id)
		if err != nil {
			h.t.Fatal(err)
		}
		if ok(r) {
			return r
		}
		if store.Finished(r.Status) || time.Now().After(deadline) {
			h.t.Fatalf("run %d is %s (stall %q, error %q), want it %s", id, r.State(), r.Stall, r.Error, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStoppedChildIsStalled stops a real child with SIGSTOP while it
// trains: its records stop while its process lives, so the run is shown
// stalled, "stopped" given as the cause, while the store keeps it running
// (cancel is offered); continued (SIGCONT), it writes records again and is
// running again; stopped once more, a cancel ends it cancelled.
func TestStoppedChildIsStalled(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StallAfter = time.Second })
	h.start()
	// A sample every 100 ms, as the engine writes one a second; after its
	// first epoch the child trains on (hangs) and goes on sampling.
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":3,"options":{"hang":"1","sample_ms":"100"}}`)
	runs, _ := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	id := runs[0].ID
	r := h.waitRun(id, "with an epoch", func(r store.Run) bool { return r.EpochsDone >= 1 })
	// While it samples it is running, however long that lasts: wait for
	// samples spanning three stall thresholds.
	for dl := time.Now().Add(30 * time.Second); ; {
		smp, _ := h.st.Samples(context.Background(), id, 0, 0, 0)
		if len(smp) > 0 && smp[len(smp)-1].T-smp[0].T > 3 {
			break
		}
		if time.Now().After(dl) {
			t.Fatalf("%d samples stored", len(smp))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := h.waitRun(id, "running", func(store.Run) bool { return true }); r.State() != store.StatusRunning {
		t.Fatalf("a child that writes its samples is shown %s (%s)", r.State(), r.Stall)
	}

	pid := r.PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	r = h.waitRun(id, "stalled", func(r store.Run) bool { return r.State() == store.StatusStalled })
	if r.Status != store.StatusRunning || !strings.Contains(r.Stall, "stopped") {
		t.Fatalf("stopped child: status %s, stall %q, want running with the cause stopped", r.Status, r.Stall)
	}
	t.Logf("stalled: %s", r.Stall)

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	r = h.waitRun(id, "running again", func(r store.Run) bool { return r.State() == store.StatusRunning })
	if r.Stall != "" {
		t.Fatalf("resumed run keeps its stall %q", r.Stall)
	}
	evs, _ := h.st.RunEvents(context.Background(), id, store.EventStatus)
	var said []string
	for _, ev := range evs {
		said = append(said, ev.Msg)
	}
	all := strings.Join(said, "\n")
	if !strings.Contains(all, "stalled") || !strings.Contains(all, "running again") {
		t.Fatalf("the run's status events do not tell the stall and the resumption:\n%s", all)
	}

	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	h.waitRun(id, "stalled again", func(r store.Run) bool { return r.State() == store.StatusStalled })
	if err := h.m.CancelRun(context.Background(), id); err != nil {
		t.Fatalf("cancel a stalled run: %v", err)
	}
	if r := h.waitStatus(id, store.StatusCancelled); r.Stall != "" || r.State() != store.StatusCancelled {
		t.Fatalf("cancelled stalled run: state %s, stall %q", r.State(), r.Stall)
	}
}

// TestChildOnFullDiskIsStalled: a real child that reports "no space left
// on device" and goes silent while its process lives is shown stalled
// with the cause disk full, and can be cancelled.
func TestChildOnFullDiskIsStalled(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StallAfter = time.Second })
	h.start()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":3,"options":{"enospc":"1","sample_ms":"100"}}`)
	runs, _ := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	id := runs[0].ID
	r := h.waitRun(id, "stalled", func(r store.Run) bool { return r.State() == store.StatusStalled })
	if !strings.Contains(r.Stall, "disk full") || !strings.Contains(r.Stall, "no space left on device") {
		t.Fatalf("stall %q, want disk full, naming what the child reported", r.Stall)
	}
	t.Logf("stalled: %s", r.Stall)
	if err := h.m.CancelRun(context.Background(), id); err != nil {
		t.Fatalf("cancel a stalled run: %v", err)
	}
	h.waitStatus(id, store.StatusCancelled)
}

// TestStallCause: what the host says of a silent child names the cause:
// stopped before a full disk before I/O waits; a zombie is not stalled.
func TestStallCause(t *testing.T) {
	for _, c := range []struct {
		f     stallFacts
		alive bool
		want  string
	}{
		{stallFacts{process: 'T', threads: []byte("TTT")}, true, "stopped: "},
		{stallFacts{process: 't', threads: []byte("t")}, true, "stopped: "},
		{stallFacts{process: 'T', threads: []byte("TT"), fullDir: "/data"}, true, "stopped: "},
		{stallFacts{process: 'S', threads: []byte("SDS"), fullDir: "/data/runs/1"}, true, "disk full: the file system of /data/runs/1 has no space left"},
		{stallFacts{process: 'S', threads: []byte("SS"), enospc: "write x: no space left on device"}, true, `disk full: the child reported "write x: no space left on device"`},
		{stallFacts{process: 'S', threads: []byte("SDSD")}, true, "blocked on I/O: 2 of the child's 4 threads wait in uninterruptible I/O (state D)"},
		{stallFacts{process: 'D', threads: []byte("D")}, true, "blocked on I/O: 1 of the child's 1 threads"},
		{stallFacts{process: 'S', threads: []byte("SS")}, true, "no records: the child's process runs (state S)"},
		{stallFacts{process: 'Z'}, false, ""},
		{stallFacts{}, false, ""},
	} {
		if c.f.alive() != c.alive {
			t.Errorf("%+v: alive %v, want %v", c.f, c.f.alive(), c.alive)
		}
		if !c.alive {
			continue
		}
		if got := stallCause(c.f); !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v: %q, want it to start %q", c.f, got, c.want)
		}
	}
}

// TestRunOnFullDiskIsStalled: the data directory (datasets, run
// directories, scratch) is a small file system that fills while the
// run's child is silent, the database elsewhere: the run is shown stalled
// with the cause disk full, naming the directory, and can be cancelled.
func TestRunOnFullDiskIsStalled(t *testing.T) {
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
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(dir, st)
	opts.Logf = t.Logf
	opts.StallAfter = time.Second
	h := harnessOn(t, dir, st, opts)
	h.start()
	// After its first epoch the child waits, silent (no samples).
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":3,"options":{"hang":"1"}}`)
	runs, _ := st.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
	id := runs[0].ID
	h.waitRun(id, "with an epoch", func(r store.Run) bool { return r.EpochsDone >= 1 })
	fillDisk(t, filepath.Join(dir, "filler"))
	r := h.waitRun(id, "stalled on the full disk", func(r store.Run) bool {
		return r.State() == store.StatusStalled && strings.HasPrefix(r.Stall, "disk full")
	})
	if !strings.Contains(r.Stall, dir) || !strings.Contains(r.Stall, "no space left") {
		t.Fatalf("stall %q does not name the full directory %s", r.Stall, dir)
	}
	t.Logf("stalled: %s", r.Stall)
	os.Remove(filepath.Join(dir, "filler"))
	if err := h.m.CancelRun(ctx, id); err != nil {
		t.Fatalf("cancel a stalled run: %v", err)
	}
	h.waitStatus(id, store.StatusCancelled)
}
