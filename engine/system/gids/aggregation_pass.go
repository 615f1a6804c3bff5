package gids

// One feature-aggregation pass (GIDS §3.1, Fig. 1; BaM's read_feature
// kernel, merged over iterations by the accumulator): every input row of
// the merged mini-batches is served by the constant CPU buffer when its
// node is pinned there (§3.3), else line by line from the GPU software
// cache (§3.4), and the lines the cache misses are read from storage
// (§3.1) into their cache slots and copied into the batch buffers.
//
// Stand-in for the GPU threads: the rows are split among workers, each a
// goroutine with its own io_uring ring (engine/storage Reader, O_DIRECT),
// which looks its rows up, submits the reads of the lines it misses and
// reaps its own completions (BaM's stack is synchronous per requester:
// whoever posts a command polls for it). A worker keeps up to its ring's
// depth reads in flight. Cache lookups are serialised by one lock (BaM's
// are lock-free per line). An access whose line another worker is loading
// waits for that load after the worker's own reads have drained.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/storage"
	"outcore/internal/osutil"
)

// cpuBuffer is the constant CPU buffer: slot[v] is node v's row in rows,
// or -1.
type cpuBuffer struct {
	slot []int32
	rows []float32
	dim  int
}

// row returns node v's buffered row, or nil.
func (b *cpuBuffer) row(v int64) []float32 {
	if b == nil {
		return nil
	}
	s := b.slot[v]
	if s < 0 {
		return nil
	}
	return b.rows[int(s)*b.dim : (int(s)+1)*b.dim]
}

// passRow is one input row of the pass: its node, where it goes, and
// which of the pass's merged iterations it belongs to.
type passRow struct {
	node  int64
	dst   []float32
	batch int32
}

// batchRows counts how one iteration's rows were served (DESIGN §5's
// lookup accounting): by the CPU buffer, by the cache (every line a hit),
// by a load another iteration of the pass had in flight, or by a read for
// this iteration.
type batchRows struct {
	rows, cpu, cache, shared, device int64
}

// passStats is what one pass measured.
type passStats struct {
	rows int64
	// per row: served by the CPU buffer, by the GPU cache (every line a
	// hit or shared with a load in flight), or read from storage
	cpuRows, cacheRows, storageRows int64
	batches                         []batchRows // per merged iteration
	cache                           CacheStats  // per line access
	uncached                        int64       // line reads without a cache (gpu_cache 0)
	reads                           int64       // storage reads issued
	// lineRows is the whole rows the line reads hold (each read's bytes
	// over the row size): the rows they deliver into the cache or a
	// scratch line, DESIGN §5's rows from the device of byte-range reads
	lineRows                         int64
	firstSubmit, firstDone, lastDone int64 // unix ns; 0 when nothing was read
	start, end                       time.Time
}

// redirected is the accesses GIDS redirects away from storage.
func (p passStats) redirected() int64 { return p.cpuRows + p.cacheRows }

// initial and termination are the pass's T_i and T_t (§3.2).
func (p passStats) initial() time.Duration {
	if p.reads == 0 {
		return 0
	}
	return time.Duration(p.firstDone - p.firstSubmit)
}

func (p passStats) termination() time.Duration {
	if p.reads == 0 {
		return 0
	}
	return time.Duration(p.end.UnixNano() - p.lastDone)
}

// ioTime is the pass's storage window: first submission to last completion.
func (p passStats) ioTime() time.Duration {
	if p.reads == 0 {
		return 0
	}
	return time.Duration(p.lastDone - p.firstSubmit)
}

// aggregator runs passes. Its cache is shared by the workers of a pass
// under mu.
type aggregator struct {
	feats     *storage.File
	readers   []storage.Reader
	depth     int
	cpu       *cpuBuffer
	cache     *WindowCache // nil: no software cache
	windowed  bool
	rowBytes  int64
	lineBytes int64
	fileBytes int64

	mu      sync.Mutex
	cond    *sync.Cond
	failed  bool
	loader  []int32  // per cache slot: the iteration of the pass that loads it
	scratch [][]byte // per worker: depth lines for reads around the cache
}

func newAggregator(feats *storage.File, readers []storage.Reader, depth int, cpu *cpuBuffer, cache *WindowCache, windowed bool, rowBytes, lineBytes int64) *aggregator {
	a := &aggregator{feats: feats, readers: readers, depth: depth, cpu: cpu, cache: cache, windowed: windowed,
		rowBytes: rowBytes, lineBytes: lineBytes, fileBytes: feats.Size()}
	a.cond = sync.NewCond(&a.mu)
	if cache != nil {
		a.loader = make([]int32, cache.Slots())
	}
	for range readers {
		a.scratch = append(a.scratch, make([]byte, int64(depth)*lineBytes))
	}
	return a
}

// lineOf returns the lines a row of node v covers.
func (a *aggregator) linesOf(v int64) (lo, hi int64) {
	off := v * a.rowBytes
	return off / a.lineBytes, (off + a.rowBytes - 1) / a.lineBytes
}

// run serves every row of one pass of iters merged iterations. Each
// worker is an extract worker of ep (metrics.WorkExtract) while it runs.
func (a *aggregator) run(ctx context.Context, rows []passRow, iters int, ep *metrics.EpochStats) (passStats, error) {
	ps := passStats{rows: int64(len(rows)), start: time.Now(), batches: make([]batchRows, iters)}
	a.failed = false
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
		times    = [3]atomic.Int64{} // first submit, first done, last done
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		a.mu.Lock()
		a.failed = true
		a.cond.Broadcast()
		a.mu.Unlock()
	}
	workers := min(len(a.readers), max(1, len(rows)))
	stats := make([]passStats, workers)
	for w := 0; w < workers; w++ {
		lo, hi := w*len(rows)/workers, (w+1)*len(rows)/workers
		wg.Add(1)
		stats[w].batches = make([]batchRows, iters)
		go func(w int) {
			defer wg.Done()
			if ep != nil {
				wk := ep.StartWorkerSince(metrics.WorkExtract, ps.start)
				defer wk.Stop()
			}
			if err := a.worker(ctx, w, rows[lo:hi], &stats[w], &times); err != nil {
				fail(err)
			}
		}(w)
	}
	wg.Wait()
	ps.end = time.Now()
	for _, s := range stats {
		ps.cpuRows += s.cpuRows
		ps.cacheRows += s.cacheRows
		ps.storageRows += s.storageRows
		ps.cache = ps.cache.Add(s.cache)
		ps.uncached += s.uncached
		ps.reads += s.reads
		ps.lineRows += s.lineRows
		for j, b := range s.batches {
			p := &ps.batches[j]
			p.rows += b.rows
			p.cpu += b.cpu
			p.cache += b.cache
			p.shared += b.shared
			p.device += b.device
		}
	}
	ps.firstSubmit, ps.firstDone, ps.lastDone = times[0].Load(), times[1].Load(), times[2].Load()
	return ps, firstErr
}

// waiter is a copy out of a line: bytes [from, from+len(dst)) of the line.
type waiter struct {
	slot int32
	from int64
	dst  []byte
}

// inflight is one read a worker has submitted.
type inflight struct {
	slot    int32 // cache slot, or -1 for a scratch read
	scratch int   // scratch line when slot < 0
	waiters []waiter
}

// worker serves rows on reader w.
func (a *aggregator) worker(ctx context.Context, w int, rows []passRow, st *passStats, times *[3]atomic.Int64) error {
	r := a.readers[w]
	var (
		reqs     []storage.Request
		comps    []storage.Completion
		recs     = make([]inflight, 0, a.depth)
		freeRecs []int
		freeScr  = make([]int, 0, a.depth)
		deferred []waiter
		out      int // submitted, not reaped
		lineOffs []int64
	)
	for i := a.depth - 1; i >= 0; i-- {
		freeScr = append(freeScr, i)
	}
	scratch := a.scratch[w]
	setMin := func(t *atomic.Int64, v int64) {
		for {
			old := t.Load()
			if old != 0 && old <= v || t.CompareAndSwap(old, v) {
				return
			}
		}
	}
	setMax := func(t *atomic.Int64, v int64) {
		for {
			old := t.Load()
			if old >= v || t.CompareAndSwap(old, v) {
				return
			}
		}
	}
	flush := func() error {
		if len(reqs) == 0 {
			return nil
		}
		setMin(&times[0], time.Now().UnixNano())
		if err := r.Submit(reqs); err != nil {
			return fmt.Errorf("gids: submit %d line reads: %w", len(reqs), err)
		}
		out += len(reqs)
		st.reads += int64(len(reqs))
		st.lineRows += distinctLineRows(reqs, a.rowBytes, &lineOffs)
		clear(reqs)
		reqs = reqs[:0]
		return nil
	}
	reap := func(min int) error {
		var err error
		comps, err = r.Reap(ctx, comps[:0], min)
		if len(comps) > 0 {
			now := time.Now().UnixNano()
			setMin(&times[1], now)
			setMax(&times[2], now)
		}
		for _, c := range comps {
			out--
			rec := &recs[c.Tag]
			if c.Err != nil && err == nil {
				err = fmt.Errorf("gids: read line: %w", c.Err)
			}
			var line []byte
			if rec.slot >= 0 {
				line = a.cache.Line(rec.slot)
			} else {
				line = scratch[int64(rec.scratch)*a.lineBytes : int64(rec.scratch+1)*a.lineBytes]
			}
			for _, wt := range rec.waiters {
				copy(wt.dst, line[wt.from:])
			}
			if rec.slot >= 0 {
				a.mu.Lock()
				a.cache.Filled(rec.slot, c.Err == nil)
				a.cond.Broadcast()
				a.mu.Unlock()
			} else {
				freeScr = append(freeScr, rec.scratch)
			}
			rec.waiters = rec.waiters[:0]
			freeRecs = append(freeRecs, int(c.Tag))
		}
		return err
	}
	// room makes sure one more read may be queued.
	room := func() error {
		if out+len(reqs) < a.depth && len(freeScr) > 0 {
			return nil
		}
		if err := flush(); err != nil {
			return err
		}
		for out >= a.depth || len(freeScr) == 0 {
			if err := reap(1); err != nil {
				return err
			}
		}
		return nil
	}
	newRec := func(slot int32, scr int) int {
		if n := len(freeRecs); n > 0 {
			i := freeRecs[n-1]
			freeRecs = freeRecs[:n-1]
			recs[i].slot, recs[i].scratch = slot, scr
			return i
		}
		recs = append(recs, inflight{slot: slot, scratch: scr})
		return len(recs) - 1
	}
	read := func(line int64, slot int32, wt waiter) error {
		if err := room(); err != nil {
			return err
		}
		var dst []byte
		var tag int
		if slot >= 0 {
			dst = a.cache.Line(slot)
			tag = newRec(slot, -1)
		} else {
			scr := freeScr[len(freeScr)-1]
			freeScr = freeScr[:len(freeScr)-1]
			dst = scratch[int64(scr)*a.lineBytes : int64(scr+1)*a.lineBytes]
			tag = newRec(-1, scr)
		}
		n := min(a.lineBytes, a.fileBytes-line*a.lineBytes)
		recs[tag].waiters = append(recs[tag].waiters, wt)
		reqs = append(reqs, storage.Request{Off: line * a.lineBytes, Dst: dst[:n], Tag: uint64(tag)})
		if len(reqs) >= 64 {
			if err := flush(); err != nil {
				return err
			}
			// collect what finished meanwhile, so completions (and T_i)
			// are seen as they happen rather than when the ring is full
			return reap(0)
		}
		return nil
	}
	for i, pr := range rows {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		br := &st.batches[pr.batch]
		br.rows++
		if row := a.cpu.row(pr.node); row != nil {
			copy(pr.dst, row)
			st.cpuRows++
			br.cpu++
			continue
		}
		dst := osutil.Bytes(pr.dst)
		off := pr.node * a.rowBytes
		lo, hi := a.linesOf(pr.node)
		fromStorage, sharedOther := false, false
		for l := lo; l <= hi; l++ {
			ls := l * a.lineBytes
			from := max(off, ls) - ls
			to := min(off+a.rowBytes, ls+a.lineBytes) - ls
			part := dst[ls+from-off : ls+to-off]
			wt := waiter{from: from, dst: part}
			if a.cache == nil {
				st.uncached++
				fromStorage = true
				if err := read(l, -1, wt); err != nil {
					return err
				}
				continue
			}
			a.mu.Lock()
			s, o, _ := a.cache.Lookup(l, a.windowed)
			switch o {
			case Hit:
				copy(part, a.cache.Line(s)[from:to])
				a.mu.Unlock()
				st.cache.Hits++
			case Shared:
				if a.loader[s] == pr.batch {
					fromStorage = true // a read for this iteration
				} else {
					sharedOther = true
				}
				a.mu.Unlock()
				st.cache.Shared++
				wt.slot = s
				deferred = append(deferred, wt)
			case Miss, Bypass:
				if o == Miss {
					a.loader[s] = pr.batch
				}
				a.mu.Unlock()
				fromStorage = true
				if o == Miss {
					st.cache.Misses++
				} else {
					st.cache.Bypasses++
				}
				if err := read(l, s, wt); err != nil {
					return err
				}
			}
		}
		switch {
		case fromStorage:
			st.storageRows++
			br.device++
		case sharedOther:
			st.cacheRows++
			br.shared++
		default:
			st.cacheRows++
			br.cache++
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for out > 0 {
		if err := reap(1); err != nil {
			return err
		}
	}
	// accesses that found their line loading by another worker
	if len(deferred) > 0 {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, wt := range deferred {
			for a.cache.Loading(wt.slot) && !a.failed {
				a.cond.Wait()
			}
			if a.failed {
				return errors.New("gids: pass failed while waiting for a shared line")
			}
			copy(wt.dst, a.cache.Line(wt.slot)[wt.from:])
			a.cache.Release(wt.slot)
		}
	}
	return nil
}

// distinctLineRows is the whole rows the distinct lines of one Submit hold:
// a line two rows of a pass read around the cache in one submission is
// read once and its rows delivered once (the storage layer counts the same
// way). offs is scratch.
func distinctLineRows(reqs []storage.Request, rowBytes int64, offs *[]int64) int64 {
	o := (*offs)[:0]
	var n int64
	for _, q := range reqs {
		if !slices.Contains(o, q.Off) {
			o = append(o, q.Off)
			n += int64(len(q.Dst)) / rowBytes
		}
	}
	*offs = o
	return n
}
