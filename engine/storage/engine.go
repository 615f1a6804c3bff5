package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"outcore/engine/metrics"
)

// This file is the machinery the direct-I/O backends (uring, pread) share:
// requests are planned into aligned segments (plan.go), segments wait in a
// FIFO until one of QueueDepth buffer slots is free, a device reads them,
// and finished segments are copied into the callers' destinations. The
// devices only move bytes between the file and slot buffers.

// doneRec is one finished device read: the slot it used and the kernel's
// result (bytes read, or -errno).
type doneRec struct {
	slot int32
	res  int32
}

// device performs aligned reads into slot buffers for an engine.
type device interface {
	// issue starts reading s.buf[s.done:] from file offset s.off+s.done for
	// every segment. Called with the engine lock held.
	issue(segs []*segment) error
	// poll appends finished reads to out without blocking. Called by one
	// goroutine at a time (the one reaping), with the engine lock held.
	poll(out []doneRec) []doneRec
	// wait blocks until poll has something to return. Called without the
	// engine lock by the reaping goroutine; returns how many EINTRs it
	// retried.
	wait() (interrupts int, err error)
	// close releases the device once nothing is in flight.
	close() error
}

// piece copies bytes [at, at+len(dst)) of a segment into dst.
type piece struct {
	at  int
	dst []byte
	req int32
}

// segment is one aligned device read and the pieces it serves.
type segment struct {
	off    int64  // aligned file offset
	n      int    // aligned length
	want   int    // bytes the device must return: up to the last byte a piece needs
	done   int    // bytes returned so far (short reads are re-issued)
	slot   int32  // buffer slot while in flight
	buf    []byte // the slot's buffer, [:n]
	start  int64  // first issue time (engine clock, ns)
	err    error
	pieces []piece
}

// reqState tracks one request: how many pieces are still unread.
type reqState struct {
	tag       uint64
	remaining int32
	sync      bool
	err       error
	rows      int64 // rows the request delivers when it succeeds (Stats.DeliveredRows)
}

// engine implements Reader for the direct-I/O backends.
type engine struct {
	f         *File
	dev       device
	slotBytes int
	arena     []byte
	base      time.Time

	reaping atomic.Bool // a goroutine is reaping (Reap, ReadRows, ReadRange)

	mu         sync.Mutex
	closed     bool
	broken     error // a device failure after which nothing can be trusted
	slots      []*segment
	freeSlots  []int32
	segFree    []*segment
	pending    []*segment
	pendHead   int
	retry      []*segment
	inflight   int
	reqs       []reqState
	freeReqs   []int32
	unfinished int // async requests not yet finished
	ready      []Completion
	syncDone   bool
	pl         planner
	segs       []*segment // scratch: segments of the plan being enqueued
	batch      []*segment // scratch: segments being issued
	recs       []doneRec  // scratch: finished reads
	newReqs    []int32    // scratch: requests of one Submit
	t          tally
}

// newEngine sets up an engine with depth slots of slotBytes each (slot
// stride a multiple of align). dev is attached by the caller.
func newEngine(f *File, depth int, slotBytes int, arena []byte) *engine {
	e := &engine{
		f:         f,
		slotBytes: slotBytes,
		arena:     arena,
		base:      time.Now(),
		slots:     make([]*segment, depth),
		freeSlots: make([]int32, 0, depth),
		recs:      make([]doneRec, 0, 2*depth),
	}
	for i := depth - 1; i >= 0; i-- {
		e.freeSlots = append(e.freeSlots, int32(i))
	}
	e.pl.bs = f.blockSize
	e.pl.maxSeg = int64(slotBytes)
	e.pl.separate = f.opts.SeparateReads
	e.pl.noMerge = f.opts.NoMerge
	return e
}

// now is the engine clock in nanoseconds (monotonic).
func (e *engine) now() int64 { return int64(time.Since(e.base)) }

// allocReq returns a free request index.
func (e *engine) allocReq(tag uint64, sync bool) int32 {
	var i int32
	if n := len(e.freeReqs); n > 0 {
		i = e.freeReqs[n-1]
		e.freeReqs = e.freeReqs[:n-1]
	} else {
		e.reqs = append(e.reqs, reqState{})
		i = int32(len(e.reqs) - 1)
	}
	e.reqs[i] = reqState{tag: tag, sync: sync}
	return i
}

// finishReq is called when request i has no pieces left.
func (e *engine) finishReq(i int32) {
	r := &e.reqs[i]
	if r.err == nil {
		e.t.deliveredRows += r.rows // the request's bytes are all in its destination
	}
	if r.sync {
		e.syncDone = true
		return // readSync frees it after reading r.err
	}
	e.ready = append(e.ready, Completion{Tag: r.tag, Err: r.err})
	e.unfinished--
	e.reqs[i] = reqState{}
	e.freeReqs = append(e.freeReqs, i)
}

// enqueue plans e.pl.items and queues the resulting segments.
func (e *engine) enqueue() {
	e.pl.plan()
	segs := e.segs[:0]
	for _, sp := range e.pl.spans {
		var s *segment
		if n := len(e.segFree); n > 0 {
			s = e.segFree[n-1]
			e.segFree = e.segFree[:n-1]
		} else {
			s = &segment{}
		}
		s.off, s.n = sp.off, int(sp.end-sp.off)
		s.want = 0 // raised to the end of the last byte a piece needs
		s.done, s.err, s.slot, s.buf = 0, nil, -1, nil
		s.pieces = s.pieces[:0]
		segs = append(segs, s)
	}
	// Rows are counted once per call: a span asked twice in one ReadRows
	// or Submit call (a repeated id, two requests of one line) is read
	// once and its rows count once (Stats.DeliveredRows). The planner
	// sorted the items, so the copies are neighbours.
	for i := 1; i < len(e.pl.items); i++ {
		a, b := &e.pl.items[i-1], &e.pl.items[i]
		if a.off == b.off && len(a.dst) == len(b.dst) {
			e.reqs[b.req].rows -= e.f.rangeRows(len(b.dst))
		}
	}
	for _, pp := range e.pl.pieces {
		s := segs[pp.seg]
		s.pieces = append(s.pieces, piece{at: pp.at, dst: pp.dst, req: pp.req})
		s.want = max(s.want, pp.at+len(pp.dst))
		e.reqs[pp.req].remaining++
	}
	for _, it := range e.pl.items {
		e.t.bytesNeeded += int64(len(it.dst))
	}
	e.t.dirty = true
	e.pending = append(e.pending, segs...)
	clear(segs)
	e.segs = segs[:0]
	clear(e.pl.items) // drop references to caller memory
	e.pl.items = e.pl.items[:0]
	clear(e.pl.pieces)
	e.pl.pieces = e.pl.pieces[:0]
}

// pump re-issues short reads and binds pending segments to free slots, then
// hands them to the device in one batch.
func (e *engine) pump() error {
	if e.broken != nil {
		return e.broken
	}
	batch := append(e.batch[:0], e.retry...)
	clear(e.retry)
	e.retry = e.retry[:0]
	nretry := len(batch)
	for len(e.freeSlots) > 0 && e.pendHead < len(e.pending) {
		s := e.pending[e.pendHead]
		e.pending[e.pendHead] = nil
		e.pendHead++
		slot := e.freeSlots[len(e.freeSlots)-1]
		e.freeSlots = e.freeSlots[:len(e.freeSlots)-1]
		s.slot = slot
		off := int(slot) * e.slotBytes
		s.buf = e.arena[off : off+s.n : off+s.n]
		e.slots[slot] = s
		batch = append(batch, s)
	}
	if e.pendHead > 0 && 2*e.pendHead >= len(e.pending) {
		// Reclaim the consumed front so a queue that never empties
		// (a producer always ahead of the device) does not grow.
		n := copy(e.pending, e.pending[e.pendHead:])
		clear(e.pending[n:])
		e.pending = e.pending[:n]
		e.pendHead = 0
	}
	e.batch = batch[:0]
	if len(batch) == 0 {
		return nil
	}
	now := e.now()
	for _, s := range batch[nretry:] {
		s.start = now
	}
	e.inflight += len(batch)
	e.t.requests += int64(len(batch))
	e.t.dirty = true
	err := e.dev.issue(batch)
	clear(batch)
	if err != nil {
		e.broken = fmt.Errorf("%s: submit reads: %w", e.f.path, err)
		return e.broken
	}
	return nil
}

// collect takes finished reads from the device and completes their
// segments. When draining, reads that would be re-issued fail instead.
func (e *engine) collect(draining bool) {
	recs := e.dev.poll(e.recs[:0])
	e.recs = recs[:0]
	if len(recs) == 0 {
		return
	}
	now := e.now()
	for _, r := range recs {
		s := e.slots[r.slot]
		e.inflight--
		res := int(r.res)
		switch {
		case res < 0:
			errno := syscall.Errno(-res)
			if (errno == syscall.EINTR || errno == syscall.EAGAIN) && !draining {
				e.t.retries++
				e.retry = append(e.retry, s)
				continue
			}
			s.err = fmt.Errorf("read %s at offset %d (%d bytes): %w", e.f.path, s.off+int64(s.done), s.n-s.done, errno)
		case res == 0 && s.done < s.want:
			s.err = fmt.Errorf("read %s at offset %d: file ends before byte %d: %w", e.f.path, s.off+int64(s.done), s.off+int64(s.want), io.ErrUnexpectedEOF)
		default:
			s.done += res
			if s.done < s.want {
				if !draining {
					e.t.retries++
					e.retry = append(e.retry, s)
					continue
				}
				s.err = fmt.Errorf("read %s at offset %d: short read while closing: %w", e.f.path, s.off, io.ErrUnexpectedEOF)
			}
		}
		e.finishSeg(s, now)
	}
	clear(recs)
}

// finishSeg copies a finished segment into its pieces' destinations and
// frees its slot.
func (e *engine) finishSeg(s *segment, now int64) {
	e.t.latency(now - s.start)
	e.t.bytesRead += int64(s.done)
	e.t.deviceBytes += int64(s.done)
	e.t.reqClass[metrics.RequestClass(int64(s.done))]++
	for _, p := range s.pieces {
		r := &e.reqs[p.req]
		if s.err == nil {
			copy(p.dst, s.buf[p.at:])
		} else if r.err == nil {
			r.err = s.err
		}
		r.remaining--
		if r.remaining == 0 {
			e.finishReq(p.req)
		}
	}
	e.slots[s.slot] = nil
	e.freeSlots = append(e.freeSlots, s.slot)
	s.buf = nil
	e.recycle(s)
}

// pooledPieces is the most pieces a pooled segment keeps room for. A
// segment merges up to MaxMergeBytes of rows (128 rows of 512 B at 64
// KiB), and the pool keeps as many segments as the largest call had: had
// each kept the room of the most pieces it ever served, a Reader would
// hold segments × most pieces, far more than PlanBytesPerRow per row of
// its largest call: 1,891 B per row for 512-byte rows after calls of
// changing density (TestReadPlanBytesPerRowMerged), and 21.6 MB in
// DiskGNN's four disk-cache readers. A segment with more pieces than this
// allocates them for its call, which carries at least as many rows.
const pooledPieces = 8

// recycle returns a segment whose pieces are finished to the pool.
func (e *engine) recycle(s *segment) {
	clear(s.pieces)
	s.pieces = s.pieces[:0]
	if cap(s.pieces) > pooledPieces {
		s.pieces = nil
	}
	e.segFree = append(e.segFree, s)
}

// dropPending fails every queued segment that was not issued yet.
func (e *engine) dropPending(err error) {
	for _, s := range e.pending[e.pendHead:] {
		for _, p := range s.pieces {
			r := &e.reqs[p.req]
			if r.err == nil {
				r.err = err
			}
			r.remaining--
			if r.remaining == 0 {
				e.finishReq(p.req)
			}
		}
		e.recycle(s)
	}
	clear(e.pending)
	e.pending = e.pending[:0]
	e.pendHead = 0
}

// waitUnlocked waits for the device with the lock released.
func (e *engine) waitUnlocked() error {
	if e.inflight == 0 {
		return fmt.Errorf("%s: internal error: waiting with nothing in flight", e.f.path)
	}
	e.mu.Unlock()
	intr, err := e.dev.wait()
	e.mu.Lock()
	if intr > 0 {
		e.t.interrupts += int64(intr)
		e.t.dirty = true
	}
	if err != nil {
		e.broken = fmt.Errorf("%s: wait for completions: %w", e.f.path, err)
		return e.broken
	}
	return nil
}

// checkOpen returns why the engine cannot be used, or nil.
func (e *engine) checkOpen() error {
	if e.closed {
		return fmt.Errorf("%s: reader: %w", e.f.path, ErrClosed)
	}
	return e.broken
}

// ReadRows implements Reader.
func (e *engine) ReadRows(ctx context.Context, ids []int64, dst []byte) error {
	if err := e.f.checkRows(ids, dst); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	rb := e.f.opts.RowBytes
	return e.readSync(ctx, func(req int32) {
		for i, id := range ids {
			e.pl.items = append(e.pl.items, item{off: id * rb, dst: dst[int64(i)*rb : int64(i+1)*rb : int64(i+1)*rb], req: req})
		}
		e.t.rows += int64(len(ids))
		e.t.deviceRows += int64(len(ids))
		e.reqs[req].rows = int64(len(ids))
	})
}

// ReadRange implements Reader.
func (e *engine) ReadRange(ctx context.Context, off int64, dst []byte) error {
	if err := e.f.checkRange(off, len(dst)); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	return e.readSync(ctx, func(req int32) {
		e.pl.items = append(e.pl.items, item{off: off, dst: dst, req: req})
		e.reqs[req].rows = e.f.rangeRows(len(dst))
	})
}

// readSync plans the items fill adds for one synchronous request and runs
// the device until they are all read.
func (e *engine) readSync(ctx context.Context, fill func(req int32)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !e.reaping.CompareAndSwap(false, true) {
		return fmt.Errorf("%s: synchronous read during Reap: %w", e.f.path, ErrBusy)
	}
	defer e.reaping.Store(false)
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.t.flush(&e.f.counters)
	if err := e.checkOpen(); err != nil {
		return err
	}
	if e.unfinished > 0 || len(e.ready) > 0 {
		return fmt.Errorf("%s: synchronous read with %d asynchronous requests outstanding: %w", e.f.path, e.unfinished+len(e.ready), ErrBusy)
	}
	req := e.allocReq(0, true)
	e.syncDone = false
	fill(req)
	e.enqueue()
	if e.reqs[req].remaining == 0 {
		e.syncDone = true
	}
	var err error
	for !e.syncDone {
		if err = e.pump(); err != nil {
			break
		}
		if err = ctx.Err(); err != nil {
			// Stop issuing; reads in flight still target dst, so wait for
			// them before returning.
			e.dropPending(err)
			for e.inflight > 0 && e.broken == nil {
				if e.waitUnlocked() == nil {
					e.collect(true)
				}
			}
			break
		}
		if err = e.waitUnlocked(); err != nil {
			break
		}
		e.collect(false)
	}
	if err == nil {
		err = e.reqs[req].err
	}
	e.reqs[req] = reqState{}
	e.freeReqs = append(e.freeReqs, req)
	e.syncDone = false
	return err
}

// Submit implements Reader.
func (e *engine) Submit(reqs []Request) error {
	for i := range reqs {
		if err := e.f.checkRange(reqs[i].Off, len(reqs[i].Dst)); err != nil {
			return fmt.Errorf("request %d (tag %d): %w", i, reqs[i].Tag, err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.t.flush(&e.f.counters)
	if err := e.checkOpen(); err != nil {
		return err
	}
	if len(reqs) == 0 {
		return nil
	}
	newReqs := e.newReqs[:0]
	for i := range reqs {
		r := &reqs[i]
		id := e.allocReq(r.Tag, false)
		newReqs = append(newReqs, id)
		e.pl.items = append(e.pl.items, item{off: r.Off, dst: r.Dst, req: id})
		if r.row {
			e.t.rows++
			e.t.deviceRows++
			e.reqs[id].rows = 1
		} else {
			e.reqs[id].rows = e.f.rangeRows(len(r.Dst))
		}
	}
	e.unfinished += len(reqs)
	e.enqueue()
	for _, id := range newReqs {
		if e.reqs[id].remaining == 0 {
			e.finishReq(id) // empty Dst
		}
	}
	e.newReqs = newReqs[:0]
	return e.pump()
}

// Reap implements Reader.
func (e *engine) Reap(ctx context.Context, out []Completion, min int) ([]Completion, error) {
	if !e.reaping.CompareAndSwap(false, true) {
		return out, fmt.Errorf("%s: concurrent Reap: %w", e.f.path, ErrBusy)
	}
	defer e.reaping.Store(false)
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.t.flush(&e.f.counters)
	if e.closed {
		return out, e.checkOpen()
	}
	got := 0
	for {
		e.collect(false)
		err := e.pump()
		got += len(e.ready)
		out = append(out, e.ready...)
		clear(e.ready)
		e.ready = e.ready[:0]
		if err != nil {
			return out, err
		}
		if got >= min || e.unfinished == 0 {
			return out, nil
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if err := e.waitUnlocked(); err != nil {
			return out, err
		}
	}
}

// Outstanding implements Reader.
func (e *engine) Outstanding() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.unfinished + len(e.ready)
}

// Close implements Reader: queued reads fail with ErrClosed, reads in
// flight are waited for, then the device and buffers are released.
func (e *engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.dropPending(fmt.Errorf("%s: reader: %w", e.f.path, ErrClosed))
	for _, s := range e.retry {
		s.err = fmt.Errorf("%s: reader: %w", e.f.path, ErrClosed)
		e.finishSeg(s, e.now())
	}
	e.retry = e.retry[:0]
	var errs []error
	for e.inflight > 0 && e.broken == nil {
		if e.waitUnlocked() == nil {
			e.collect(true)
		}
	}
	if e.inflight > 0 {
		errs = append(errs, fmt.Errorf("%s: closing with %d reads in flight after: %w", e.f.path, e.inflight, e.broken))
	}
	e.t.flush(&e.f.counters)
	e.mu.Unlock()
	errs = append(errs, e.dev.close())
	if e.inflight == 0 {
		errs = append(errs, freeArena(e.arena))
	}
	e.arena = nil
	e.f.readerClosed()
	return errors.Join(errs...)
}
