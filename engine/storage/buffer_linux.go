package storage

import (
	"fmt"

	"outcore/internal/osutil"
)

// allocArena maps size bytes of anonymous memory: page-aligned, outside the
// Go heap (the garbage collector never moves or frees it), so the kernel may
// write into it while a read is in flight. Pages are touched lazily.
func allocArena(size int) ([]byte, error) {
	if size <= 0 {
		return nil, nil
	}
	b, err := osutil.AnonMap(size)
	if err != nil {
		return nil, fmt.Errorf("I/O buffer: %w", err)
	}
	return b, nil
}

// freeArena unmaps an arena from allocArena.
func freeArena(b []byte) error {
	if b == nil {
		return nil
	}
	if err := osutil.Unmap(b); err != nil {
		return fmt.Errorf("I/O buffer: %w", err)
	}
	return nil
}
