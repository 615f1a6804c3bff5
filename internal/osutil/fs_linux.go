package osutil

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// FreeDiskBytes is the space an unprivileged writer has left on the file
// system holding path (statfs: available blocks × block size).
func FreeDiskBytes(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// AdviseSequential tells the kernel that f will be read sequentially
// (posix_fadvise SEQUENTIAL: a larger readahead). It is a hint.
func AdviseSequential(f *os.File) error {
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL); err != nil {
		return fmt.Errorf("fadvise(SEQUENTIAL) %s: %w", f.Name(), err)
	}
	return nil
}

// ErrLocked is returned by TryLock when another open file description
// holds the lock.
var ErrLocked = errors.New("locked by another process")

// TryLock takes an exclusive advisory lock on f (flock) without waiting;
// the error wraps ErrLocked when someone else holds it. The lock goes
// with the open file: Unlock or closing f releases it.
func TryLock(f *os.File) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("flock %s: %w", f.Name(), ErrLocked)
		}
		return fmt.Errorf("flock %s: %w", f.Name(), err)
	}
	return nil
}

// Unlock releases TryLock's lock on f.
func Unlock(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

// DeviceID is the st_dev of the file system holding path: two paths with
// the same id are on the same file system (the device profile of the I/O
// floor names the one it measured).
func DeviceID(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Dev), nil
}
