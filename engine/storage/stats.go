package storage

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"outcore/engine/metrics"
)

// HistBuckets is the number of latency buckets: bucket 0 holds latencies
// under 1 µs, bucket i (i >= 1) those in [2^(i-1), 2^i) µs; the last bucket
// also holds everything longer.
const HistBuckets = 40

// Histogram counts latencies in log2 buckets of microseconds.
type Histogram struct {
	Buckets [HistBuckets]int64
}

// bucketOf returns the bucket index of a latency in nanoseconds.
func bucketOf(ns int64) int {
	if ns < 1000 {
		return 0
	}
	b := bits.Len64(uint64(ns / 1000))
	if b >= HistBuckets {
		b = HistBuckets - 1
	}
	return b
}

// bucketBounds returns the bucket's [lo, hi) range in microseconds.
func bucketBounds(i int) (lo, hi float64) {
	if i == 0 {
		return 0, 1
	}
	return float64(uint64(1) << (i - 1)), float64(uint64(1) << i)
}

// Add records one latency.
func (h *Histogram) Add(d time.Duration) { h.Buckets[bucketOf(int64(d))]++ }

// Count is the number of recorded latencies.
func (h *Histogram) Count() int64 {
	var n int64
	for _, c := range h.Buckets {
		n += c
	}
	return n
}

// Percentile returns the latency below which a fraction p (0..1] of the
// recorded latencies fall, interpolated linearly inside its bucket; 0 when
// nothing is recorded.
func (h *Histogram) Percentile(p float64) time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	p = min(max(p, 0), 1)
	target := p * float64(n)
	var cum float64
	for i, c := range h.Buckets {
		if c == 0 {
			continue
		}
		if cum+float64(c) >= target {
			lo, hi := bucketBounds(i)
			frac := (target - cum) / float64(c)
			us := lo + frac*(hi-lo)
			return time.Duration(us * float64(time.Microsecond))
		}
		cum += float64(c)
	}
	lo, _ := bucketBounds(HistBuckets - 1)
	return time.Duration(lo * float64(time.Microsecond))
}

// Stats are a File's counters, summed over its Readers.
type Stats struct {
	// Backend is the backend the File uses.
	Backend Backend
	// Rows is the number of rows requested through ReadRows (duplicates
	// included).
	Rows int64
	// Requests is the number of device reads issued after coalescing
	// (re-issued remainders of short reads included). For mmap it is the
	// number of row or range copies, each of which may fault.
	Requests int64
	// BytesNeeded is the number of bytes callers asked for (duplicates
	// included).
	BytesNeeded int64
	// BytesRead is the number of bytes the device reads returned (aligned
	// blocks). For mmap it is the page-granular size of the copied spans, an
	// upper bound of the device reads (page-cache hits read nothing; the
	// exact figure is /proc/self/io read_bytes).
	BytesRead int64
	// DeviceBytes is what the block device delivered for this File's
	// reads. Direct I/O: BytesRead, exact. mmap: the read bytes of the
	// threads that copied out of the mapping, measured per thread around
	// the copies (metrics.ThreadMeter), exact. Buffered fallback
	// (AllowBuffered): BytesRead, an upper bound (page-cache hits read
	// nothing).
	DeviceBytes int64
	// DeviceRows is the rows whose bytes came from the device: every row
	// read with direct I/O (ReadRows, RowRequest), and for mmap the rows
	// whose copy made the thread read (checked per row for rows not
	// resident at the start of the call). Range reads count no rows.
	// It is counted when the read is asked for (duplicates included).
	DeviceRows int64
	// DeliveredRows is the storage layer's own count of the rows whose
	// bytes it delivered into a caller's destination from the device,
	// counted when the read completes without error (DESIGN §5 "rows
	// from the device"): each row of a ReadRows call or RowRequest, and
	// for range reads (ReadRange, Request) of a File with RowBytes the
	// whole rows the range holds, len(dst) / RowBytes (packed chunks,
	// partitions, cache lines); distinct per call: a span asked twice in
	// one ReadRows or Submit call is read once and counted once. For mmap, a row counts
	// when its copy made the thread read, a range when its copy did. It
	// is independent of DeviceRows and of what variants count, so the two
	// can be held against each other.
	DeliveredRows int64
	// Retries counts reads re-issued after a short read, EINTR or EAGAIN.
	Retries int64
	// Interrupts counts waits for completions that returned EINTR and were
	// retried.
	Interrupts int64
	// Latency is the histogram of device-request latencies: from handing
	// the read to the device (after it waited for a free buffer slot) to
	// reaping its completion; for pread this includes waiting for a free
	// worker. For mmap it is one row or range copy, faults included.
	Latency Histogram
}

// Amplification is BytesRead / BytesNeeded (0 when nothing was needed).
func (s Stats) Amplification() float64 {
	if s.BytesNeeded == 0 {
		return 0
	}
	return float64(s.BytesRead) / float64(s.BytesNeeded)
}

// String is a one-line summary.
func (s Stats) String() string {
	return fmt.Sprintf("backend=%s rows=%d requests=%d bytes_needed=%d bytes_read=%d amplification=%.3f retries=%d interrupts=%d p50_us=%.1f p99_us=%.1f",
		s.Backend, s.Rows, s.Requests, s.BytesNeeded, s.BytesRead, s.Amplification(), s.Retries, s.Interrupts,
		float64(s.Latency.Percentile(0.50))/1e3, float64(s.Latency.Percentile(0.99))/1e3)
}

// counters are the atomic totals a File keeps; Readers add local tallies.
// account and kind, when set, also receive the device reads.
type counters struct {
	rows, requests, bytesNeeded, bytesRead, retries, interrupts atomic.Int64
	deviceBytes, deviceRows, deliveredRows                      atomic.Int64
	hist                                                        [HistBuckets]atomic.Int64
	account                                                     *metrics.ReadAccount
	kind                                                        string
}

// tally is a Reader-local, non-atomic batch of counts.
type tally struct {
	rows, requests, bytesNeeded, bytesRead, retries, interrupts int64
	deviceBytes, deviceRows, deliveredRows                      int64
	hist                                                        [HistBuckets]int64
	reqClass                                                    [metrics.NumRequestClasses]int64 // device requests by size (metrics.RequestClass)
	faults                                                      metrics.MappedReads              // the mmap backend's page faults (for the account)
	dirty                                                       bool
}

// addFaults counts the device reads of a span of copies from the mapping:
// its bytes, and the page faults that read them.
func (t *tally) addFaults(r metrics.MappedReads) {
	t.deviceBytes += r.Bytes
	t.faults.Add(r)
}

// flush adds t to c (and its device reads to c's account) and zeroes t.
func (t *tally) flush(c *counters) {
	if !t.dirty {
		return
	}
	c.deviceBytes.Add(t.deviceBytes)
	c.deviceRows.Add(t.deviceRows)
	c.deliveredRows.Add(t.deliveredRows)
	c.account.Add(c.kind, t.deviceBytes, t.deviceRows)
	c.account.AddDelivered(c.kind, t.deliveredRows)
	c.account.AddRequests(&t.reqClass)
	c.account.AddFaults(t.faults)
	c.rows.Add(t.rows)
	c.requests.Add(t.requests)
	c.bytesNeeded.Add(t.bytesNeeded)
	c.bytesRead.Add(t.bytesRead)
	c.retries.Add(t.retries)
	c.interrupts.Add(t.interrupts)
	for i, v := range t.hist {
		if v != 0 {
			c.hist[i].Add(v)
		}
	}
	*t = tally{}
}

// latency records one latency in nanoseconds.
func (t *tally) latency(ns int64) {
	t.hist[bucketOf(ns)]++
	t.dirty = true
}

// snapshot reads c.
func (c *counters) snapshot(b Backend) Stats {
	s := Stats{
		Backend:     b,
		Rows:        c.rows.Load(),
		Requests:    c.requests.Load(),
		BytesNeeded: c.bytesNeeded.Load(),
		BytesRead:   c.bytesRead.Load(),
		Retries:     c.retries.Load(),
		Interrupts:  c.interrupts.Load(),
		DeviceBytes: c.deviceBytes.Load(),
		DeviceRows:  c.deviceRows.Load(),

		DeliveredRows: c.deliveredRows.Load(),
	}
	for i := range c.hist {
		s.Latency.Buckets[i] = c.hist[i].Load()
	}
	return s
}

// reset zeroes c.
func (c *counters) reset() {
	c.rows.Store(0)
	c.requests.Store(0)
	c.bytesNeeded.Store(0)
	c.bytesRead.Store(0)
	c.retries.Store(0)
	c.interrupts.Store(0)
	c.deviceBytes.Store(0)
	c.deviceRows.Store(0)
	c.deliveredRows.Store(0)
	for i := range c.hist {
		c.hist[i].Store(0)
	}
}

// PlanBytesPerRow bounds the Go heap a Reader holds per row of its
// largest ReadRows call: the planner's items, pieces and spans, the
// segments and their sort copies, kept in its pools for later calls
// (measured for 8-byte rows, one segment each: TestReadPlanBytesPerRow).
// A caller under a memory budget bounds its calls and counts this.
const PlanBytesPerRow = 384
