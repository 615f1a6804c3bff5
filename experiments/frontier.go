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
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"outcore/store"
)

// FrontierSpec is a grid's "frontier" settings.
type FrontierSpec struct {
	// Tolerance ends the bisection when the gap between the least limit
	// that finished and the largest that did not is at most this share of
	// the former (default 0.05), and never below MinStepBytes.
	Tolerance float64 `json:"tolerance,omitempty"`
	// MaxProbes bounds the runs per cell (default 12).
	MaxProbes int `json:"max_probes,omitempty"`
	// MaxLimit is the top of the search, the first probe: a limit as the
	// mem_limit axis takes it (default "100%" of the feature bytes),
	// raised to the variant's floor when below it.
	MaxLimit string `json:"max_limit,omitempty"`
}

// Defaults of FrontierSpec, and the smallest step of a bisection.
const (
	DefaultFrontierTolerance = 0.05
	DefaultFrontierProbes    = 12
	FrontierMinStepBytes     = 1 << 20
	maxFrontierProbes        = 40
)

// withDefaults fills the zero fields.
func (s FrontierSpec) withDefaults() FrontierSpec {
	if s.Tolerance == 0 {
		s.Tolerance = DefaultFrontierTolerance
	}
	if s.MaxProbes == 0 {
		s.MaxProbes = DefaultFrontierProbes
	}
	return s
}

// parseFrontier reads a grid's "frontier" value.
func parseFrontier(v json.RawMessage, ps *problems) *FrontierSpec {
	var s FrontierSpec
	dec := json.NewDecoder(strings.NewReader(string(v)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		ps.add("frontier", `frontier: want an object such as {"tolerance": 0.05, "max_probes": 12} (%v)`, err)
		return nil
	}
	if !(s.Tolerance >= 0 && s.Tolerance < 1) {
		ps.add("frontier", "frontier: tolerance %v, want a share from 0 (default %.2f) to below 1", s.Tolerance, DefaultFrontierTolerance)
	}
	if s.MaxLimit != "" {
		if msg := limitSyntaxProblem(s.MaxLimit); msg != "" {
			ps.add("frontier", "frontier: max_limit: %s", msg)
		}
	}
	if s.MaxProbes < 0 || s.MaxProbes > maxFrontierProbes {
		ps.add("frontier", "frontier: max_probes %d, want 0 (default %d) to %d", s.MaxProbes, DefaultFrontierProbes, maxFrontierProbes)
	}
	return &s
}

// FrontierProbe is one finished probe of a cell: its limit and whether
// the run finished an epoch there.
type FrontierProbe struct {
	Limit  int64
	Epoch  bool    // an epoch finished under the limit
	EpochS float64 // its mean epoch time (0 when none)
}

// FrontierStep is what NextFrontierProbe decides.
type FrontierStep struct {
	Next     int64  // the limit to probe next; 0 when done
	Done     bool   // no further probe
	Frontier int64  // the least limit that finished an epoch (0: none did)
	Note     string // why it stopped, or what is odd (a failure above the frontier)
}

// NextFrontierProbe is the bisection policy (pure): floor is the variant's
// computed floor, ceil 100 % of the feature bytes, probes the finished
// runs of the cell. It probes ceil first, then the floor, then bisects
// between the largest limit that failed below the least that finished,
// in whole MiB, until the gap is within the tolerance (at least 1 MiB) or
// the probes run out. A failure above the least success (the cell is not
// monotone in its limit: noise, or a run that failed for another reason)
// is named in Note and otherwise ignored.
func NextFrontierProbe(floor, ceil int64, probes []FrontierProbe, spec FrontierSpec) FrontierStep {
	spec = spec.withDefaults()
	floor = max(floor, FrontierMinStepBytes)
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
	if hi == 0 {
		return FrontierStep{Done: true, Note: fmt.Sprintf("no epoch finished even at 100 %% (%s)", FormatBytes(ceil))}
	}
	var note string
	lo := int64(0) // largest failure below hi
	for _, p := range probes {
		switch {
		case !p.Epoch && p.Limit < hi:
			lo = max(lo, p.Limit)
		case !p.Epoch && p.Limit > hi:
			note = fmt.Sprintf("failed at %s, above the frontier (not monotone in the limit)", FormatBytes(p.Limit))
		}
	}
	if floor >= hi {
		why := "the computed floor is at or above the least limit that finished"
		if hi == floor {
			why = "finished at its computed floor"
		}
		return FrontierStep{Done: true, Frontier: hi, Note: join(note, why)}
	}
	if !probed(floor) {
		return FrontierStep{Next: floor, Frontier: hi, Note: note}
	}
	gap := max(int64(math.Ceil(spec.Tolerance*float64(hi))), FrontierMinStepBytes)
	if hi-lo <= gap {
		return FrontierStep{Done: true, Frontier: hi, Note: note}
	}
	if len(probes) >= spec.MaxProbes {
		return FrontierStep{Done: true, Frontier: hi, Note: join(note, fmt.Sprintf("stopped after %d probes, %s apart", len(probes), FormatBytes(hi-lo)))}
	}
	mid := lo + (hi-lo)/2
	mid = mid / FrontierMinStepBytes * FrontierMinStepBytes
	if mid <= lo {
		mid += FrontierMinStepBytes
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
func (m *Manager) firstProbes(g *Grid, specs []RunSpec, datasets map[string]datasetInfo) problems {
	var ps problems
	top := "100%"
	if g.Frontier.MaxLimit != "" {
		top = g.Frontier.MaxLimit
	}
	for i := range specs {
		sp := &specs[i]
		meta := datasets[sp.Dataset].Meta
		limit, err := parseLimit(top, meta.FeatureBytes())
		if err != nil || limit == 0 {
			ps.add("frontier", "frontier: max_limit %q: %v", top, err)
			return ps
		}
		if m.opts.MinMemory != nil {
			limit = max(limit, m.opts.MinMemory(sp.Config, meta))
		}
		limit = (limit + FrontierMinStepBytes - 1) / FrontierMinStepBytes * FrontierMinStepBytes
		sp.MemLimitBytes = limit
		sp.MemLimit = strconv.FormatInt(limit, 10)
		sp.Config.MemLimit, sp.Config.MemLimitBytes = sp.MemLimit, limit
	}
	return ps
}

// FrontierLine is one cell of a frontier experiment as its stored runs
// say (the views; no floor needed): the least limit that finished an
// epoch, the largest below it that did not, and the probes so far.
type FrontierLine struct {
	System    string
	Frontier  int64 // 0: none finished (yet)
	FailBelow int64 // largest failed limit below Frontier (0: none)
	Probes    int   // finished probes
	Searching bool  // a probe is queued or running
}

// FrontierLines summarises a frontier experiment's runs per cell, in the
// order of their first runs.
func FrontierLines(runs []store.Run) []FrontierLine {
	idx := map[frontierKey]int{}
	var out []FrontierLine
	sorted := append([]store.Run(nil), runs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Seq < sorted[j].Seq })
	for _, r := range sorted {
		k := frontierKey{r.System, r.Dataset, r.Model, r.Fanout, r.Compute, r.FeatureDim, r.BatchSize}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, FrontierLine{System: r.System})
		}
		l := &out[i]
		if !store.Finished(r.Status) {
			l.Searching = true
			continue
		}
		l.Probes++
		if r.EpochsDone > 0 && (l.Frontier == 0 || r.MemLimitBytes < l.Frontier) {
			l.Frontier = r.MemLimitBytes
		}
	}
	for _, r := range sorted {
		k := frontierKey{r.System, r.Dataset, r.Model, r.Fanout, r.Compute, r.FeatureDim, r.BatchSize}
		l := &out[idx[k]]
		if store.Finished(r.Status) && r.EpochsDone == 0 && (l.Frontier == 0 || r.MemLimitBytes < l.Frontier) {
			l.FailBelow = max(l.FailBelow, r.MemLimitBytes)
		}
	}
	return out
}
