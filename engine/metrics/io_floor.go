package metrics

// The I/O floor of an epoch (DESIGN §11): its device reads replayed at
// the measured capability of the storage it read (DeviceProfile: one per
// host and file system, kept and measured by engine/devprofile); the run
// loop puts each epoch's floor and io_floor_s / epoch_s into the epoch
// record.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// RequestClassBytes are the lower bounds of the device-request size
// classes the read account counts: class i holds requests of
// [RequestClassBytes[i], RequestClassBytes[i+1]) bytes (the first also
// smaller ones, the last every larger one). They are the sizes the
// variants read (512 B rows, 4 KiB blocks and pages) and the merged
// requests up to engine/storage's largest (64 KiB by default) and beyond.
var RequestClassBytes = [NumRequestClasses]int64{512, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20}

// NumRequestClasses is len(RequestClassBytes).
const NumRequestClasses = 6

// RequestClass is the class of a device request of n bytes.
func RequestClass(n int64) int {
	c := 0
	for i, b := range RequestClassBytes {
		if n >= b {
			c = i
		}
	}
	return c
}

// DeviceProfileFile is the name of a data directory's one device profile
// before profiles were kept per host and file system (engine/devprofile
// still reads it where it measured this host's device).
const DeviceProfileFile = "device-profile.json"

// DeviceProfile is what a measurement found of the storage holding a
// data directory's datasets (engine/devprofile: the short mode before a
// host's first run, `outcore bench device` in full).
type DeviceProfile struct {
	Hostname string `json:"hostname"`
	Device   uint64 `json:"device"` // st_dev of the file system measured
	// Storage names the file system measured (osutil.FileSystemID: st_dev
	// and the file system's id); runs whose dataset is on it use the
	// profile (engine/devprofile). Empty in profiles written before
	// profiles were kept per file system.
	Storage string `json:"storage,omitempty"`
	FSType  string `json:"fs_type,omitempty"` // "ext4", ...
	// Mode is how it was measured: "short" (before a host's first run,
	// a few seconds) or "full" (outcore bench device); empty before modes
	// existed (full).
	Mode       string `json:"mode,omitempty"`
	DiskModel  string `json:"disk_model,omitempty"`
	File       string `json:"file"` // the file read (O_DIRECT through io_uring)
	FileBytes  int64  `json:"file_bytes"`
	MeasuredAt string `json:"measured_at"` // RFC 3339
	Version    string `json:"outcore_version"`
	// Loaded says how busy the host was: the 1-minute load average at
	// the start and the end, and the cores (a profile measured on a busy
	// machine is not a measurement of the disk).
	LoadAvg [2]float64 `json:"loadavg"`
	Cores   int        `json:"cores"`
	// Random are the random-read measurements: one per request size and
	// depth.
	Random []IOPSPoint `json:"random"`
	// SeqBytesPerS is the sequential read bandwidth (SeqRequestBytes
	// requests at SeqDepth in flight).
	SeqBytesPerS    float64 `json:"seq_bytes_per_s"`
	SeqRequestBytes int64   `json:"seq_request_bytes"`
	SeqDepth        int     `json:"seq_depth"`
	// Fio holds the same measurements taken by fio, when it was installed.
	Fio []FioCheck `json:"fio,omitempty"`
	// Rounds is how many times each measurement was taken (absent: once);
	// each point is the median of its rounds, and SeqRounds are the
	// sequential bandwidth's rounds, ascending.
	Rounds    int       `json:"rounds,omitempty"`
	SeqRounds []float64 `json:"seq_rounds,omitempty"`
}

// IOPSPoint is one random-read measurement.
type IOPSPoint struct {
	Bytes int64   `json:"bytes"`
	Depth int     `json:"depth"`
	IOPS  float64 `json:"iops"`
	P50us float64 `json:"p50_us"`
	P99us float64 `json:"p99_us"`
	// IOPSRounds are the rounds' IOPS, ascending, when the profile took
	// more than one (IOPS is their median, and the latencies are the
	// median round's).
	IOPSRounds []float64 `json:"iops_rounds,omitempty"`
}

// RoundsSpread is the largest over the smallest of a point's rounds (1
// without rounds): how far the disk's rate moved during the profile.
func (pt IOPSPoint) RoundsSpread() float64 {
	if len(pt.IOPSRounds) < 2 || !(pt.IOPSRounds[0] > 0) {
		return 1
	}
	return pt.IOPSRounds[len(pt.IOPSRounds)-1] / pt.IOPSRounds[0]
}

// FioCheck is one measurement repeated by fio: ours, fio's, and ours /
// fio's.
type FioCheck struct {
	What  string  `json:"what"` // "randread 4096 B depth 64", "read 1048576 B depth 8"
	Ours  float64 `json:"ours"` // IOPS (random) or bytes/s (sequential); the median of Pairs runs
	Fio   float64 `json:"fio"`
	Ratio float64 `json:"ratio"` // the median of the pairs' ours / fio
	// Pairs is how many times ours and fio ran back to back (ours, fio,
	// ours, fio, ...), and PairRatios each pair's ours / fio: adjacent runs
	// share the device's state of the moment (its bandwidth on this
	// virtual disk swings by a third from one run to the next).
	Pairs      int       `json:"pairs,omitempty"`
	PairRatios []float64 `json:"pair_ratios,omitempty"`
}

// BestIOPS is the most IOPS measured for requests of class c (at any
// depth): the device's capability for them. ok is false when no size of
// that class was measured.
func (p *DeviceProfile) BestIOPS(c int) (iops float64, ok bool) {
	for _, pt := range p.Random {
		if RequestClass(pt.Bytes) == c && pt.IOPS > iops {
			iops, ok = pt.IOPS, true
		}
	}
	return iops, ok
}

// IOPSAt bounds from above the IOPS of requests of class c with depth of
// them in flight: the best measured at any depth (BestIOPS), and for each
// depth d ≤ depth measured, its IOPS × depth / d (Little's law: IOPS =
// depth / latency, and a request's latency does not fall as the depth
// rises). depth ≤ 0 (unknown) gives BestIOPS. ok is false when no size of
// that class was measured.
func (p *DeviceProfile) IOPSAt(c, depth int) (iops float64, ok bool) {
	iops, ok = p.BestIOPS(c)
	if !ok || depth <= 0 {
		return iops, ok
	}
	for _, pt := range p.Random {
		if RequestClass(pt.Bytes) == c && pt.Depth > 0 && pt.Depth <= depth && pt.IOPS > 0 {
			iops = math.Min(iops, pt.IOPS*float64(depth)/float64(pt.Depth))
		}
	}
	return iops, true
}

// DeviceReads are an epoch's device reads as the floor counts them.
type DeviceReads struct {
	// Requests are engine/storage's device requests by size class.
	Requests [NumRequestClasses]int64
	// Bytes is every device byte: the requests' and the faults'.
	Bytes int64
	// Faults are the major page faults on memory maps and the bytes they
	// read (within Bytes): requests of Faults.Bytes / Faults.Faults each.
	Faults MappedReads
	// FaultThreads is how many threads could wait on faults at once (the
	// faults' depth); 0: unknown.
	FaultThreads int
}

// FaultBytes is what the kernel read per page fault (the page and its
// readahead), rounded up; 0 without faults.
func (r DeviceReads) FaultBytes() int64 {
	if r.Faults.Faults <= 0 || r.Faults.Bytes <= 0 {
		return 0
	}
	return (r.Faults.Bytes + r.Faults.Faults - 1) / r.Faults.Faults
}

// IOFloor is the time reads take at the profile's capability: the requests
// of each class at that class's best IOPS and the page faults as requests
// of their measured size (FaultBytes) at the IOPS of that size at their
// depth (IOPSAt: FaultThreads), one after another (the device serves one
// mix), against all the bytes at the sequential bandwidth; the larger of
// the two binds. A class without a measured size takes the IOPS of the
// nearest smaller class that has one, which bounds its time from below;
// requests below every measured size count in the bandwidth term only. ok
// is false when the profile has no bandwidth.
func (p *DeviceProfile) IOFloor(r DeviceReads) (floor float64, ok bool) {
	if p == nil || !(p.SeqBytesPerS > 0) {
		return 0, false
	}
	var iopsTime float64
	for c, n := range r.Requests {
		if n > 0 {
			iopsTime += p.requestsTime(n, c, 0)
		}
	}
	if size := r.FaultBytes(); size > 0 {
		iopsTime += p.requestsTime(r.Faults.Faults, RequestClass(size), r.FaultThreads)
	}
	return math.Max(iopsTime, float64(max(r.Bytes, 0))/p.SeqBytesPerS), true
}

// requestsTime is n requests of class c at depth (IOPSAt) at the
// profile's IOPS for them, or of the nearest smaller measured class; 0
// when none is measured.
func (p *DeviceProfile) requestsTime(n int64, c, depth int) float64 {
	for k := c; k >= 0; k-- {
		if iops, have := p.IOPSAt(k, depth); have {
			if !(iops > 0) {
				return 0
			}
			return float64(n) / iops
		}
	}
	return 0
}

// Check reports a profile that cannot be used (no measurement, numbers
// that are not finite and positive).
func (p *DeviceProfile) Check() error {
	if !(p.SeqBytesPerS > 0) || math.IsInf(p.SeqBytesPerS, 0) {
		return fmt.Errorf("device profile: sequential bandwidth %v, want > 0", p.SeqBytesPerS)
	}
	if len(p.Random) == 0 {
		return errors.New("device profile: no random-read measurement")
	}
	for _, pt := range p.Random {
		if pt.Bytes < 512 || pt.Bytes%512 != 0 || pt.Depth <= 0 || !(pt.IOPS > 0) || math.IsInf(pt.IOPS, 0) {
			return fmt.Errorf("device profile: measurement %+v, want a size of whole 512 B blocks, a positive depth and IOPS", pt)
		}
		for _, r := range pt.IOPSRounds {
			if !(r > 0) || math.IsInf(r, 0) {
				return fmt.Errorf("device profile: measurement of %d B at depth %d: a round of %v IOPS, want a positive number", pt.Bytes, pt.Depth, r)
			}
		}
	}
	return nil
}

// DeviceProfilePath is where a data directory kept its one device profile
// (DeviceProfileFile).
func DeviceProfilePath(dataDir string) string { return filepath.Join(dataDir, DeviceProfileFile) }

// ReadDeviceProfile reads the device profile in the file at path and
// checks it; the error wraps os.ErrNotExist when there is none.
func ReadDeviceProfile(path string) (*DeviceProfile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p DeviceProfile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// FillIOFloor sets rec's io_floor_s and io_efficiency from the device
// reads it keeps (io_requests, io_bytes, map_faults, map_fault_bytes,
// map_fault_threads) at p's capability, and its disk service's profile time
// (FillDiskService); it reports whether it set the floor
// (not without a profile, or for a record that kept no reads).
func FillIOFloor(rec *EpochRecord, p *DeviceProfile) bool {
	if p == nil || rec.IORequests == nil {
		return false
	}
	FillDiskService(rec.DiskService, p)
	floor, ok := p.IOFloor(rec.DeviceReads())
	if !ok {
		return false
	}
	rec.IOFloorS = &floor
	rec.IOEfficiency = nil
	if rec.EpochS > 0 {
		eff := floor / rec.EpochS
		rec.IOEfficiency = &eff
	}
	return true
}

// DeviceReads are the device reads rec keeps (zero faults in records
// written before faults were counted).
func (rec *EpochRecord) DeviceReads() DeviceReads {
	r := DeviceReads{Bytes: rec.IOBytes, FaultThreads: rec.MapFaultThreads,
		Faults: MappedReads{Bytes: rec.MapFaultBytes, Faults: rec.MapFaults}}
	copy(r.Requests[:], rec.IORequests)
	return r
}
