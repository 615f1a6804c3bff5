package sample

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"outcore/engine/storage"
	"outcore/internal/osutil"
)

// StorageIndices reads index entries from indices.bin through engine/storage
// (the variants that keep the topology on disk, as Ginex and GNNDrive do).
// The file must be opened with RowBytes 8 so that row i is entry i. A
// Gather of up to GatherChunkRows entries is one ReadRows call, whose
// planner reads each needed block once. A larger one is sorted by position
// and read in chunks of GatherChunkRows consecutive positions: a Reader's
// bookkeeping grows with its largest call (storage.PlanBytesPerRow per
// row, a few hundred bytes for an 8-byte entry), and a sampler's last hop
// asks for hundreds of thousands of entries; sorted chunks read the same
// blocks as one call would, but for at most one block at each chunk
// boundary. Readers are pooled, so concurrent samplers each get their own
// (and with io_uring their own ring). GatherBytes is what one concurrent
// Gather holds.
type StorageIndices struct {
	f    *storage.File
	mu   sync.Mutex
	free []*indexReader
	all  []*indexReader
}

// GatherChunkRows is the most index entries one ReadRows call of a
// StorageIndices plans.
const GatherChunkRows = 1 << 14

// indexReader is a pooled Reader with its sort and chunk scratch.
type indexReader struct {
	r     storage.Reader
	order []posAt
	cpos  []int64
	cout  []int64
}

// posAt is an entry's position in the file and its place in the Gather.
type posAt struct {
	pos int64
	at  int
}

// GatherBytes is the Go heap one Gather of up to entries index entries
// holds, and its pooled Reader keeps: the sort order (16 B per entry when
// it is chunked), a chunk's positions and values, and the Reader's
// bookkeeping for a chunk (storage.PlanBytesPerRow). The Reader's I/O
// buffer is off the heap (storage.File.ReaderBufferBytes).
func GatherBytes(entries int) int64 {
	chunk := min(entries, GatherChunkRows)
	var heap int64
	if entries > GatherChunkRows {
		heap += int64(entries)*16 + int64(chunk)*16
	}
	return heap + int64(chunk)*storage.PlanBytesPerRow
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
	ir, err := s.get()
	if err != nil {
		return err
	}
	defer s.put(ir)
	if len(pos) <= GatherChunkRows {
		return s.read(ir.r, pos, out[:len(pos)])
	}
	ir.order = slices.Grow(ir.order[:0], len(pos))
	for i, p := range pos {
		ir.order = append(ir.order, posAt{pos: p, at: i})
	}
	slices.SortFunc(ir.order, func(a, b posAt) int { return cmp.Compare(a.pos, b.pos) })
	ir.cpos = slices.Grow(ir.cpos[:0], GatherChunkRows)[:0]
	ir.cout = slices.Grow(ir.cout[:0], GatherChunkRows)[:GatherChunkRows]
	for lo := 0; lo < len(ir.order); lo += GatherChunkRows {
		chunk := ir.order[lo:min(lo+GatherChunkRows, len(ir.order))]
		ir.cpos = ir.cpos[:0]
		for _, e := range chunk {
			ir.cpos = append(ir.cpos, e.pos)
		}
		if err := s.read(ir.r, ir.cpos, ir.cout[:len(chunk)]); err != nil {
			return err
		}
		for k, e := range chunk {
			out[e.at] = ir.cout[k]
		}
	}
	return nil
}

// read is one ReadRows call of entries pos into out.
func (s *StorageIndices) read(r storage.Reader, pos []int64, out []int64) error {
	if err := r.ReadRows(context.Background(), pos, osutil.Bytes(out)); err != nil {
		return fmt.Errorf("read %d index entries of %s: %w", len(pos), s.f.Path(), err)
	}
	return nil
}

func (s *StorageIndices) get() (*indexReader, error) {
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
	ir := &indexReader{r: r}
	s.all = append(s.all, ir)
	return ir, nil
}

func (s *StorageIndices) put(r *indexReader) {
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
	idle := make(map[*indexReader]bool, len(s.free))
	for _, r := range s.free {
		idle[r] = true
		if err := r.r.Close(); err != nil && first == nil {
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
		if err := r.r.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.all, s.free = nil, nil
	return first
}
