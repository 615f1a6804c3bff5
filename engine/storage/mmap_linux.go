package storage

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"outcore/internal/osutil"
)

// The mmap backend: the whole file is mapped read-only with readahead off
// (madvise(MADV_RANDOM)), and rows are copied out of the mapping, so page
// faults (and the disk reads behind them) happen on the calling goroutine,
// one page at a time, as in PyG+.

// mapFile maps the file for the mmap backend.
func (f *File) mapFile() error {
	if f.size == 0 {
		return nil
	}
	if int64(int(f.size)) != f.size {
		return fmt.Errorf("map %s: %w: %d bytes do not fit the address space", f.path, ErrInvalid, f.size)
	}
	m, err := osutil.MapFD(f.fd, f.size)
	if err != nil {
		return fmt.Errorf("map %s: %w", f.path, err)
	}
	f.mapping = m
	return nil
}

// mmapReader copies from the File's mapping.
type mmapReader struct {
	f       *File
	reaping atomic.Bool
	mu      sync.Mutex
	closed  bool
	ready   []Completion
	t       tally
}

// newMmapReader returns a Reader over f's mapping.
func newMmapReader(f *File) *mmapReader { return &mmapReader{f: f} }

// copySpan copies the file's bytes at off into dst, timing the copy and
// counting the pages it touches.
func (r *mmapReader) copySpan(off int64, dst []byte) {
	if len(dst) == 0 {
		return
	}
	t0 := time.Now()
	copy(dst, r.f.mapping[off:off+int64(len(dst))])
	r.t.latency(int64(time.Since(t0)))
	ps := r.f.blockSize
	lo, hi := off&^(ps-1), (off+int64(len(dst))+ps-1)&^(ps-1)
	r.t.requests++
	r.t.bytesNeeded += int64(len(dst))
	r.t.bytesRead += hi - lo
}

// checkSync applies the rules of a synchronous read: open, and no
// asynchronous requests outstanding.
func (r *mmapReader) checkSync() error {
	if r.closed {
		return fmt.Errorf("%s: reader: %w", r.f.path, ErrClosed)
	}
	if len(r.ready) > 0 {
		return fmt.Errorf("%s: synchronous read with %d asynchronous requests outstanding: %w", r.f.path, len(r.ready), ErrBusy)
	}
	return nil
}

// ReadRows implements Reader.
func (r *mmapReader) ReadRows(ctx context.Context, ids []int64, dst []byte) error {
	if err := r.f.checkRows(ids, dst); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.t.flush(&r.f.counters)
	if err := r.checkSync(); err != nil {
		return err
	}
	rb := r.f.opts.RowBytes
	for i, id := range ids {
		r.copySpan(id*rb, dst[int64(i)*rb:int64(i+1)*rb])
	}
	r.t.rows += int64(len(ids))
	return nil
}

// ReadRange implements Reader.
func (r *mmapReader) ReadRange(ctx context.Context, off int64, dst []byte) error {
	if err := r.f.checkRange(off, len(dst)); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.t.flush(&r.f.counters)
	if err := r.checkSync(); err != nil {
		return err
	}
	r.copySpan(off, dst)
	return nil
}

// Submit implements Reader: the copies happen now, on the caller.
func (r *mmapReader) Submit(reqs []Request) error {
	for i := range reqs {
		if err := r.f.checkRange(reqs[i].Off, len(reqs[i].Dst)); err != nil {
			return fmt.Errorf("request %d (tag %d): %w", i, reqs[i].Tag, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.t.flush(&r.f.counters)
	if r.closed {
		return fmt.Errorf("%s: reader: %w", r.f.path, ErrClosed)
	}
	for i := range reqs {
		r.copySpan(reqs[i].Off, reqs[i].Dst)
		r.ready = append(r.ready, Completion{Tag: reqs[i].Tag})
	}
	return nil
}

// Reap implements Reader; mmap requests finish inside Submit.
func (r *mmapReader) Reap(ctx context.Context, out []Completion, min int) ([]Completion, error) {
	if !r.reaping.CompareAndSwap(false, true) {
		return out, fmt.Errorf("%s: concurrent Reap: %w", r.f.path, ErrBusy)
	}
	defer r.reaping.Store(false)
	r.mu.Lock()
	defer r.mu.Unlock()
	out = append(out, r.ready...)
	clear(r.ready)
	r.ready = r.ready[:0]
	return out, nil
}

// Outstanding implements Reader.
func (r *mmapReader) Outstanding() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ready)
}

// Close implements Reader.
func (r *mmapReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.f.readerClosed()
	return nil
}
