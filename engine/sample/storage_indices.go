package sample

import (
	"context"
	"fmt"
	"sync"

	"outcore/engine/storage"
	"outcore/internal/osutil"
)

// StorageIndices reads index entries from indices.bin through engine/storage
// (the variants that keep the topology on disk, as Ginex and GNNDrive do).
// The file must be opened with RowBytes 8 so that row i is entry i; one
// Gather becomes one ReadRows call, whose planner reads each needed block
// once. Readers are pooled, so concurrent samplers each get their own (and
// with io_uring their own ring).
type StorageIndices struct {
	f    *storage.File
	mu   sync.Mutex
	free []storage.Reader
	all  []storage.Reader
}

// NewStorageIndices wraps f (opened with RowBytes 8).
func NewStorageIndices(f *storage.File) *StorageIndices { return &StorageIndices{f: f} }

// Gather implements IndexSource.
func (s *StorageIndices) Gather(pos []int64, out []int64) error {
	if len(pos) == 0 {
		return nil
	}
	if s.f.RowBytes() != 8 {
		return fmt.Errorf("storage indices: %s opened with row size %d, want 8", s.f.Path(), s.f.RowBytes())
	}
	r, err := s.get()
	if err != nil {
		return err
	}
	defer s.put(r)
	dst := osutil.Bytes(out[:len(pos)])
	if err := r.ReadRows(context.Background(), pos, dst); err != nil {
		return fmt.Errorf("read %d index entries of %s: %w", len(pos), s.f.Path(), err)
	}
	return nil
}

func (s *StorageIndices) get() (storage.Reader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		r := s.free[n-1]
		s.free = s.free[:n-1]
		return r, nil
	}
	r, err := s.f.NewReader()
	if err != nil {
		return nil, fmt.Errorf("storage indices: new reader: %w", err)
	}
	s.all = append(s.all, r)
	return r, nil
}

func (s *StorageIndices) put(r storage.Reader) {
	s.mu.Lock()
	s.free = append(s.free, r)
	s.mu.Unlock()
}

// Release closes the idle pooled Readers, returning their buffers and
// request bookkeeping (which grow with the largest gather) to the system;
// later Gathers open new ones. Call it between phases under a memory budget.
func (s *StorageIndices) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	idle := make(map[storage.Reader]bool, len(s.free))
	for _, r := range s.free {
		idle[r] = true
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	kept := s.all[:0]
	for _, r := range s.all {
		if !idle[r] {
			kept = append(kept, r)
		}
	}
	clear(s.all[len(kept):])
	s.all, s.free = kept, nil
	return first
}

// Close closes every pooled Reader (not the File). No Gather may be running.
func (s *StorageIndices) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for _, r := range s.all {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.all, s.free = nil, nil
	return first
}
