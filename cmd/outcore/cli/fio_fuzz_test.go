package cli

import (
	"testing"
)

// FuzzFioOutput: fio's JSON output, as the bench commands read it
// (bench device's checks, bench mmap's jobs, bench sync's latency), never
// panics, and what a parser accepts is positive.
func FuzzFioOutput(f *testing.F) {
	f.Add([]byte(`{"jobs": [{"error": 0, "read": {"iops": 20000.5, "bw_bytes": 1e7, "total_ios": 100, "runtime": 500, "lat_ns": {"mean": 1600000.0}}}]}`))
	f.Add([]byte("note: both iodepth >= 1 and synchronous I/O engine are selected\n{\"jobs\": []}"))
	f.Add([]byte(`{"jobs": [{"error": 5, "read": {}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if iops, bw, err := parseFio(b); err == nil && !(iops > 0 && bw > 0) {
			t.Fatalf("parseFio accepted %v IOPS, %v bytes/s", iops, bw)
		}
		if ios, sec, err := parseFioJobs(b); err == nil && !(ios > 0 && sec > 0) {
			t.Fatalf("parseFioJobs accepted %d reads in %v s", ios, sec)
		}
		if iops, lat, err := parseFioLatency(b); err == nil && !(iops > 0 && lat > 0) {
			t.Fatalf("parseFioLatency accepted %v IOPS at %v µs", iops, lat)
		}
	})
}
