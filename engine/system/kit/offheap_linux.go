package kit

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OffHeap hands out large number arrays from anonymous memory maps instead
// of the Go heap. The caches and buffers the variants size from the memory
// budget live there, as they would in the papers' C++/PyTorch code: the
// garbage collector's pacing (GOGC) then applies to the small, churning
// heap only, instead of letting the heap grow by a quarter of a cache that
// never dies. Pages are charged to the memory cgroup when first touched.
type OffHeap struct {
	mu   sync.Mutex
	maps [][]byte
}

// Bytes returns n zeroed bytes.
func (o *OffHeap) Bytes(n int) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes: %w", n, err)
	}
	o.mu.Lock()
	o.maps = append(o.maps, b)
	o.mu.Unlock()
	return b, nil
}

// Float32s returns n zeroed float32s.
func (o *OffHeap) Float32s(n int) ([]float32, error) {
	b, err := o.Bytes(n * 4)
	if err != nil || b == nil {
		return nil, err
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n), nil
}

// Int64s returns n zeroed int64s.
func (o *OffHeap) Int64s(n int) ([]int64, error) {
	b, err := o.Bytes(n * 8)
	if err != nil || b == nil {
		return []int64{}, err
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), n), nil
}

// Free unmaps everything handed out; no slice from it may be used after.
func (o *OffHeap) Free() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var errs []error
	for _, b := range o.maps {
		if err := unix.Munmap(b); err != nil {
			errs = append(errs, err)
		}
	}
	o.maps = nil
	return errors.Join(errs...)
}

// Drop returns every page handed out to the system (MADV_DONTNEED); the
// slices stay valid and read as zeros until written again. A variant drops
// a per-epoch buffer between epochs so that evaluation and the next
// epoch's preparation do not hold it.
func (o *OffHeap) Drop() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var errs []error
	for _, b := range o.maps {
		if err := unix.Madvise(b, unix.MADV_DONTNEED); err != nil {
			errs = append(errs, fmt.Errorf("release %d bytes: %w", len(b), err))
		}
	}
	return errors.Join(errs...)
}
