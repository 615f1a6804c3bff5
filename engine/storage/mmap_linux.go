package storage

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"outcore/engine/metrics"
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

// mmapReader copies from the File's mapping. Its device reads are
// measured on the copying thread (metrics.ThreadMeter): the page faults of
// a copy are the only reads that thread does while it copies.
type mmapReader struct {
	f       *File
	reaping atomic.Bool
	mu      sync.Mutex
	closed  bool
	ready   []Completion
	t       tally
	vec     []byte // mincore vector of the span a ReadRows call touches
	miss    []bool // rows of the call not resident at its start
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
	m := metrics.StartThreadMeter()
	maybe := r.notResident(ids, rb)
	for i, id := range ids {
		d := dst[int64(i)*rb : int64(i+1)*rb]
		if maybe != nil && !maybe[i] {
			r.copySpan(id*rb, d)
			continue
		}
		// The row may fault: a read of the thread during its copy makes
		// it a row from the device.
		before := osutil.ThreadReadBytes()
		r.copySpan(id*rb, d)
		if osutil.ThreadReadBytes() > before {
			r.t.deviceRows++
			r.t.deliveredRows++
		}
	}
	read, _, _ := m.StopMapped()
	r.t.addFaults(read)
	r.t.rows += int64(len(ids))
	return nil
}

// notResident returns, per row of ids, whether any of its pages was not in
// the page cache (mincore over the span the rows cover), or nil when the
// residency cannot be read (then every row is checked as it is copied).
// A row resident here but evicted before its copy is the one thing this
// misses: its bytes are counted, the row is not.
func (r *mmapReader) notResident(ids []int64, rb int64) []bool {
	if len(ids) == 0 || len(r.f.mapping) == 0 {
		return nil
	}
	lo, hi := ids[0], ids[0]
	for _, id := range ids {
		lo, hi = min(lo, id), max(hi, id)
	}
	ps := int64(os.Getpagesize())
	first, end := lo*rb/ps, ((hi+1)*rb+ps-1)/ps
	if n := int(end - first); cap(r.vec) < n {
		r.vec = make([]byte, n)
	} else {
		r.vec = r.vec[:n]
	}
	if err := osutil.Mincore(r.f.mapping[first*ps:min(end*ps, int64(len(r.f.mapping)))], r.vec); err != nil {
		return nil
	}
	r.miss = append(r.miss[:0], make([]bool, len(ids))...)
	for i, id := range ids {
		for pg := id * rb / ps; pg <= ((id+1)*rb-1)/ps; pg++ {
			if r.vec[pg-first]&1 == 0 {
				r.miss[i] = true
				break
			}
		}
	}
	return r.miss
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
	m := metrics.StartThreadMeter()
	r.copySpan(off, dst)
	read, _, _ := m.StopMapped()
	r.t.addFaults(read)
	if read.Bytes > 0 {
		r.t.deliveredRows += r.f.rangeRows(len(dst))
	}
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
	m := metrics.StartThreadMeter()
	for i := range reqs {
		before := osutil.ThreadReadBytes()
		r.copySpan(reqs[i].Off, reqs[i].Dst)
		fromDevice := osutil.ThreadReadBytes() > before
		switch {
		case reqs[i].row:
			r.t.rows++
			if fromDevice {
				r.t.deviceRows++
				r.t.deliveredRows++
			}
		case fromDevice:
			r.t.deliveredRows += r.f.rangeRows(len(reqs[i].Dst))
		}
		r.ready = append(r.ready, Completion{Tag: reqs[i].Tag})
	}
	read, _, _ := m.StopMapped()
	r.t.addFaults(read)
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
