package report

// How long a planned experiment will take, from the store's past runs
// (`outcore exp estimate`, scripts/reproduce-testbed.sh): each planned run
// takes the median epoch time of the past done runs most like it times
// its epochs; a run like none is "unknown". Pure policy: the CLI plans
// the grid and reads the store.

import (
	"fmt"
	"time"

	"outcore/store"
)

// PlannedRun is one run a grid would queue (a refused cell is none).
type PlannedRun struct {
	System, Dataset, Compute, Testbed string
	MemLimitBytes                     int64
	// Epochs is the run's configured epochs; 0 under a paper's testbed
	// whose mapping decides them (the past runs' epochs are taken then).
	Epochs int
}

// PastRun is a finished run of the store, as the estimate reads it.
type PastRun struct {
	System, Dataset, Compute, Testbed string
	MemLimitBytes                     int64
	MeanEpochS                        float64
	Epochs                            int // epochs done
}

// RunEstimate is a planned run's expected time: Seconds from N past runs
// matched at Match ("cell": the same variant, dataset, compute, testbed
// and limit; "variant": the same variant and dataset), or Known false.
type RunEstimate struct {
	Seconds float64
	Known   bool
	N       int
	Match   string
}

// Matches of an estimate, closest first.
const (
	MatchCell    = "cell"
	MatchVariant = "variant"
)

// EstimateRun estimates one planned run from past runs: over those of
// the same cell (variant, dataset, compute mode, testbed and memory
// limit) when there are any, else of the same variant and dataset, the
// median mean epoch time times the planned epochs (or, when the testbed
// decides them, the median epochs those runs did).
func EstimateRun(p PlannedRun, past []PastRun) RunEstimate {
	var cell, variant []PastRun
	for _, r := range past {
		if r.System != p.System || r.Dataset != p.Dataset || r.MeanEpochS <= 0 || r.Epochs <= 0 {
			continue
		}
		variant = append(variant, r)
		if r.Compute == p.Compute && r.Testbed == p.Testbed && r.MemLimitBytes == p.MemLimitBytes {
			cell = append(cell, r)
		}
	}
	use, match := cell, MatchCell
	if len(use) == 0 {
		use, match = variant, MatchVariant
	}
	if len(use) == 0 {
		return RunEstimate{}
	}
	secs := make([]float64, len(use))
	eps := make([]float64, len(use))
	for i, r := range use {
		secs[i], eps[i] = r.MeanEpochS, float64(r.Epochs)
	}
	epochs := float64(p.Epochs)
	if epochs <= 0 {
		epochs = median(eps)
	}
	return RunEstimate{Seconds: median(secs) * epochs, Known: true, N: len(use), Match: match}
}

// StudyEstimate is a study's planned runs and their expected time.
type StudyEstimate struct {
	Study   string
	Runs    int // planned (refused cells excluded)
	Refused int // cells refused at planning
	// Seconds is the sum over the runs with an estimate; Unknown counts
	// the runs without one (the study's time is then unknown).
	Seconds float64
	Unknown int
	Err     string // why the study could not be planned ("" when it was)
}

// Known reports whether every run of the study has an estimate.
func (e StudyEstimate) Known() bool { return e.Err == "" && e.Unknown == 0 }

// EstimateStudy sums EstimateRun over a study's planned runs.
func EstimateStudy(study string, planned []PlannedRun, refused int, past []PastRun) StudyEstimate {
	e := StudyEstimate{Study: study, Runs: len(planned), Refused: refused}
	for _, p := range planned {
		if r := EstimateRun(p, past); r.Known {
			e.Seconds += r.Seconds
		} else {
			e.Unknown++
		}
	}
	return e
}

// FitBudget picks, in the order given, the studies whose estimates fit
// in budget one after another: a study fits when its time is known and
// the times picked so far plus its own stay within budget (a study that
// does not fit is passed over and the next one tried). budget <= 0 picks
// every study.
func FitBudget(es []StudyEstimate, budget time.Duration) (fit []string) {
	var used float64
	for _, e := range es {
		if budget <= 0 {
			fit = append(fit, e.Study)
			continue
		}
		if !e.Known() || used+e.Seconds > budget.Seconds() {
			continue
		}
		used += e.Seconds
		fit = append(fit, e.Study)
	}
	return fit
}

// PastRunsOf reads the store's runs as the estimate's past runs: those
// done with a mean epoch time; testbedOf reads a run's testbed from its
// configuration.
func PastRunsOf(runs []store.Run, testbedOf func(store.Run) string) []PastRun {
	var out []PastRun
	for _, r := range runs {
		if r.Status != store.StatusDone || r.MeanEpochS == nil || r.EpochsDone <= 0 {
			continue
		}
		out = append(out, PastRun{System: r.System, Dataset: r.Dataset, Compute: r.Compute, Testbed: testbedOf(r),
			MemLimitBytes: r.MemLimitBytes, MeanEpochS: *r.MeanEpochS, Epochs: r.EpochsDone})
	}
	return out
}

// Duration writes seconds as a rounded duration ("1h12m", "45s").
func Duration(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	switch {
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	case d >= time.Minute:
		return d.Round(time.Second).String()
	}
	return fmt.Sprintf("%.0fs", secs)
}
