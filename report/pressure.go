package report

import (
	"fmt"
	"strings"

	"outcore/engine/metrics"
)

// Host pressure of a run (DESIGN §5 "Host pressure"): the run page and
// the comparisons flag runs measured on a busy host, from the epochs'
// host_pressure.

// RunPressure summarises a run's epochs' host pressure: the largest other
// processes' CPU, steal and PSI shares of any epoch, the mean load
// average and every proactive reclaim an epoch saw; busy lists the epochs
// that were on a busy host and why (metrics.EpochBusyReasons: a busy host
// or a disk slower than its profile). nil when no epoch recorded it.
func RunPressure(eps []metrics.EpochRecord) (p *metrics.HostPressure, busy []string) {
	n := 0
	var reclaims []string
	for _, e := range eps {
		h := e.HostPressure
		if h == nil {
			continue
		}
		if p == nil {
			p = &metrics.HostPressure{}
		}
		n++
		p.Load1 += h.Load1
		p.OthersCPUPct = max(p.OthersCPUPct, h.OthersCPUPct)
		p.StealPct = max(p.StealPct, h.StealPct)
		for _, f := range []struct{ dst, src **float64 }{{&p.PSICPUPct, &h.PSICPUPct}, {&p.PSIIOPct, &h.PSIIOPct}, {&p.PSIMemoryPct, &h.PSIMemoryPct}} {
			if *f.src == nil {
				continue
			}
			v := **f.src
			if *f.dst != nil {
				v = max(v, **f.dst)
			}
			*f.dst = &v
		}
		reclaims = append(reclaims, h.Reclaim)
		if r := metrics.EpochBusyReasons(e); len(r) > 0 {
			busy = append(busy, fmt.Sprintf("epoch %d: %s", e.Epoch, strings.Join(r, ", ")))
		}
	}
	if p != nil {
		p.Load1 /= float64(n)
		p.Reclaim = metrics.MergeReclaim(reclaims...)
	}
	return p, busy
}

// PressureText is a run's host pressure for people.
func PressureText(p *metrics.HostPressure) string {
	if p == nil {
		return "not recorded"
	}
	psi := func(v *float64) string {
		if v == nil {
			return "unavailable"
		}
		return fmt.Sprintf("%.0f %%", *v)
	}
	s := fmt.Sprintf("load %.2f; other processes' CPU up to %.0f %%, steal up to %.0f %%; PSI (some, this run included) cpu %s, io %s, memory %s",
		p.Load1, p.OthersCPUPct, p.StealPct, psi(p.PSICPUPct), psi(p.PSIIOPct), psi(p.PSIMemoryPct))
	if p.Reclaim != "" {
		s += "; proactive reclaim on: " + p.Reclaim
	}
	return s
}

// DiskText is how the dataset's disk served a run's epochs, for people
// (DESIGN §5 "Disk service"): the epoch slowest against the storage
// profile, or without a profile the one with the slowest reads; "" when
// no epoch measured it.
func DiskText(eps []metrics.EpochRecord) string {
	// a judged epoch is worse than an unjudged one; judged ones compare
	// by slowdown, unjudged ones by read time
	worse := func(a, b *metrics.DiskService) bool {
		if (a.Slowdown != nil) != (b.Slowdown != nil) {
			return a.Slowdown != nil
		}
		if a.Slowdown != nil {
			return *a.Slowdown > *b.Slowdown
		}
		return a.ReadMs > b.ReadMs
	}
	var worst *metrics.EpochRecord
	for i := range eps {
		if d := eps[i].DiskService; d != nil && (worst == nil || worse(d, worst.DiskService)) {
			worst = &eps[i]
		}
	}
	if worst == nil {
		return ""
	}
	d := worst.DiskService
	s := fmt.Sprintf("%.3f ms a read at %.1f in flight (busy %.0f s)", d.ReadMs, d.Depth, d.BusyS)
	if d.Slowdown != nil {
		s += fmt.Sprintf(", the storage profile's %.3f ms: %.2f×", *d.ProfileMs, *d.Slowdown)
	} else {
		s += ", not judged: the storage profile measured no read of that size at that depth or less"
	}
	if len(eps) > 1 {
		s += fmt.Sprintf(" (epoch %d, the slowest)", worst.Epoch)
	}
	return s
}
