package metrics

import (
	"fmt"
	"math"
	"time"

	"outcore/internal/osutil"
)

// Disk service (DESIGN §5, "Disk service"): how the block device holding
// the dataset served reads while an epoch ran, from its sysfs counters,
// set beside what its storage profile says it serves. A virtual disk can
// slow down under a run (a provider's burst allowance spent, a neighbour's
// load): the epoch's io_efficiency then falls for a reason that is the
// disk's, not the system's, and the epoch is flagged like one measured on
// a busy host.

// DiskService is how the dataset's disk served reads during an epoch. The
// counters are the whole device's: other processes' reads count too.
type DiskService struct {
	Reads     int64 `json:"reads"`
	ReadBytes int64 `json:"read_bytes"`
	// ReadMs is the mean time a read spent in the device and its queue.
	ReadMs float64 `json:"read_ms"`
	// Depth is the mean number of reads in flight while the device was
	// busy: the reads' summed time over the time it had any request in
	// flight (the whole window on kernels that do not count it), so that
	// bursts of reads count at the depth they ran at.
	Depth float64 `json:"depth"`
	// BusyS is the time the device had any request in flight.
	BusyS float64 `json:"busy_s"`
	// ProfileMs is the time the storage profile gives a read of the mean
	// size at that depth (ProfileReadMs); nil without a profile.
	ProfileMs *float64 `json:"profile_ms,omitempty"`
	// Slowdown is ReadMs / ProfileMs; nil without a profile.
	Slowdown *float64 `json:"slowdown,omitempty"`
}

// DiskSlowFactor is the slowdown from which an epoch's disk counts as
// slower than its profile (DiskSlowReason): twice the profile's time per
// read at the same size and depth, a margin over the swings of a quiet
// virtual disk between two profiles (a third, engine/metrics FioCheck).
const DiskSlowFactor = 2.0

// DiskSlowShare is the least share of an epoch that a slow disk must have
// been able to cost it (DiskLostS) for the epoch to be flagged: a few
// slow reads in an epoch that barely reads (a cold epoch's first index
// pages) are slow but cannot have moved its time, the way steal of 5 %
// (BusyStealPct) can.
const DiskSlowShare = 0.05

// DiskLostS is the most time the disk's slowdown can have cost: the time
// it was busy less the time the profile would have taken for the same
// reads, busy × (1 − 1/slowdown); 0 without a slowdown or below 1×.
func DiskLostS(d *DiskService) float64 {
	if d == nil || d.Slowdown == nil || *d.Slowdown <= 1 {
		return 0
	}
	return d.BusyS * (1 - 1 / *d.Slowdown)
}

// DiskMeter measures a DiskService over a window.
type DiskMeter struct {
	file  string
	start osutil.BlockCounters
	at    time.Time
	ok    bool
}

// NewDiskMeter starts measuring the block device holding dir; a meter of
// a directory without one (tmpfs, overlay) measures nothing.
func NewDiskMeter(dir string) *DiskMeter {
	m := &DiskMeter{at: time.Now()}
	if f, err := osutil.BlockStatFile(dir); err == nil {
		if c, err := osutil.ReadBlockCounters(f); err == nil {
			m.file, m.start, m.ok = f, c, true
		}
	}
	return m
}

// Stop returns the disk service since NewDiskMeter; nil when the device
// could not be read or served no read.
func (m *DiskMeter) Stop() *DiskService {
	if m == nil || !m.ok {
		return nil
	}
	c, err := osutil.ReadBlockCounters(m.file)
	if err != nil {
		return nil
	}
	return diskServiceBetween(m.start, c, time.Since(m.at))
}

func diskServiceBetween(a, b osutil.BlockCounters, window time.Duration) *DiskService {
	reads := b.Reads - a.Reads
	if reads <= 0 || window <= 0 {
		return nil
	}
	ticks := float64(b.ReadTicksMs - a.ReadTicksMs)
	busy := float64(b.IOTicksMs - a.IOTicksMs)
	if busy <= 0 {
		busy = float64(window) / float64(time.Millisecond)
	}
	d := &DiskService{Reads: reads, ReadBytes: (b.SectorsRead - a.SectorsRead) * 512,
		ReadMs: ticks / float64(reads), BusyS: busy / 1000}
	// A window too short for the kernel's millisecond ticks (reads that
	// took no whole tick) has no depth to state: 0, never 0/0, which no
	// record can hold.
	if ticks > 0 && busy > 0 {
		d.Depth = ticks / busy
	}
	return d
}

// ProfileReadMs is the time p gives one read of size bytes with depth of
// them in flight, at depth 1 at least. A measured size class's time is
// depth / IOPSAt (Little's law; a floor, as a read's latency does not
// fall as the depth rises). The time of size is that of the nearest
// measured class at or below it, grown toward the next measured larger
// class's in proportion to the bytes between the two classes' sizes (a
// 750 KB read is not judged as a 256 KiB one), and beyond the largest
// measured class in proportion to the bytes (the device's bandwidth). ok
// is false when p measured no class at or below size, or that class at
// no depth at or below depth (a short profile measures deep queues only,
// whose best IOPS would make any shallow read look slow).
func (p *DeviceProfile) ProfileReadMs(size int64, depth float64) (ms float64, ok bool) {
	d := max(1, int(math.Round(depth)))
	// measuredAt: p measured class c at a depth at or below d (its IOPS
	// there, IOPSAt, is then positive)
	measuredAt := func(c int) bool {
		for _, pt := range p.Random {
			if RequestClass(pt.Bytes) == c && pt.Depth > 0 && pt.Depth <= d && pt.IOPS > 0 {
				return true
			}
		}
		return false
	}
	classMs := func(c int) float64 {
		iops, _ := p.IOPSAt(c, d)
		return 1000 * float64(d) / iops
	}
	lo := RequestClass(size)
	for ; lo >= 0; lo-- {
		if _, have := p.BestIOPS(lo); have {
			break
		}
	}
	if lo < 0 || !measuredAt(lo) {
		return 0, false
	}
	tlo, at := classMs(lo), RequestClassBytes[lo]
	if size <= at {
		return tlo, true
	}
	for c := lo + 1; c < NumRequestClasses; c++ {
		if measuredAt(c) {
			frac := float64(size-at) / float64(RequestClassBytes[c]-at)
			return tlo + max(0, classMs(c)-tlo)*frac, true
		}
	}
	return tlo * float64(size) / float64(at), true
}

// FillDiskService sets d's profile time and slowdown from p (nothing
// without one).
func FillDiskService(d *DiskService, p *DeviceProfile) {
	if d == nil || p == nil || d.Reads <= 0 {
		return
	}
	ms, ok := p.ProfileReadMs(d.ReadBytes/d.Reads, d.Depth)
	if !ok {
		return
	}
	slow := d.ReadMs / ms
	d.ProfileMs, d.Slowdown = &ms, &slow
}

// DiskSlowReason says why an epoch of epochS seconds counts as measured
// on a disk slower than its profile: DiskSlowFactor slower or more, and
// able to have cost at least DiskSlowShare of the epoch (DiskLostS; not
// asked when epochS is unknown, 0). "" when it does not count, or was not
// measured against a profile.
func DiskSlowReason(d *DiskService, epochS float64) string {
	if d == nil || d.Slowdown == nil || *d.Slowdown < DiskSlowFactor {
		return ""
	}
	lost := DiskLostS(d)
	if epochS > 0 && lost < DiskSlowShare*epochS {
		return ""
	}
	return fmt.Sprintf("the disk served reads %.1f× slower than its storage profile (%.2f ms a read at %.1f in flight, the profile's %.2f ms; up to %.1f s of the epoch lost)",
		*d.Slowdown, d.ReadMs, d.Depth, *d.ProfileMs, lost)
}

// EpochBusyReasons are the reasons an epoch was measured on a busy host
// (BusyReasons of its host pressure) or a disk slower than its profile.
func EpochBusyReasons(e EpochRecord) []string {
	var out []string
	if e.HostPressure != nil {
		out = BusyReasons(*e.HostPressure)
	}
	if r := DiskSlowReason(e.DiskService, e.EpochS); r != "" {
		out = append(out, r)
	}
	return out
}
