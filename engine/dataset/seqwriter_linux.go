package dataset

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing [off, off+n) of f to
// disk without waiting (sync_file_range SYNC_FILE_RANGE_WRITE).
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// waitWriteback writes [off, off+n) of f and waits until it is on disk
// (data only; the final fsync makes metadata durable).
func waitWriteback(f *os.File, off, n int64) error {
	return unix.SyncFileRange(int(f.Fd()), off, n,
		unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
}

// dropRange drops clean pages of [off, off+n) from the page cache.
func dropRange(f *os.File, off, n int64) {
	_ = unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED)
}
