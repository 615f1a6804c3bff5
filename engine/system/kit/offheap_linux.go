package kit

import (
	"errors"
	"sync"

	"outcore/internal/osutil"
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
	b, err := osutil.AnonMap(n)
	if err != nil {
		return nil, err
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
	return osutil.View[float32](b), nil
}

// Int64s returns n zeroed int64s.
func (o *OffHeap) Int64s(n int) ([]int64, error) {
	b, err := o.Bytes(n * 8)
	if err != nil || b == nil {
		return []int64{}, err
	}
	return osutil.View[int64](b), nil
}

// Free unmaps everything handed out; no slice from it may be used after.
func (o *OffHeap) Free() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var errs []error
	for _, b := range o.maps {
		if err := osutil.Unmap(b); err != nil {
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
		if err := osutil.Release(b); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
