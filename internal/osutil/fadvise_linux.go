package osutil

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DropCache asks the kernel to drop f's clean pages from the page cache
// (posix_fadvise DONTNEED over the whole file). Dirty pages stay until
// written back; it is a hint, not a guarantee.
func DropCache(f *os.File) error {
	return DropRange(f, 0, 0)
}

// DropRange drops the clean cached pages of [off, off+n) of f (n = 0: to
// the end of the file).
func DropRange(f *os.File, off, n int64) error {
	if err := unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise(DONTNEED) %s: %w", f.Name(), err)
	}
	return nil
}

// DropFileCache drops the clean cached pages of the file at path, so that
// an offline pass over a file does not leave its pages charged to the run
// and the next reader pays for its own.
func DropFileCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return DropCache(f)
}

// DropMapped drops the page cache of a file this process has mapped at b
// (the file at path): the mapping's pages are unmapped from the process
// first (MADV_DONTNEED; the mapping stays valid and faults the pages in
// again when touched), then the file's clean pages are dropped. fadvise
// alone leaves mapped pages in the cache. Pages another process maps stay.
func DropMapped(b []byte, path string) error {
	if len(b) > 0 {
		if err := unix.Madvise(b, unix.MADV_DONTNEED); err != nil {
			return fmt.Errorf("madvise(DONTNEED) %s: %w", path, err)
		}
	}
	return DropFileCache(path)
}

// EvictDir drops the clean cached pages of every regular file directly in
// dir and returns how many files it advised. It stops at the first error.
func EvictDir(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if err := DropFileCache(filepath.Join(dir, e.Name())); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// DropAllCaches writes back dirty pages and drops the machine's page
// cache, dentries and inodes (echo 3 > /proc/sys/vm/drop_caches). It needs
// root.
func DropAllCaches() error {
	unix.Sync()
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("drop page cache: %w", err)
	}
	if _, err := f.WriteString("3"); err != nil {
		f.Close()
		return fmt.Errorf("drop page cache: %w", err)
	}
	return f.Close()
}

// StartWriteback asks the kernel to start writing [off, off+n) of f to
// disk without waiting (sync_file_range SYNC_FILE_RANGE_WRITE), so that a
// long sequential writer does not pile up dirty pages. It is a hint.
func StartWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// WaitWriteback writes [off, off+n) of f and waits until it is on disk
// (data only; an fsync makes the metadata durable). Its pages are clean
// afterwards, so DropRange can evict them.
func WaitWriteback(f *os.File, off, n int64) error {
	err := unix.SyncFileRange(int(f.Fd()), off, n,
		unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
	if err != nil {
		return fmt.Errorf("sync_file_range %s: %w", f.Name(), err)
	}
	return nil
}
