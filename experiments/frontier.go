package experiments

// The memory frontier (DESIGN §12): per variant, the least memory limit
// at which it finishes an epoch, found by bisection between its computed
// floor (VariantMinMemory) and 100 % of the feature bytes, each probe a
// real run under its cgroup. A grid with a "frontier" key is such an
// experiment: it starts with one run per cell at 100 %, and each finished
// probe adds the next (frontier_run.go) until NextFrontierProbe says done.
// Its epoch-vs-mem chart is the figure: epoch time against limit down to
// the frontier, the failed probes marked.

import (
	"fmt"
	"math"
	"strconv"

	"outcore/experiments/grid"
	"outcore/internal/units"
)

// FrontierProbe is one finished probe of a cell: its limit and whether
// the run finished an epoch there.
type FrontierProbe struct {
	Limit  int64
	Epoch  bool    // an epoch finished under the limit
	EpochS float64 // its mean epoch time (0 when none)
	WallS  float64 // the run's wall time, start to end (0 when unknown)
}

// FrontierStep is what NextFrontierProbe decides.
type FrontierStep struct {
	Next     int64  // the limit to probe next; 0 when done
	Done     bool   // no further probe
	Frontier int64  // the least limit that finished an epoch (0: none did)
	Note     string // why it stopped, or what is odd (a failure above the frontier)
}

// NextFrontierProbe is the bisection policy (pure): floor is the variant's
// computed floor, ceil the top probed so far (first 100 % of the feature
// bytes), probes the finished runs of the cell. It probes ceil first;
// while nothing finished, twice the top (at most grid.FrontierRaises
// times); then the floor, then bisects between the largest limit that
// failed below the least that finished, in whole MiB, until the gap is
// within the tolerance (at least 1 MiB), the probes run out or their wall
// time reaches MaxCellSeconds. A failure above the least success (the
// cell is not monotone in its limit: noise, or a run that failed for
// another reason) is named in Note and otherwise ignored.
func NextFrontierProbe(floor, ceil int64, probes []FrontierProbe, spec grid.FrontierSpec) FrontierStep {
	spec = spec.WithDefaults()
	floor = max(floor, grid.FrontierMinStepBytes)
	probed := func(l int64) bool {
		for _, p := range probes {
			if p.Limit == l {
				return true
			}
		}
		return false
	}
	hi := int64(0) // least limit that finished an epoch
	for _, p := range probes {
		if p.Epoch && (hi == 0 || p.Limit < hi) {
			hi = p.Limit
		}
	}
	if !probed(ceil) {
		return FrontierStep{Next: ceil}
	}
	wall := 0.0
	for _, p := range probes {
		wall += p.WallS
	}
	overBudget := spec.MaxCellSeconds > 0 && wall >= spec.MaxCellSeconds
	budgetNote := fmt.Sprintf("stopped by the time budget: %d probes took %.0f s of %.0f s", len(probes), wall, spec.MaxCellSeconds)
	if hi == 0 {
		if len(probes) <= grid.FrontierRaises && len(probes) < spec.MaxProbes && !overBudget {
			return FrontierStep{Next: 2 * ceil, Note: fmt.Sprintf("no epoch finished at %s: raising the top", units.Bytes(ceil))}
		}
		why := fmt.Sprintf("no epoch finished even at %s (the top, after %d probes)", units.Bytes(ceil), len(probes))
		if overBudget {
			why = join(why, budgetNote)
		}
		return FrontierStep{Done: true, Note: why}
	}
	var note string
	lo := int64(0) // largest failure below hi
	for _, p := range probes {
		switch {
		case !p.Epoch && p.Limit < hi:
			lo = max(lo, p.Limit)
		case !p.Epoch && p.Limit > hi:
			note = fmt.Sprintf("failed at %s, above the frontier (not monotone in the limit)", units.Bytes(p.Limit))
		}
	}
	// The first probe is its limit rounded up to whole MiB, so a top below
	// the floor starts at the floor plus less than 1 MiB: that is the
	// floor's probe, not one to repeat below it.
	atFloor := hi >= floor && hi-floor < grid.FrontierMinStepBytes
	if atFloor || floor > hi {
		why := "the computed floor is at or above the least limit that finished"
		if atFloor {
			why = "finished at its computed floor"
		}
		return FrontierStep{Done: true, Frontier: hi, Note: join(note, why)}
	}
	gap := max(int64(math.Ceil(spec.Tolerance*float64(hi))), grid.FrontierMinStepBytes)
	floorKnown := probed(floor) || lo >= floor // a failure at or above the floor says what the floor's probe would
	if floorKnown && hi-lo <= gap {
		return FrontierStep{Done: true, Frontier: hi, Note: note}
	}
	if overBudget {
		between := "no failure below it probed"
		if lo > 0 {
			between = fmt.Sprintf("the largest failure below it %s", units.Bytes(lo))
		}
		return FrontierStep{Done: true, Frontier: hi, Note: join(note, budgetNote+"; "+between)}
	}
	if !floorKnown {
		return FrontierStep{Next: floor, Frontier: hi, Note: note}
	}
	if len(probes) >= spec.MaxProbes {
		return FrontierStep{Done: true, Frontier: hi, Note: join(note, fmt.Sprintf("stopped after %d probes, %s apart", len(probes), units.Bytes(hi-lo)))}
	}
	mid := lo + (hi-lo)/2
	mid = mid / grid.FrontierMinStepBytes * grid.FrontierMinStepBytes
	if mid <= lo {
		mid += grid.FrontierMinStepBytes
	}
	if mid >= hi || probed(mid) {
		return FrontierStep{Done: true, Frontier: hi, Note: note}
	}
	return FrontierStep{Next: mid, Frontier: hi, Note: note}
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// firstProbes sets every spec of a frontier grid (planned without limits)
// to its first probe: MaxLimit (default 100 % of its dataset's feature
// bytes), raised to the variant's floor, in whole MiB.
func (m *Manager) firstProbes(g *grid.Grid, specs []grid.RunSpec, datasets map[string]grid.DatasetInfo) grid.ProblemList {
	var ps grid.ProblemList
	top := "100%"
	if g.Frontier.MaxLimit != "" {
		top = g.Frontier.MaxLimit
	}
	for i := range specs {
		sp := &specs[i]
		meta := datasets[sp.Dataset].Meta
		limit, err := grid.ParseLimit(top, meta.FeatureBytes())
		if err != nil || limit == 0 {
			ps.Add("frontier", "frontier: max_limit %q: %v", top, err)
			return ps
		}
		if m.opts.MinMemory != nil {
			limit = max(limit, m.opts.MinMemory(sp.Config, meta))
		}
		limit = (limit + grid.FrontierMinStepBytes - 1) / grid.FrontierMinStepBytes * grid.FrontierMinStepBytes
		sp.MemLimitBytes = limit
		sp.MemLimit = strconv.FormatInt(limit, 10)
		sp.Config.MemLimit, sp.Config.MemLimitBytes = sp.MemLimit, limit
	}
	return ps
}
