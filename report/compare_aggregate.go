package report

import (
	"fmt"
	"strings"
)

// measured reports whether a run's epochs count as a measurement: finished
// runs and the finished epochs of a running one. OOM and failed runs do not.
func measured(r RunData) bool {
	return (r.Status == RunDone || r.Status == RunRunning) && (r.Digest != nil || r.BestVal != nil)
}

// legacyRun reports whether a run's epochs were all recorded before
// metrics version 2 (DESIGN §5): they have no device reads by file kind,
// rows from the SSD or busy/wait, and their read_amplification meant
// bytes_read / bytes_needed.
func legacyRun(r RunData) bool { return r.Digest != nil && r.Digest.Measured == 0 }

// legacyNote is said under a chart of metrics that runs recorded before
// metrics version 2 lack.
const legacyNote = " Runs recorded before metrics version 2 did not measure this and are left out (their points say so); the epochs CSV keeps their bytes_read / bytes_needed as bytes_read_per_byte_needed."

// onlyLegacy is the Empty text of a version-2 chart when every measured
// run is a legacy one.
func (c *Comparison) onlyLegacy() string {
	any := false
	for _, r := range c.runs {
		if r.Digest == nil {
			continue
		}
		if !legacyRun(r) {
			return ""
		}
		any = true
	}
	if !any {
		return ""
	}
	return "Every run of this experiment was recorded before metrics version 2 (DESIGN §5), which measure the SSD reads by file kind, the rows read from the SSD and workers' busy and wait time; this chart has nothing to show for them."
}

// measuredMean is a steady-epoch mean that only epochs of metrics version
// 2 have (Digest.Measured): no value for legacy runs.
func measuredMean(name string, scale float64) func(RunData) (float64, bool) {
	return func(r RunData) (float64, bool) {
		if r.Digest == nil || r.Digest.Measured == 0 {
			return 0, false
		}
		v, ok := r.Digest.Mean[name]
		return v * scale, ok
	}
}

// mean makes a run metric of a steady-epoch mean (a stage the run did not
// report counts 0 s); no epochs, no value.
func mean(name string, scale float64) func(RunData) (float64, bool) {
	return func(r RunData) (float64, bool) {
		if r.Digest == nil {
			return 0, false
		}
		return r.Digest.Mean[name] * scale, true
	}
}

// cell collects the runs of one grid point and one series.
type cell struct {
	x     float64
	label string
	runs  []RunData
}

// cellGroups collects runs into cells by series key and x, keeping the
// keys in the order first seen.
type cellGroups[K, X comparable] struct {
	keys  []K
	cells map[K]map[X]*cell
}

// add puts r in the cell of key k at x, made by mk when new.
func (g *cellGroups[K, X]) add(k K, x X, mk func() *cell, r RunData) {
	if g.cells == nil {
		g.cells = map[K]map[X]*cell{}
	}
	m := g.cells[k]
	if m == nil {
		m = map[X]*cell{}
		g.cells[k] = m
		g.keys = append(g.keys, k)
	}
	cl := m[x]
	if cl == nil {
		cl = mk()
		m[x] = cl
	}
	cl.runs = append(cl.runs, r)
}

// aggregate turns a cell's runs into a Point of f (one value per measured
// run). Runs that gave no value are counted by how they ended: out of
// memory, failed, cancelled by a person, interrupted by a server stop
// (DESIGN §6: a cancelled cell is not a failed one).
func aggregate(cl *cell, f func(RunData) (float64, bool)) Point {
	var xs []float64
	var oom, failed, cancelled, interrupted, pending, legacy int
	var ids []int64
	for _, r := range cl.runs {
		ids = append(ids, r.ID)
		switch {
		case r.Status == RunOOM:
			oom++
		case r.Status == RunFailed:
			failed++
		case r.Status == RunCancelled:
			cancelled++
		case r.Status == RunInterrupted:
			interrupted++
		case !measured(r):
			pending++
		default:
			if v, ok := f(r); ok {
				xs = append(xs, v)
			} else if legacyRun(r) {
				legacy++
			} else {
				pending++
			}
		}
	}
	p := point(cl.x, cl.label, xs)
	p.Runs = ids
	if len(cl.runs) > 0 {
		p.Cell = cellOf(cl.runs[0])
	}
	total := len(cl.runs)
	var parts []string
	for _, o := range []struct {
		n    int
		word string
	}{{oom, "OOM"}, {failed, "failed"}, {cancelled, "cancelled"}, {interrupted, "interrupted"}} {
		if o.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", o.n, o.word))
		}
	}
	stopped := strings.Join(parts, ", ")
	switch {
	case len(xs) > 0 && stopped != "":
		p.Status = StatusPartial
		p.Detail = fmt.Sprintf("%d of %d runs measured; %s", len(xs), total, stopped)
	case len(xs) > 0:
		p.Status = StatusOK
		if pending > 0 {
			p.Detail = fmt.Sprintf("%d of %d runs still to come", pending, total)
		}
	case oom > 0:
		p.Status = StatusOOM
		p.Detail = fmt.Sprintf("%d of %d runs: %s", oom+failed+cancelled+interrupted, total, stopped)
	case failed > 0:
		p.Status = StatusFailed
		p.Detail = fmt.Sprintf("%d of %d runs: %s", failed+cancelled+interrupted, total, stopped)
	case cancelled > 0:
		p.Status = StatusCancelled
		p.Detail = fmt.Sprintf("%d of %d runs: %s", cancelled+interrupted, total, stopped)
	case interrupted > 0:
		p.Status = StatusInterrupted
		p.Detail = fmt.Sprintf("%d of %d runs interrupted", interrupted, total)
	case legacy > 0 && pending == 0:
		p.Status = StatusUnmeasured
	default:
		p.Status = StatusPending
	}
	if legacy > 0 {
		note := fmt.Sprintf("%d of %d runs recorded before metrics version 2 did not measure this", legacy, total)
		if p.Detail != "" {
			note = p.Detail + "; " + note
		}
		p.Detail = note
	}
	return p
}

// hitRatio is the share of feature lookups served from memory without a
// device read in the epoch (DESIGN §5): hits summed over the memory tiers
// (GPU, CPU) divided by the lookups of the tier that sees every lookup (the
// largest count). Disk-resident tiers are not hits.
func hitRatio(r RunData) (float64, bool) { return r.Digest.HitRatio() }
