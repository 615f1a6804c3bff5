package storage

import (
	"testing"
	"time"
)

// TestHistogram checks bucketing and percentiles.
func TestHistogram(t *testing.T) {
	var h Histogram
	if h.Percentile(0.5) != 0 {
		t.Fatal("empty histogram has a nonzero median")
	}
	for _, c := range []struct {
		d      time.Duration
		bucket int
	}{{0, 0}, {999 * time.Nanosecond, 0}, {time.Microsecond, 1}, {3 * time.Microsecond, 2}, {100 * time.Microsecond, 7}, {time.Hour, 32}, {1000 * time.Hour, HistBuckets - 1}} {
		if b := bucketOf(int64(c.d)); b != c.bucket {
			t.Errorf("bucketOf(%v) = %d, want %d", c.d, b, c.bucket)
		}
	}
	// 90 latencies of 100 µs (bucket [64,128)) and 10 of 5 ms (bucket
	// [4096, 8192) µs).
	for range 90 {
		h.Add(100 * time.Microsecond)
	}
	for range 10 {
		h.Add(5 * time.Millisecond)
	}
	if h.Count() != 100 {
		t.Fatalf("count %d", h.Count())
	}
	if p := h.Percentile(0.5); p < 64*time.Microsecond || p >= 128*time.Microsecond {
		t.Errorf("p50 = %v, want within [64, 128) µs", p)
	}
	if p := h.Percentile(0.99); p < 4096*time.Microsecond || p >= 8192*time.Microsecond {
		t.Errorf("p99 = %v, want within [4096, 8192) µs", p)
	}
	if a, b := h.Percentile(0.2), h.Percentile(0.8); a > b {
		t.Errorf("percentiles not monotone: p20 %v > p80 %v", a, b)
	}
}

// TestTallyFlush checks that reader tallies add up in the File counters.
func TestTallyFlush(t *testing.T) {
	var c counters
	for range 3 {
		tl := tally{rows: 2, requests: 1, bytesNeeded: 10, bytesRead: 512, dirty: true}
		tl.latency(int64(3 * time.Microsecond))
		tl.flush(&c)
		if tl.dirty || tl.rows != 0 {
			t.Fatal("flush did not reset the tally")
		}
	}
	s := c.snapshot(BackendPread)
	if s.Rows != 6 || s.Requests != 3 || s.BytesNeeded != 30 || s.BytesRead != 1536 || s.Latency.Buckets[2] != 3 {
		t.Fatalf("snapshot %+v", s)
	}
	if a := s.Amplification(); a != 1536.0/30 {
		t.Fatalf("amplification %v", a)
	}
	c.reset()
	if s := c.snapshot(BackendPread); s.Requests != 0 || s.Latency.Count() != 0 {
		t.Fatal("reset left counts")
	}
}
