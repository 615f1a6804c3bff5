package metrics

import (
	"context"
	"runtime"
	"sync"
	"time"

	"outcore/internal/osutil"
)

// GPUSampler reads one GPU's utilisation and memory in use. The gpu package
// satisfies it through NVML; ok is false when no reading could be taken.
type GPUSampler interface {
	Sample() (utilPct float64, memBytes int64, ok bool)
}

// GPUPCIeSampler is a GPUSampler that also reads the PCIe throughput in
// MB/s, GPU to host (tx) and host to GPU (rx); the gpu package's NVML
// sampler is one (nvmlDeviceGetPcieThroughput).
type GPUPCIeSampler interface {
	SamplePCIe() (txMBps, rxMBps float64, ok bool)
}

// SampleInterval is how often a run writes a resource sample record
// (outcore train's default; RunOptions.SampleInterval). A run's records
// arrive at least this often while its process runs, which is what the
// runner's stall rule counts on (DESIGN §2 "A run's lifecycle").
const SampleInterval = time.Second

// ResourceSampler takes per-second resource samples of this process: CPU %
// (of one core), system iowait %, RSS, memory-cgroup usage (page cache
// included), disk read MB/s from /proc/self/io, the host's pressure over
// the second (pressure.go), and GPU readings (utilisation, memory, PCIe throughput) when a GPUSampler is set. It tracks the peaks for the run summary.
type ResourceSampler struct {
	// GPU, when non-nil, adds GPU utilisation and memory to each sample.
	GPU GPUSampler

	mu         sync.Mutex
	pid        int // the process sampled; 0: this one
	start      time.Time
	cgroupFile string
	prev       snapshot
	prevHost   pressureCounters
	peakRSS    int64
	peakCgroup int64
}

// snapshot holds the cumulative counters a sample is the difference of.
type snapshot struct {
	at        time.Time
	cpuS      float64
	sysTotal  int64
	sysIOWait int64
	readBytes int64
}

// NewResourceSampler returns a sampler whose clock (SampleRecord.T) starts at
// start. It finds the memory cgroup once; without one, cgroup_bytes is 0.
func NewResourceSampler(start time.Time) *ResourceSampler {
	r := &ResourceSampler{start: start}
	if f, err := osutil.SelfCgroupUsageFile(); err == nil {
		r.cgroupFile = f
	}
	r.prev = takeSnapshot(0)
	r.prevHost = readPressureCounters()
	return r
}

// NewProcessSampler is a sampler of another process, pid (an external
// system's program): its CPU, RSS and disk reads, the system's iowait and
// the host's pressure; no cgroup file (cgroup_bytes stays 0: whoever
// supervises the process knows its group).
func NewProcessSampler(pid int, start time.Time) *ResourceSampler {
	r := &ResourceSampler{pid: pid, start: start}
	r.prev = takeSnapshot(pid)
	r.prevHost = readPressureCounters()
	return r
}

// CgroupFile is the memory-cgroup usage file in use, "" when there is none.
func (r *ResourceSampler) CgroupFile() string { return r.cgroupFile }

// takeSnapshot reads the cumulative counters of process pid (0: this
// one); unreadable ones stay zero.
func takeSnapshot(pid int) snapshot {
	s := snapshot{at: time.Now()}
	s.cpuS, _ = osutil.ProcessCPUSeconds(pid)
	s.sysTotal, s.sysIOWait, _ = osutil.SystemCPUTimes()
	s.readBytes, _ = osutil.ProcessReadBytes(pid)
	return s
}

// Sample takes one sample covering the time since the previous one.
func (r *ResourceSampler) Sample() SampleRecord {
	cur := takeSnapshot(r.pid)
	host := readPressureCounters()
	// a look at the host's reclaim each sample, so that a window (an
	// epoch) sees a reclaim switched on and off again inside it
	_, reclaim := reclaimSeen.observe()
	load1, lerr := ReadLoad1()
	rss, _ := osutil.ProcessRSSBytes(r.pid)
	var cg int64
	if r.cgroupFile != "" {
		cg, _ = osutil.ReadInt64File(r.cgroupFile)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, prevHost := r.prev, r.prevHost
	r.prev, r.prevHost = cur, host
	rec := SampleRecord{Type: TypeSample, T: cur.at.Sub(r.start).Seconds(), RSSBytes: rss, CgroupBytes: cg}
	if lerr == nil || host.statOK {
		p := pressureBetween(prevHost, host, load1, runtime.NumCPU())
		p.Reclaim = reclaim
		rec.Host = &p
	}
	if dt := cur.at.Sub(prev.at).Seconds(); dt > 0 {
		rec.CPUPercent = 100 * (cur.cpuS - prev.cpuS) / dt
		rec.DiskReadMBps = float64(cur.readBytes-prev.readBytes) / 1e6 / dt
	}
	if d := cur.sysTotal - prev.sysTotal; d > 0 {
		rec.IOWaitPercent = 100 * float64(cur.sysIOWait-prev.sysIOWait) / float64(d)
	}
	if r.GPU != nil {
		if u, m, ok := r.GPU.Sample(); ok {
			rec.GPUUtil, rec.GPUMemBytes = &u, &m
		}
		if p, isPCIe := r.GPU.(GPUPCIeSampler); isPCIe {
			if tx, rx, ok := p.SamplePCIe(); ok {
				rec.GPUPCIeTxMBps, rec.GPUPCIeRxMBps = &tx, &rx
			}
		}
	}
	r.peakRSS = max(r.peakRSS, rss)
	r.peakCgroup = max(r.peakCgroup, cg)
	return rec
}

// Peaks returns the largest RSS and cgroup usage seen by Sample so far.
func (r *ResourceSampler) Peaks() (rss, cgroup int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peakRSS, r.peakCgroup
}

// Run samples every interval and passes each sample to emit until ctx ends.
func (r *ResourceSampler) Run(ctx context.Context, interval time.Duration, emit func(SampleRecord)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			emit(r.Sample())
		}
	}
}
