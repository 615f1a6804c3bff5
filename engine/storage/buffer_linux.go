package storage

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// allocArena maps size bytes of anonymous memory: page-aligned, outside the
// Go heap (the garbage collector never moves or frees it), so the kernel may
// write into it while a read is in flight. Pages are touched lazily.
func allocArena(size int) ([]byte, error) {
	if size <= 0 {
		return nil, nil
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("map %d-byte I/O buffer: %w", size, err)
	}
	return b, nil
}

// freeArena unmaps an arena from allocArena.
func freeArena(b []byte) error {
	if b == nil {
		return nil
	}
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("unmap I/O buffer: %w", err)
	}
	return nil
}
