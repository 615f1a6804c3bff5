package store_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"outcore/store"
)

// mountTmpfs mounts a tmpfs of the given size (mount options, e.g.
// "size=2m" or "ro") on a fresh folder, unmounted at the end of the test.
// It skips the test, saying why, where mounting is not permitted.
func mountTmpfs(t *testing.T, opts string, flags uintptr) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", flags, opts); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the test needs root or CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// fillDisk writes a file until the file system is full and returns its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for { // the last partial blocks
		if _, err := f.Write(buf[:512]); err != nil {
			break
		}
	}
	return p
}

// TestCSVSafeLeavesNumberListsAlone: a fanout of "-1,-1" is data, not a
// formula; text that starts like a formula is still escaped.
func TestCSVSafeLeavesNumberListsAlone(t *testing.T) {
	for in, want := range map[string]string{
		"-1,-1": "-1,-1", "-1": "-1", "-0.5": "-0.5", "-1e-3,2": "-1e-3,2", "10,5": "10,5",
		"-x": "'-x", "-1,=cmd": "'-1,=cmd", "-": "'-", "-1,": "'-1,", "=1": "'=1", "+1": "'+1",
		"@SUM(1)": "'@SUM(1)", "-1+2": "'-1+2", "-1e": "'-1e", "-.5": "'-.5", "\t-1": "'\t-1",
	} {
		if got := store.CSVSafe(in); got != want {
			t.Errorf("CSVSafe(%q) = %q, want %q", in, got, want)
		}
	}
	s := open(t)
	e := store.Experiment{Name: "e", Dataset: "tiny", Grid: json.RawMessage(`{"dataset":"tiny"}`)}
	err := s.Update(context.Background(), func(tx *store.Tx) error {
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		r := store.Run{ExperimentID: e.ID, System: "pyg+", Dataset: "tiny", Model: "gcn", Fanout: "-1,-1", Config: json.RawMessage(`{}`)}
		return tx.InsertRun(&r)
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.ExportCSV(context.Background(), &b, e.ID, store.ExportRuns); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range recs[0] {
		if h == "fanout" {
			col = i
		}
	}
	if col < 0 || recs[1][col] != "-1,-1" {
		t.Fatalf("fanout cell %q (header %v)", recs[1][col], recs[0])
	}
}

// TestDeletedDatabaseRefusesWrites: once outcore.db is unlinked (or
// replaced) under a running process, writes fail with ErrGone instead of
// going to the unlinked file.
func TestDeletedDatabaseRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	s, err := store.OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func() error {
		_, _, err := seedErr(s)
		return err
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(store.Path(dir)); err != nil {
		t.Fatal(err)
	}
	if err := write(); !errors.Is(err, store.ErrGone) || !strings.Contains(err.Error(), "no longer exists") {
		t.Fatalf("write after delete: %v", err)
	}
	if err := os.WriteFile(store.Path(dir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(); !errors.Is(err, store.ErrGone) || !strings.Contains(err.Error(), "another file") {
		t.Fatalf("write after replace: %v", err)
	}
}

// seedErr inserts an experiment and returns the error instead of failing.
func seedErr(s *store.Store) (store.Experiment, int64, error) {
	e := store.Experiment{Name: "e", Dataset: "tiny", Grid: json.RawMessage(`{"dataset":"tiny"}`)}
	err := s.Update(context.Background(), func(tx *store.Tx) error { return tx.InsertExperiment(&e) })
	return e, e.ID, err
}

// TestReadOnlyDataDirSaysSo: a read-only data directory is reported as
// not writable, not as "no such file or directory" (SQLite's words).
func TestReadOnlyDataDirSaysSo(t *testing.T) {
	dir := mountTmpfs(t, "size=1m", unix.MS_RDONLY)
	_, err := store.OpenDataDir(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "not writable") || !strings.Contains(err.Error(), "read-only file system") ||
		strings.Contains(err.Error(), "no such file") {
		t.Fatalf("open in a read-only folder: %v", err)
	}
}

// TestDiskFullIsErrDiskFullAndRecovers: a write on a full file system fails
// with ErrDiskFull, commits nothing, and the same write succeeds once space
// is freed.
func TestDiskFullIsErrDiskFullAndRecovers(t *testing.T) {
	dir := mountTmpfs(t, "size=2m", 0)
	s, err := store.OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := json.RawMessage(`{"dataset":"tiny","pad":"` + strings.Repeat("x", 256<<10) + `"}`)
	write := func() error {
		e := store.Experiment{Name: "big", Dataset: "tiny", Grid: big}
		return s.Update(context.Background(), func(tx *store.Tx) error { return tx.InsertExperiment(&e) })
	}
	filler := fillDisk(t, dir)
	err = write()
	if !errors.Is(err, store.ErrDiskFull) || !store.IsDiskFull(err) || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("write on a full disk: %v", err)
	}
	if exps, err := s.ListExperiments(context.Background()); err != nil || len(exps) != 0 {
		t.Fatalf("after the failed write: %d experiments, %v", len(exps), err)
	}
	os.Remove(filler)
	if err := write(); err != nil {
		t.Fatalf("write after freeing space: %v", err)
	}
	if exps, err := s.ListExperiments(context.Background()); err != nil || len(exps) != 1 {
		t.Fatalf("after the retry: %d experiments, %v", len(exps), err)
	}
}
