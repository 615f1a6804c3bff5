package osutil

import (
	"errors"
	"os"
	"path/filepath"
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
