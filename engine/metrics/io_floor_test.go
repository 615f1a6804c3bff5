package metrics

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
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
		got, ok := p.IOFloor(DeviceReads{Requests: reqs, Bytes: c.bytes})
		if !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: floor %v (%v), want %v", c.name, got, ok, c.want)
		}
	}
	if _, ok := (*DeviceProfile)(nil).IOFloor(DeviceReads{Requests: reqs, Bytes: 1}); ok {
		t.Error("a nil profile gives a floor")
	}
	small := &DeviceProfile{SeqBytesPerS: 1e9, Random: []IOPSPoint{{Bytes: 4096, Depth: 1, IOPS: 1000}}}
	reqs = [NumRequestClasses]int64{0: 1000}
	if got, _ := small.IOFloor(DeviceReads{Requests: reqs}); got != 0 {
		t.Errorf("requests below every measured size: %v, want bandwidth only (0)", got)
	}
}

// IOPSAt bounds a depth's IOPS by the best measured and, from each
// measured depth at or below it, by Little's law (IOPS × depth / d).
func TestIOPSAt(t *testing.T) {
	p := &DeviceProfile{SeqBytesPerS: 1e9, Random: []IOPSPoint{
		{Bytes: 4096, Depth: 1, IOPS: 5_000}, {Bytes: 4096, Depth: 16, IOPS: 50_000}, {Bytes: 4096, Depth: 64, IOPS: 80_000},
		{Bytes: 65536, Depth: 64, IOPS: 10_000},
	}}
	for _, c := range []struct {
		name   string
		class  int
		depth  int
		want   float64
		wantOK bool
	}{
		{"unknown depth: the best", 1, 0, 80_000, true},
		{"depth 1: as measured", 1, 1, 5_000, true},
		{"depth 8: 8 × depth 1", 1, 8, 40_000, true},
		{"depth 16: measured, below 16 × depth 1", 1, 16, 50_000, true},
		{"depth 32: 2 × depth 16 (below 32 × depth 1)", 1, 32, 80_000, true},
		{"depth 20: 20/16 × depth 16", 1, 20, 62_500, true},
		{"depth 200: the best", 1, 200, 80_000, true},
		{"64 KiB depth 8: only depth 64 measured, the best", 3, 8, 10_000, true},
		{"512 B: not measured", 0, 8, 0, false},
	} {
		got, ok := p.IOPSAt(c.class, c.depth)
		if ok != c.wantOK || math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s: IOPSAt(%d, %d) = %v, %v; want %v, %v", c.name, c.class, c.depth, got, ok, c.want, c.wantOK)
		}
	}
}

// Page faults are requests of their measured size at the IOPS of their
// depth, added to engine/storage's requests; the bandwidth term still
// bounds them from the other side.
func TestIOFloorFaults(t *testing.T) {
	p := &DeviceProfile{SeqBytesPerS: 1e9, Random: []IOPSPoint{
		{Bytes: 512, Depth: 64, IOPS: 100_000},
		{Bytes: 4096, Depth: 1, IOPS: 5_000}, {Bytes: 4096, Depth: 64, IOPS: 80_000},
		{Bytes: 65536, Depth: 64, IOPS: 10_000},
	}}
	faults := func(n, bytes int64, threads int) DeviceReads {
		return DeviceReads{Bytes: bytes, Faults: MappedReads{Faults: n, Bytes: bytes}, FaultThreads: threads}
	}
	for _, c := range []struct {
		name string
		r    DeviceReads
		want float64
	}{
		{"no faults", DeviceReads{}, 0},
		{"4 KiB faults, depth unknown: best IOPS", faults(80_000, 80_000*4096, 0), 1},
		{"4 KiB faults, 8 threads: 8 × depth 1", faults(80_000, 80_000*4096, 8), 2},
		{"1 thread: depth 1", faults(5_000, 5_000*4096, 1), 1},
		{"128 KiB per fault (readahead): the 64 KiB class", faults(10_000, 10_000*131072, 64), 1.31072},
		{"a fault that read part of a page rounds up, class of 4 KiB", faults(3, 3*4096-1, 1), 3.0 / 5_000},
		{"faults add to engine/storage's requests",
			DeviceReads{Requests: [NumRequestClasses]int64{0: 100_000}, Bytes: 100_000*512 + 40_000*4096,
				Faults: MappedReads{Faults: 40_000, Bytes: 40_000 * 4096}, FaultThreads: 8}, 1 + 1},
		{"bytes without faults: bandwidth only", DeviceReads{Bytes: 2e9, Faults: MappedReads{Bytes: 2e9}}, 2},
		{"faults without bytes: nothing", DeviceReads{Faults: MappedReads{Faults: 10}}, 0},
	} {
		got, ok := p.IOFloor(c.r)
		if !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: floor %v (%v), want %v", c.name, got, ok, c.want)
		}
	}
	// The record carries the faults to the floor.
	rec := EpochRecord{EpochS: 4, IORequests: make([]int64, NumRequestClasses), IOBytes: 80_000 * 4096,
		MapFaults: 80_000, MapFaultBytes: 80_000 * 4096, MapFaultThreads: 8}
	if !FillIOFloor(&rec, p) || *rec.IOFloorS != 2 || *rec.IOEfficiency != 0.5 {
		t.Errorf("record with faults: floor %v, efficiency %v; want 2, 0.5", *rec.IOFloorS, *rec.IOEfficiency)
	}
	rec.MapFaults, rec.MapFaultBytes = 0, 0 // a record before faults were counted: bandwidth only
	if !FillIOFloor(&rec, p) || math.Abs(*rec.IOFloorS-80_000*4096/1e9) > 1e-12 {
		t.Errorf("record without faults: floor %v, want the bandwidth term", *rec.IOFloorS)
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
	os.WriteFile(filepath.Join(dir, DeviceProfileFile), []byte(`{"seq_bytes_per_s": 5e8, "random": [{"bytes": 4096, "depth": 8, "iops": 5e4, "iops_rounds": [4e4, 5e4, 0]}]}`), 0o644)
	if _, err := ReadDeviceProfile(DeviceProfilePath(dir)); err == nil || !strings.Contains(err.Error(), "a round of 0 IOPS") {
		t.Fatalf("a round of 0 IOPS: %v", err)
	}
	os.WriteFile(filepath.Join(dir, DeviceProfileFile), []byte(`{"seq_bytes_per_s": 5e8, "random": [{"bytes": 4096, "depth": 8, "iops": 5e4}]}`), 0o644)
	if p, err := ReadDeviceProfile(DeviceProfilePath(dir)); err != nil || p.SeqBytesPerS != 5e8 {
		t.Fatalf("%+v, %v", p, err)
	}
}

func TestReadAccountFaults(t *testing.T) {
	a := NewReadAccount(nil)
	a.AddFaults(MappedReads{Bytes: 8192, Faults: 2})
	a.SetFaultThreads(8)
	t0 := a.Totals()
	a.AddFaults(MappedReads{Bytes: 4096, Faults: 1})
	a.SetFaultThreads(4) // the largest stays
	d := a.Totals().Sub(t0)
	if d.Faults != (MappedReads{Bytes: 4096, Faults: 1}) || d.FaultThreads != 8 || t0.Faults.Faults != 2 {
		t.Errorf("faults %+v, then %+v (threads %d)", t0.Faults, d.Faults, d.FaultThreads)
	}
	if d.Bytes() != 0 {
		t.Errorf("AddFaults added %d bytes to the totals (Add counts them)", d.Bytes())
	}
	var nilAccount *ReadAccount
	nilAccount.AddFaults(MappedReads{Faults: 1})
	nilAccount.SetFaultThreads(1)
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
		floor, ok := p.IOFloor(DeviceReads{Requests: req, Bytes: bytes, Faults: MappedReads{Faults: n, Bytes: bytes}, FaultThreads: int(n % 97)})
		if !ok || floor < 0 || math.IsNaN(floor) {
			t.Fatalf("profile %s: floor %v %v", b, floor, ok)
		}
		rec := EpochRecord{EpochS: 1, IORequests: req[:], IOBytes: bytes, MapFaults: n, MapFaultBytes: bytes, MapFaultThreads: int(n % 97)}
		if !FillIOFloor(&rec, &p) || *rec.IOFloorS != floor || *rec.IOEfficiency != floor {
			t.Fatalf("FillIOFloor disagrees with IOFloor: %v", rec.IOFloorS)
		}
	})
}
