package cli

import (
	"context"
	"io"
	"math"
	"strings"
	"testing"

	"outcore/engine/metrics"
)

// A run of page faults is held against the floor of its faults as
// requests of their size at its thread count, and against the
// bandwidth-only floor memory-mapped reads had before.
func TestMmapEfficiency(t *testing.T) {
	p := &metrics.DeviceProfile{SeqBytesPerS: 1e9, Random: []metrics.IOPSPoint{
		{Bytes: 4096, Depth: 1, IOPS: 10_000}, {Bytes: 4096, Depth: 8, IOPS: 40_000}, {Bytes: 4096, Depth: 64, IOPS: 100_000},
	}}
	for _, c := range []struct {
		name             string
		r                mmapRun
		threads          int
		model, bandwidth float64
	}{
		{"1 thread at the device's depth-1 IOPS", mmapRun{Faults: 10_000, Bytes: 10_000 * 4096, Seconds: 1}, 1, 1, 0.04096},
		{"8 threads at half their depth's IOPS", mmapRun{Faults: 40_000, Bytes: 40_000 * 4096, Seconds: 2}, 8, 0.5, 0.08192},
		{"16 threads: 2 × depth 8", mmapRun{Faults: 80_000, Bytes: 80_000 * 4096, Seconds: 1}, 16, 1, 0.32768},
	} {
		m, b, err := mmapEfficiency(p, c.r, c.threads)
		if err != nil || math.Abs(m-c.model) > 1e-9 || math.Abs(b-c.bandwidth) > 1e-9 {
			t.Errorf("%s: efficiency %v, bandwidth only %v (%v); want %v, %v", c.name, m, b, err, c.model, c.bandwidth)
		}
	}
	if _, _, err := mmapEfficiency(p, mmapRun{Bytes: 4096, Seconds: 1}, 1); err == nil || !strings.Contains(err.Error(), "nothing faulted") {
		t.Errorf("a run without faults: %v", err)
	}
}

// Without the file outcore bench device writes, bench mmap says to run it.
func TestBenchMmapNeedsTheDeviceFile(t *testing.T) {
	err := benchMmap(context.Background(), benchMmapConfig{dataDir: t.TempDir(), region: "1MiB", threads: "1", runs: 1, fio: "off"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "run outcore bench device first") {
		t.Fatalf("missing file: %v", err)
	}
	err = benchMmap(context.Background(), benchMmapConfig{region: "1MiB", threads: "0", runs: 1, fio: "off"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--threads") {
		t.Fatalf("threads 0: %v", err)
	}
}

// fio's several jobs: their reads add up, the slowest job's time is the
// run's; a job that read nothing is an error.
func TestParseFioJobs(t *testing.T) {
	out := []byte(`note: both iodepth >= 1 and synchronous I/O engine are selected
{"jobs": [{"error": 0, "read": {"total_ios": 100, "runtime": 500}}, {"error": 0, "read": {"total_ios": 300, "runtime": 1500}}]}`)
	ios, sec, err := parseFioJobs(out)
	if err != nil || ios != 400 || sec != 1.5 {
		t.Fatalf("parseFioJobs = %d, %v, %v; want 400 reads in 1.5 s", ios, sec, err)
	}
	if _, _, err := parseFioJobs([]byte(`{"jobs": [{"error": 0, "read": {"total_ios": 0, "runtime": 0}}]}`)); err == nil {
		t.Fatal("a job that read nothing was accepted")
	}
	if _, _, err := parseFioJobs([]byte(`{"jobs": []}`)); err == nil {
		t.Fatal("no job accepted")
	}
}
