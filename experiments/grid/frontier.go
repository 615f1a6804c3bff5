package grid

// A grid's "frontier" key (DESIGN §12): the settings of a memory-frontier
// search (the summary of a frontier experiment's stored runs per cell,
// what the views show, is store.FrontierLines). The search itself, probe after
// probe, is the runner's (experiments/frontier.go, frontier_run.go).

import (
	"encoding/json"
	"math"
	"strings"
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
