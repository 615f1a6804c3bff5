package metrics

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"outcore/internal/osutil"
)

// profile4K is a storage profile's 4 KiB random reads as `outcore bench
// device` measured them on a virtual disk (depth: IOPS).
func profile4K() *DeviceProfile {
	p := &DeviceProfile{SeqBytesPerS: 1.6e9}
	for _, pt := range []struct {
		d    int
		iops float64
	}{{1, 11479}, {4, 40831}, {8, 69410}, {16, 100734}, {64, 130944}} {
		p.Random = append(p.Random, IOPSPoint{Bytes: 4096, Depth: pt.d, IOPS: pt.iops})
	}
	return p
}

func TestDiskServiceAgainstItsProfile(t *testing.T) {
	// The same disk ten seconds apart: 65,540 reads of 4 KiB with 10 in
	// flight, 1.13 ms each (throttled), then 650,000 at 0.15 ms.
	a := osutil.BlockCounters{Reads: 1000, SectorsRead: 8000, ReadTicksMs: 500, IOTicksMs: 100}
	slow := diskServiceBetween(a, osutil.BlockCounters{Reads: 1000 + 65540, SectorsRead: 8000 + 65540*8, ReadTicksMs: 500 + 74060, IOTicksMs: 100 + 7406}, 10*time.Second)
	if slow == nil || slow.Reads != 65540 || slow.ReadBytes != 65540*4096 || math.Abs(slow.ReadMs-1.13) > 0.01 || math.Abs(slow.Depth-10) > 0.01 || slow.BusyS != 7.406 {
		t.Fatalf("slow window %+v", slow)
	}
	FillDiskService(slow, profile4K())
	// the profile at depth 10: 69,410 × 10/8 = 86,762 IOPS (Little's law
	// from depth 8), so 10 / 86,762 s = 0.1153 ms a read
	if slow.ProfileMs == nil || math.Abs(*slow.ProfileMs-0.11525) > 0.0001 || math.Abs(*slow.Slowdown-1.13/0.11525) > 0.01 {
		t.Fatalf("profile %v slowdown %v", slow.ProfileMs, slow.Slowdown)
	}
	r := DiskSlowReason(slow, 10)
	// busy 7.406 s, of which the profile would have taken 1/9.8: up to
	// 6.65 s of the ten lost
	if !strings.Contains(r, "9.8× slower than its storage profile") || !strings.Contains(r, "1.13 ms a read at 10.0 in flight, the profile's 0.12 ms; up to 6.7 s of the epoch lost") {
		t.Errorf("reason %q", r)
	}
	if got := EpochBusyReasons(EpochRecord{EpochS: 10, DiskService: slow, HostPressure: &HostPressure{StealPct: 6}}); len(got) != 2 || got[1] != r {
		t.Errorf("busy reasons %q", got)
	}
	// The same slow reads in an epoch 200 times as long cost it at most
	// 3.3 %: slow, but not a busy epoch.
	if got := DiskSlowReason(slow, 200); got != "" {
		t.Errorf("a slow disk that cannot have cost 5 %% of the epoch flagged: %q", got)
	}
	if got := DiskSlowReason(slow, 132); got == "" {
		t.Error("a slow disk that can have cost 5 % of the epoch not flagged")
	}
	// A cold epoch that barely reads: 2,000 reads 1.94× the profile's
	// time in 0.3 s of a 49 s epoch.
	few := &DiskService{Reads: 2000, ReadBytes: 2000 * 4096, ReadMs: 1.94 * 1000 / 11479, Depth: 1, BusyS: 0.3}
	FillDiskService(few, profile4K())
	if few.Slowdown == nil || math.Abs(*few.Slowdown-1.94) > 0.01 || math.Abs(DiskLostS(few)-0.3*(1-1/1.94)) > 0.001 {
		t.Fatalf("few reads %+v lost %v", few, DiskLostS(few))
	}
	few.ReadMs *= 2 // 3.88×: slow, and still at most 0.22 s of 49
	FillDiskService(few, profile4K())
	if r := DiskSlowReason(few, 49); r != "" || len(EpochBusyReasons(EpochRecord{EpochS: 49, DiskService: few})) != 0 {
		t.Errorf("an epoch that barely read flagged: %q", r)
	}
	if DiskLostS(nil) != 0 || DiskLostS(&DiskService{BusyS: 5}) != 0 {
		t.Error("lost time without a slowdown")
	}

	healthy := &DiskService{Reads: 650000, ReadBytes: 650000 * 4096, ReadMs: 0.15, Depth: 10}
	FillDiskService(healthy, profile4K())
	if healthy.Slowdown == nil || *healthy.Slowdown >= DiskSlowFactor || DiskSlowReason(healthy, 0) != "" {
		t.Errorf("a disk near its profile flagged: %+v", healthy)
	}
	if len(EpochBusyReasons(EpochRecord{DiskService: healthy, HostPressure: &HostPressure{}})) != 0 {
		t.Error("a quiet epoch is busy")
	}

	// 512 B reads take the nearest smaller measured class's... none is
	// smaller than 4 KiB here, so no profile time: not judged.
	small := &DiskService{Reads: 10, ReadBytes: 5120, ReadMs: 5, Depth: 1}
	FillDiskService(small, profile4K())
	if small.Slowdown != nil || DiskSlowReason(small, 0) != "" {
		t.Errorf("judged without a measured size: %+v", small)
	}
	// A short profile (deep queues only) does not judge shallow reads:
	// its best IOPS would make a read at depth 1 look 5× slow.
	short := &DeviceProfile{SeqBytesPerS: 1.9e9, Random: []IOPSPoint{{Bytes: 4096, Depth: 64, IOPS: 84188}}}
	shallow := &DiskService{Reads: 342236, ReadBytes: 342236 * 4228, ReadMs: 0.060, Depth: 0.49}
	FillDiskService(shallow, short)
	if shallow.Slowdown != nil {
		t.Errorf("a short profile judged reads at depth 0.49: %+v", shallow)
	}
	// Reads between two measured sizes take a time between theirs, in
	// proportion to the bytes: 750,000 B reads at depth 4 (a partition
	// buffer's) between the 256 KiB class (4,000 IOPS at depth 4: 1 ms)
	// and the 1 MiB class (1,200: 3.33 ms), not the 256 KiB class's 1 ms,
	// which made such reads look 3-4x slow; beyond the largest class in
	// proportion to the bytes.
	big := &DeviceProfile{SeqBytesPerS: 1.2e9, Random: []IOPSPoint{{Bytes: 256 << 10, Depth: 4, IOPS: 4000}, {Bytes: 1 << 20, Depth: 4, IOPS: 1200}}}
	frac := float64(750000-(256<<10)) / float64((1<<20)-(256<<10))
	for _, c := range []struct {
		size int64
		want float64
	}{
		{256 << 10, 1}, // at a class's size: its time
		{750000, 1 + (4000.0/1200-1)*frac},
		{1 << 20, 4000.0 / 1200},
		{2 << 20, 2 * 4000.0 / 1200}, // twice the largest class's bytes
	} {
		if ms, ok := big.ProfileReadMs(c.size, 4); !ok || math.Abs(ms-c.want) > 1e-9 {
			t.Errorf("a read of %d B at depth 4: %v ms %v, want %v", c.size, ms, ok, c.want)
		}
	}
	marius := &DiskService{Reads: 7274, ReadBytes: 7274 * 750000, ReadMs: 3.0, Depth: 4.6, BusyS: 6.4}
	FillDiskService(marius, big)
	if marius.Slowdown == nil || *marius.Slowdown > 1.2 || DiskSlowReason(marius, 45) != "" {
		t.Errorf("large reads near their sizes' profile judged slow: %+v", marius)
	}
	// A burst: the window's reads ran at depth 10 in its busy second; the
	// idle rest does not dilute the depth.
	burst := diskServiceBetween(osutil.BlockCounters{}, osutil.BlockCounters{Reads: 8676, SectorsRead: 8676 * 8, ReadTicksMs: 1000, IOTicksMs: 100}, 10*time.Second)
	if math.Abs(burst.Depth-10) > 0.01 {
		t.Errorf("burst depth %v, want 10", burst.Depth)
	}
	// Kernels that count no I/O ticks: the depth over the whole window.
	if d := diskServiceBetween(osutil.BlockCounters{}, osutil.BlockCounters{Reads: 10, ReadTicksMs: 500}, time.Second); d.Depth != 0.5 || d.BusyS != 1 {
		t.Errorf("no io ticks: %+v", d)
	}
	// A window shorter than the kernel's millisecond tick, whose reads
	// took no whole tick (a variant's empty epoch): a depth of 0, not
	// 0/0, so the epoch's record still marshals (make test failed once
	// on a NaN here).
	tiny := diskServiceBetween(osutil.BlockCounters{}, osutil.BlockCounters{Reads: 3, SectorsRead: 24}, 300*time.Microsecond)
	if tiny == nil || tiny.Depth != 0 || tiny.ReadMs != 0 || tiny.BusyS != 0.0003 {
		t.Errorf("sub-millisecond window %+v", tiny)
	}
	FillDiskService(tiny, profile4K())
	if _, err := json.Marshal(EpochRecord{DiskService: tiny}); err != nil {
		t.Errorf("a sub-millisecond window's record: %v", err)
	}
	// no profile, no reads, no device: nothing to judge
	FillDiskService(&DiskService{Reads: 1, ReadMs: 9}, nil)
	if diskServiceBetween(a, a, time.Second) != nil || (*DiskMeter)(nil).Stop() != nil {
		t.Error("a window without reads has a disk service")
	}
	if DiskSlowReason(nil, 0) != "" || len(EpochBusyReasons(EpochRecord{})) != 0 {
		t.Error("an unmeasured epoch is busy")
	}
}

// TestDiskMeterOnThisDisk: a meter of a temporary directory's disk sees
// a read that missed the page cache, or nothing where there is no block
// device.
func TestDiskMeterOnThisDisk(t *testing.T) {
	dir := t.TempDir()
	if _, err := osutil.BlockStatFile(dir); err != nil {
		t.Skipf("no block device: %v", err)
	}
	m := NewDiskMeter(dir)
	if m == nil || !m.ok {
		t.Fatal("meter of a block device measures nothing")
	}
	if NewDiskMeter("/proc").Stop() != nil {
		t.Error("a meter of /proc measured a disk")
	}
}
