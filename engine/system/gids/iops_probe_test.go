package gids

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"outcore/engine/storage"
	"outcore/engine/system/systest"
)

// probeFile writes a file of size bytes in a directory on disk (the
// package directory when the temp dir refuses O_DIRECT) and returns its
// path and the storage options to read it.
func probeFile(t *testing.T, size int) (string, storage.Options) {
	t.Helper()
	dir := systest.DiskDir(t)
	p := filepath.Join(dir, "features.bin")
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i * 7)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, storage.Options{AllowBuffered: true, Logger: func(string) {}}
}

func TestMeasureIOPS(t *testing.T) {
	path, opts := probeFile(t, 4<<20)
	for _, inFlight := range []int{1, 8, 64} {
		r, err := MeasureIOPS(context.Background(), path, opts, Probe{Line: 4096, InFlight: inFlight, Reads: 512, Seed: 1, MaxTime: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if r.Reads != 512 || r.IOPS <= 0 || r.BytesPerSec != r.IOPS*4096 || r.InFlight != inFlight {
			t.Fatalf("in flight %d: %+v", inFlight, r)
		}
	}
}

func TestMeasureIOPSStopsAtMaxTime(t *testing.T) {
	path, opts := probeFile(t, 1<<20)
	r, err := MeasureIOPS(context.Background(), path, opts, Probe{Line: 4096, InFlight: 4, Reads: 1 << 30, MaxTime: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Reads <= 0 || r.Elapsed > 2*time.Second {
		t.Fatalf("%+v", r)
	}
}

func TestProbeModel(t *testing.T) {
	path, opts := probeFile(t, 4<<20)
	m, r, err := ProbeModel(context.Background(), path, opts, 4096, 32, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.PeakIOPS != r.IOPS || m.Initial <= 0 || m.SSDs != 1 {
		t.Fatalf("model %+v from %+v", m, r)
	}
	if n := m.Required(0.9); !(n > 0) {
		t.Fatalf("required accesses %v", n)
	}
}

func TestProbeBadInput(t *testing.T) {
	path, opts := probeFile(t, 8192)
	for _, p := range []Probe{{Line: 0, InFlight: 1}, {Line: 4096, InFlight: 0}, {Line: 1 << 20, InFlight: 1}} {
		if _, err := MeasureIOPS(context.Background(), path, opts, p); err == nil {
			t.Errorf("probe %+v accepted", p)
		}
	}
	if _, err := MeasureIOPS(context.Background(), filepath.Join(t.TempDir(), "missing"), opts, Probe{Line: 4096, InFlight: 1}); err == nil {
		t.Error("missing file accepted")
	}
}
