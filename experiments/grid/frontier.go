package grid

// A grid's "frontier" key (DESIGN §12): the settings of a memory-frontier
// search, and the summary of a frontier experiment's stored runs per cell
// (FrontierLines, what the views show). The search itself, probe after
// probe, is the runner's (experiments/frontier.go, frontier_run.go).

import (
	"encoding/json"
	"math"
	"sort"
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
	// raised to the variant's floor when below it. When no epoch finishes
	// there, the top is doubled, at most FrontierRaises times.
	MaxLimit string `json:"max_limit,omitempty"`
	// MaxCellSeconds bounds the wall time of one cell's search (0: none):
	// no probe starts after the cell's finished probes have taken this
	// long, so a search of n cells one at a time ends within n times it
	// plus one probe each. The frontier is then the least limit that
	// finished so far, named as stopped by the budget.
	MaxCellSeconds float64 `json:"max_cell_s,omitempty"`
}

// Defaults of FrontierSpec, and the smallest step of a bisection.
const (
	DefaultFrontierTolerance = 0.05
	DefaultFrontierProbes    = 12
	FrontierMinStepBytes     = 1 << 20
	FrontierRaises           = 3
	maxFrontierProbes        = 40
)

// WithDefaults fills the zero fields.
func (s FrontierSpec) WithDefaults() FrontierSpec {
	if s.Tolerance == 0 {
		s.Tolerance = DefaultFrontierTolerance
	}
	if s.MaxProbes == 0 {
		s.MaxProbes = DefaultFrontierProbes
	}
	return s
}

// parseFrontier reads a grid's "frontier" value.
func parseFrontier(v json.RawMessage, ps *ProblemList) *FrontierSpec {
	var s FrontierSpec
	dec := json.NewDecoder(strings.NewReader(string(v)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		ps.Add("frontier", `frontier: want an object such as {"tolerance": 0.05, "max_probes": 12} (%v)`, err)
		return nil
	}
	if !(s.Tolerance >= 0 && s.Tolerance < 1) {
		ps.Add("frontier", "frontier: tolerance %v, want a share from 0 (default %.2f) to below 1", s.Tolerance, DefaultFrontierTolerance)
	}
	if s.MaxLimit != "" {
		if msg := limitSyntaxProblem(s.MaxLimit); msg != "" {
			ps.Add("frontier", "frontier: max_limit: %s", msg)
		}
	}
	if !(s.MaxCellSeconds >= 0) || math.IsInf(s.MaxCellSeconds, 0) {
		ps.Add("frontier", "frontier: max_cell_s %v, want seconds from 0 (no budget) up", s.MaxCellSeconds)
	}
	if s.MaxProbes < 0 || s.MaxProbes > maxFrontierProbes {
		ps.Add("frontier", "frontier: max_probes %d, want 0 (default %d) to %d", s.MaxProbes, DefaultFrontierProbes, maxFrontierProbes)
	}
	return &s
}

// FrontierKey is a cell of a frontier search: every axis but the limit.
type FrontierKey struct {
	System, Dataset, Model, Fanout, Compute string
	Dim, Batch                              int
}

// FrontierKeyOf is the cell of a frontier search that run r probes.
func FrontierKeyOf(r store.Run) FrontierKey {
	return FrontierKey{r.System, r.Dataset, r.Model, r.Fanout, r.Compute, r.FeatureDim, r.BatchSize}
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
	idx := map[FrontierKey]int{}
	var out []FrontierLine
	sorted := append([]store.Run(nil), runs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Seq < sorted[j].Seq })
	for _, r := range sorted {
		k := FrontierKeyOf(r)
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
		k := FrontierKeyOf(r)
		l := &out[idx[k]]
		if store.Finished(r.Status) && r.EpochsDone == 0 && (l.Frontier == 0 || r.MemLimitBytes < l.Frontier) {
			l.FailBelow = max(l.FailBelow, r.MemLimitBytes)
		}
	}
	return out
}
