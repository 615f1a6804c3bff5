package metrics

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestRequestClass(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want int
	}{{1, 0}, {512, 0}, {4095, 0}, {4096, 1}, {8192, 1}, {16384, 2}, {65536, 3}, {262144, 4}, {1 << 20, 5}, {64 << 20, 5}} {
		if got := RequestClass(c.n); got != c.want {
			t.Errorf("RequestClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// The floor is the binding one of the requests at their class's best IOPS
// and all bytes at the sequential bandwidth.
func TestIOFloor(t *testing.T) {
	p := &DeviceProfile{SeqBytesPerS: 1e9, Random: []IOPSPoint{
		{Bytes: 512, Depth: 1, IOPS: 10_000}, {Bytes: 512, Depth: 64, IOPS: 100_000},
		{Bytes: 4096, Depth: 64, IOPS: 80_000}, {Bytes: 65536, Depth: 64, IOPS: 10_000},
	}}
	var reqs [NumRequestClasses]int64
	for _, c := range []struct {
		name  string
		reqs  map[int]int64
		bytes int64
		want  float64
	}{
		{"nothing", nil, 0, 0},
		{"512 B rows: IOPS bind", map[int]int64{0: 100_000}, 100_000 * 512, 1},
		{"mixed classes add", map[int]int64{0: 50_000, 1: 80_000}, 0, 0.5 + 1},
		{"16 KiB class takes 4 KiB's IOPS (lower bound)", map[int]int64{2: 80_000}, 0, 1},
		{"bandwidth binds large requests", map[int]int64{3: 1000}, 4e9, 4},
		{"mmap bytes: bandwidth only", nil, 2e9, 2},
	} {
		reqs = [NumRequestClasses]int64{}
		for k, v := range c.reqs {
			reqs[k] = v
		}
		got, ok := p.IOFloor(reqs, c.bytes)
		if !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: floor %v (%v), want %v", c.name, got, ok, c.want)
		}
	}
	if _, ok := (*DeviceProfile)(nil).IOFloor(reqs, 1); ok {
		t.Error("a nil profile gives a floor")
	}
	small := &DeviceProfile{SeqBytesPerS: 1e9, Random: []IOPSPoint{{Bytes: 4096, Depth: 1, IOPS: 1000}}}
	reqs = [NumRequestClasses]int64{0: 1000}
	if got, _ := small.IOFloor(reqs, 0); got != 0 {
		t.Errorf("requests below every measured size: %v, want bandwidth only (0)", got)
	}
}

func TestReadDeviceProfile(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadDeviceProfile(DeviceProfilePath(dir)); !os.IsNotExist(err) {
		t.Fatalf("missing profile: %v", err)
	}
	os.WriteFile(filepath.Join(dir, DeviceProfileFile), []byte(`{"seq_bytes_per_s": 0}`), 0o644)
	if _, err := ReadDeviceProfile(DeviceProfilePath(dir)); err == nil {
		t.Fatal("profile without bandwidth loaded")
	}
	os.WriteFile(filepath.Join(dir, DeviceProfileFile), []byte(`{"seq_bytes_per_s": 5e8, "random": [{"bytes": 4096, "depth": 8, "iops": 5e4}]}`), 0o644)
	if p, err := ReadDeviceProfile(DeviceProfilePath(dir)); err != nil || p.SeqBytesPerS != 5e8 {
		t.Fatalf("%+v, %v", p, err)
	}
}

func TestReadAccountRequests(t *testing.T) {
	a := NewReadAccount(nil)
	a.AddRequests(&[NumRequestClasses]int64{3, 0, 1})
	t0 := a.Totals()
	a.AddRequests(&[NumRequestClasses]int64{1, 2})
	d := a.Totals().Sub(t0)
	if d.Requests != [NumRequestClasses]int64{1, 2} || t0.Requests[2] != 1 {
		t.Errorf("requests %v, then %v", t0.Requests, d.Requests)
	}
}

// FuzzDeviceProfile: a device profile file as read back (its JSON, then
// Check) never makes the floor panic, and a profile Check accepts gives a
// finite, non-negative floor for any reads.
func FuzzDeviceProfile(f *testing.F) {
	f.Add([]byte(`{"seq_bytes_per_s": 5e8, "random": [{"bytes": 4096, "depth": 8, "iops": 5e4}]}`), int64(100), int64(4096*100))
	f.Add([]byte(`{"seq_bytes_per_s": 1e300, "random": [{"bytes": 512, "depth": 1, "iops": 1e-300}]}`), int64(1<<62), int64(-1))
	f.Add([]byte(`{"seq_bytes_per_s": 1, "random": [{"bytes": 1, "depth": 1, "iops": 1}]}`), int64(1), int64(1))
	f.Fuzz(func(t *testing.T, b []byte, n, bytes int64) {
		var p DeviceProfile
		if json.Unmarshal(b, &p) != nil || p.Check() != nil {
			return
		}
		var req [NumRequestClasses]int64
		for i := range req {
			req[i] = max(n, 0) >> i
		}
		floor, ok := p.IOFloor(req, bytes)
		if !ok || floor < 0 || math.IsNaN(floor) {
			t.Fatalf("profile %s: floor %v %v", b, floor, ok)
		}
		rec := EpochRecord{EpochS: 1, IORequests: req[:], IOBytes: bytes}
		if !FillIOFloor(&rec, &p) || *rec.IOFloorS != floor || *rec.IOEfficiency != floor {
			t.Fatalf("FillIOFloor disagrees with IOFloor: %v", rec.IOFloorS)
		}
	})
}
