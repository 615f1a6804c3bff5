package experiments

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/internal/cgroup"
	"outcore/store"

	"golang.org/x/sys/unix"
)

var (
	tinyOnce sync.Once
	tinyDir  string
	tinyErr  error
)

// tinyDataset generates the tiny preset once per test binary and returns
// its directory.
func tinyDataset(t *testing.T) string {
	t.Helper()
	tinyOnce.Do(func() {
		root, err := os.MkdirTemp("", "outcore-exp-tiny-")
		if err != nil {
			tinyErr = err
			return
		}
		cfg, err := dataset.Preset("tiny")
		if err != nil {
			tinyErr = err
			return
		}
		_, tinyErr = dataset.GenerateWith(context.Background(), root, "tiny", cfg, dataset.GenOptions{Preset: "tiny", NoIndptr: true})
		tinyDir = filepath.Join(root, "tiny")
	})
	if tinyErr != nil {
		t.Fatal(tinyErr)
	}
	return tinyDir
}

// newDataDir returns a data directory holding a copy of the tiny dataset.
func newDataDir(t *testing.T) string {
	t.Helper()
	src := tinyDataset(t)
	dir := t.TempDir()
	dst := filepath.Join(dataset.DatasetsDir(dir), "tiny")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.Link(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// harness is a data directory with a store and a manager whose children
// are the fake train.
type harness struct {
	t       *testing.T
	dataDir string
	st      *store.Store
	m       *Manager
	cancel  context.CancelFunc
	runErr  chan error
}

func newHarness(t *testing.T, mod func(*Options)) *harness {
	t.Helper()
	dir := newDataDir(t)
	st, err := store.OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(dir, st)
	opts.Logf = t.Logf
	if mod != nil {
		mod(&opts)
	}
	return harnessOn(t, dir, st, opts)
}

// harnessOn is a harness whose manager is made from opts on dir and st;
// when the test ends its queue stops, then the manager and st close.
func harnessOn(t *testing.T, dir string, st *store.Store, opts Options) *harness {
	t.Helper()
	m, err := New(opts)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	h := &harness{t: t, dataDir: dir, st: st, m: m}
	t.Cleanup(func() {
		h.stop()
		m.Close()
		st.Close()
	})
	return h
}

// waitEpochs waits (30 s at most) until run id has stored n epochs.
func (h *harness) waitEpochs(id int64, n int) {
	h.t.Helper()
	for dl := time.Now().Add(30 * time.Second); ; {
		if eps, _ := h.st.Epochs(context.Background(), id); len(eps) >= n {
			return
		}
		if time.Now().After(dl) {
			h.t.Fatal("no epochs stored")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// smallTmpfs is a fresh tmpfs of size (a mount option: "24m") for what,
// unmounted when the test ends; it skips t where mounting is not allowed.
func smallTmpfs(t *testing.T, size, what string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs for %s (%v): the test needs root or CAP_SYS_ADMIN", what, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// fillDisk creates path and writes to it until its file system is full
// (64 KiB writes, then 512-byte ones to take the last blocks).
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for n := 64 << 10; ; {
		if _, err := f.Write(buf[:n]); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			if n == 512 {
				return
			}
			n = 512
		}
	}
}

// start runs the queue in the background.
func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.runErr = make(chan error, 1)
	go func() { h.runErr <- h.m.Run(ctx) }()
}

// stop ends the queue and waits for Run to return.
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	select {
	case err := <-h.runErr:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		h.t.Error("Run did not return after cancel")
	}
	h.cancel = nil
}

func (h *harness) create(grid string) store.Experiment {
	h.t.Helper()
	e, err := h.m.Create(context.Background(), []byte(grid))
	if err != nil {
		h.t.Fatalf("create: %v", err)
	}
	return e
}

// waitRuns waits until every current run of the experiment satisfies ok.
func (h *harness) waitRuns(expID int64, what string, ok func(store.Run) bool) []store.Run {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		runs, err := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: expID, Current: true})
		if err != nil {
			h.t.Fatal(err)
		}
		all := len(runs) > 0
		for _, r := range runs {
			if !ok(r) {
				all = false
			}
		}
		if all {
			return runs
		}
		if time.Now().After(deadline) {
			for _, r := range runs {
				h.t.Logf("run %d: %s %s", r.ID, r.Status, r.Error)
			}
			h.t.Fatalf("timed out waiting for runs to be %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func finished(r store.Run) bool { return store.Finished(r.Status) }

// waitStatus waits until run id has status.
func (h *harness) waitStatus(id int64, status string) store.Run {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := h.st.Run(context.Background(), id)
		if err != nil {
			h.t.Fatal(err)
		}
		if r.Status == status {
			return r
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("run %d is %s (%s), want %s", id, r.Status, r.Error, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// haveCgroups reports whether memory cgroups work here.
func haveCgroups(t *testing.T) bool {
	_, err := cgroup.Detect()
	if err != nil && !errors.Is(err, cgroup.ErrUnavailable) {
		t.Fatal(err)
	}
	if err != nil {
		t.Logf("no memory cgroups: %v", err)
	}
	return err == nil
}
