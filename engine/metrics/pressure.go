package metrics

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"outcore/internal/osutil"
)

// Host pressure (DESIGN §5, "Host pressure"): how busy the machine was
// while a run ran, from counters every Linux host has (/proc/stat,
// /proc/loadavg) and the pressure-stall information of kernels that have
// it (/proc/pressure/{cpu,io,memory}; absent or disabled elsewhere, and
// then recorded as unavailable, never as 0).

// HostPressure is how busy the host was over a window.
type HostPressure struct {
	// Load1 is the 1-minute load average at the window's end (the run's
	// own runnable threads included).
	Load1 float64 `json:"load1"`
	// OthersCPUPct is the CPU time of every other process on the host
	// (/proc/stat busy time less this process's), in percent of all the
	// host's cores: what competed with the run.
	OthersCPUPct float64 `json:"others_cpu_pct"`
	// StealPct is the CPU time the hypervisor gave other guests while this
	// one wanted it, in percent of all cores.
	StealPct float64 `json:"steal_pct"`
	// PSI "some" shares: the part of the window in which at least one task
	// on the host (this run's included) was stalled on CPU, I/O or memory,
	// in percent. Nil: the kernel has no /proc/pressure.
	PSICPUPct    *float64 `json:"psi_cpu_some_pct"`
	PSIIOPct     *float64 `json:"psi_io_some_pct"`
	PSIMemoryPct *float64 `json:"psi_memory_some_pct"`
	// Reclaim is the host's proactive reclaim (osutil.ProactiveReclaim:
	// DAMON pageout) seen on at any look from the window's start to its
	// end (a look a second while a run samples, DESIGN §5 "Proactive
	// reclaim"); "" when none was on.
	Reclaim string `json:"reclaim,omitempty"`
}

// Busy-host thresholds of BusyReasons.
const (
	BusyOthersCPUPct = 20.0 // other processes used a fifth of the cores
	BusyStealPct     = 5.0
)

// BusyReasons says why a run measured under p was on a busy host (nil:
// not busy). Only what the run cannot cause itself counts: other
// processes' CPU time, steal, and a proactive reclaim paging out memory
// beside the run's limit. Load average and PSI include the run's own
// threads and I/O, so they are recorded and shown, not judged.
func BusyReasons(p HostPressure) []string {
	var out []string
	if p.Reclaim != "" {
		out = append(out, "the host's proactive reclaim was on ("+p.Reclaim+")")
	}
	if p.OthersCPUPct >= BusyOthersCPUPct {
		out = append(out, fmt.Sprintf("other processes used %.0f %% of the CPUs", p.OthersCPUPct))
	}
	if p.StealPct >= BusyStealPct {
		out = append(out, fmt.Sprintf("the hypervisor stole %.0f %% of the CPU time", p.StealPct))
	}
	return out
}

// pressureCounters are the cumulative counters a HostPressure is the
// difference of.
type pressureCounters struct {
	at                time.Time
	ownCPU            float64 // this process's CPU seconds
	total, idle, stel int64   // /proc/stat jiffies of all CPUs: all, idle+iowait, steal
	statOK            bool
	psi               [3]int64 // cpu, io, memory "some" totals, µs
	psiOK             [3]bool
}

// psiFiles are the pressure files in pressureCounters.psi order.
var psiFiles = [3]string{"/proc/pressure/cpu", "/proc/pressure/io", "/proc/pressure/memory"}

func readPressureCounters() pressureCounters {
	c := pressureCounters{at: time.Now()}
	c.ownCPU, _ = osutil.CPUSeconds()
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		if st, err := ParseCPUStat(b); err == nil {
			c.total, c.idle, c.stel, c.statOK = st.Total, st.Idle, st.Steal, true
		}
	}
	for i, f := range psiFiles {
		if b, err := os.ReadFile(f); err == nil {
			if v, err := ParsePSISomeTotal(b); err == nil {
				c.psi[i], c.psiOK[i] = v, true
			}
		}
	}
	return c
}

// pressureBetween is the host pressure over [a, b]; load1 is the load
// average at b.
func pressureBetween(a, b pressureCounters, load1 float64, cores int) HostPressure {
	p := HostPressure{Load1: load1}
	dt := b.at.Sub(a.at).Seconds()
	if a.statOK && b.statOK {
		if t := b.total - a.total; t > 0 {
			busy := float64(t-(b.idle-a.idle)-(b.stel-a.stel)) / float64(t)
			own := 0.0
			if dt > 0 && cores > 0 {
				own = (b.ownCPU - a.ownCPU) / (dt * float64(cores))
			}
			p.OthersCPUPct = clampPct(100 * (busy - own))
			p.StealPct = clampPct(100 * float64(b.stel-a.stel) / float64(t))
		}
	}
	ptrs := [3]**float64{&p.PSICPUPct, &p.PSIIOPct, &p.PSIMemoryPct}
	for i := range psiFiles {
		if a.psiOK[i] && b.psiOK[i] && dt > 0 {
			v := clampPct(100 * float64(b.psi[i]-a.psi[i]) / (dt * 1e6))
			*ptrs[i] = &v
		}
	}
	return p
}

func clampPct(v float64) float64 { return min(max(v, 0), 100) }

// PressureMeter measures the host pressure over a window: NewPressureMeter
// at its start, Stop at its end.
type PressureMeter struct {
	start   pressureCounters
	reclaim uint64 // the reclaim observation at the start
}

// NewPressureMeter starts a window now.
func NewPressureMeter() PressureMeter {
	seq, _ := reclaimSeen.observe()
	return PressureMeter{start: readPressureCounters(), reclaim: seq}
}

// Stop ends the window and returns its host pressure, with every
// proactive reclaim seen on since its start.
func (m PressureMeter) Stop() HostPressure {
	end := readPressureCounters()
	load1, _ := ReadLoad1()
	p := pressureBetween(m.start, end, load1, runtime.NumCPU())
	reclaimSeen.observe()
	p.Reclaim = reclaimSeen.since(m.reclaim)
	return p
}

// ReadLoad1 is the host's 1-minute load average (/proc/loadavg).
func ReadLoad1() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	return ParseLoad1(b)
}

// CPUStat is the first ("cpu") line of /proc/stat in jiffies, as host
// pressure uses it.
type CPUStat struct {
	Total int64 // every field up to steal (guest time is inside user)
	Idle  int64 // idle + iowait
	Steal int64
}

// ParseCPUStat reads the "cpu" line of /proc/stat (osutil.ParseCPUStat,
// the one parser of it).
func ParseCPUStat(b []byte) (CPUStat, error) {
	st, err := osutil.ParseCPUStat(b)
	return CPUStat{Total: st.Total, Idle: st.Idle, Steal: st.Steal}, err
}

// ParsePSISomeTotal reads the "some" line's total (µs) of a
// /proc/pressure file: "some avg10=0.00 avg60=0.00 avg300=0.00 total=N".
func ParsePSISomeTotal(b []byte) (int64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					return 0, fmt.Errorf("pressure: total %q is not a count", trimForError([]byte(v)))
				}
				return n, nil
			}
		}
		return 0, fmt.Errorf("pressure: some line without total=")
	}
	return 0, fmt.Errorf("pressure: no some line")
}

// ParseLoad1 reads the 1-minute load average of /proc/loadavg.
func ParseLoad1(b []byte) (float64, error) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/loadavg: empty")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 || v != v || v > 1e9 {
		return 0, fmt.Errorf("/proc/loadavg: %q is not a load average", trimForError([]byte(f[0])))
	}
	return v, nil
}

func trimForError(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}
