package osutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFreeDiskBytes(t *testing.T) {
	n, err := FreeDiskBytes(t.TempDir())
	if err != nil || n <= 0 {
		t.Fatalf("FreeDiskBytes = %d, %v", n, err)
	}
	if _, err := FreeDiskBytes(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("FreeDiskBytes of a missing path: no error")
	}
}

func TestAdviseSequential(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := AdviseSequential(f); err != nil {
		t.Fatal(err)
	}
}

// TestTryLock: a second open file description cannot take the lock until
// the first releases it.
func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	a, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := TryLock(a); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b); err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
}

func TestDeviceID(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := DeviceID(dir)
	b, err2 := DeviceID(sub)
	if err != nil || err2 != nil || a != b {
		t.Fatalf("DeviceID %d (%v) and %d (%v) for a directory and its child", a, err, b, err2)
	}
	if p, err := DeviceID("/proc"); err == nil && p == a {
		t.Errorf("/proc on the same file system as %s", dir)
	}
	if _, err := DeviceID(filepath.Join(dir, "nosuch")); err == nil {
		t.Error("a missing path has a device")
	}
}

// TestSeqReader: the chunks come back in order, the size is the file's,
// reading past the end fails naming the file and offset, and a missing
// file is refused at open.
func TestSeqReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	want := []byte(strings.Repeat("0123456789abcdef", 1000))
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	r, size, err := OpenSeq(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if size != int64(len(want)) {
		t.Fatalf("size %d, want %d", size, len(want))
	}
	var got []byte
	for chunk := make([]byte, 4000); len(got) < len(want); got = append(got, chunk...) {
		if err := r.ReadFull(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != string(want) {
		t.Fatal("the chunks read differ from the file")
	}
	err = r.ReadFull(make([]byte, 1))
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "at 16000") {
		t.Fatalf("past the end: %v, want EOF naming %s at 16000", err, path)
	}
	if _, _, err := OpenSeq(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
