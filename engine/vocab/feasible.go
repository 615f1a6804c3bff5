package vocab

// Feasibility: the one answer to "can a run of this configuration start
// under its memory budget?" (docs/DESIGN.md §6 "One feasibility check").
// The dashboard's cell matrix, the submit of a form, the HTTP API, the
// queue's runner and the training process itself all call MinMemoryFor /
// CheckFeasible with the run's own configuration, its data directory
// included, so that the first-batch probe (ProbeShape) runs wherever the
// dataset exists and every caller gets the same floor. The floor is the
// variant's MinMemory, the least budget at which the variant's own plan —
// the plan its Prepare sizes with — is feasible without warning of an OOM
// kill; the training process's plan is the authority, the others predict
// it with the same code.

import (
	"errors"
	"fmt"
	"sync"

	"outcore/engine/dataset"
	"outcore/internal/units"
)

// RuntimeFloor is what an `outcore train` process holds besides the data
// it loads, once it runs: the Go runtime, the pages of the binary it
// touches, the heap's arenas. Measured as the profiled base of a run
// (kit.ProfileWorkspace's BaseBytes) less its indptr and labels: 18 MiB
// of base on small with 4.6 MiB of arrays (2026-11-29). The variants'
// plans use it as their base (kit.EstimateWorkspace).
const RuntimeFloor = 13 << 20

// StartFloor is the least memory an `outcore train` process starts in:
// its peak before its start record (the runtime, the binary's pages, the
// trainer's model and the evaluator's reader, opened at once). Measured
// with pyg+ on tiny (whose arrays are 0.1 MiB) in its memory cgroup:
// OOM-killed before its start record in 1 of 3 starts at 17 MiB, 1 of 8
// at 18 MiB, none of 16 at 19 MiB (2026-11-29); then, at 19.1 MiB (19
// MiB, the floor before, with the arrays), in 1 CI run and in 2 of 20
// starts here, and in none of 30 at 20.1 MiB nor of 30 at 21.1 MiB
// (2026-11-29, load average 1.2–2.1). The rule: the least start floor
// at which none of 30 starts was killed (20 MiB), plus a tenth of it
// for the spread between hosts, rounded up to a whole MiB.
const StartFloor = 22 << 20

// ConservativeMinMemory is the floor of any variant: StartFloor plus what
// every variant keeps in memory for the whole run — the CSC indptr array
// (8 bytes per node + 8) and the labels (4 bytes per node).
func ConservativeMinMemory(meta dataset.Meta) int64 {
	return StartFloor + 8*(meta.Nodes+1) + 4*meta.Nodes
}

// MinMemoryFor is the least memory budget a run of cfg can start with on
// the dataset meta describes: the larger of ConservativeMinMemory and the
// variant's MinMemory on the dataset's shape. When the dataset exists in
// cfg's data directory the shape includes the first mini-batch's sampled
// input nodes (engine/train's ProbeShape, registered by SetFirstBatchProbe
// when a binary links the runtime; cached per process), a lower bound of
// the largest batch.
func MinMemoryFor(cfg Config, meta dataset.Meta) int64 {
	need := ConservativeMinMemory(meta)
	v, ok := LookupVariant(cfg.System)
	if !ok || v.MinMemory == nil {
		return need
	}
	shape := ShapeOf(meta)
	if probe := firstBatchProbe(); probe != nil {
		if probed, err := probe(cfg); err == nil && probed.Nodes == meta.Nodes && probed.FeatureDim == meta.FeatureDim {
			shape.FirstBatchInputs, shape.FirstBatchBytes, shape.FirstBatchHopEntries = probed.FirstBatchInputs, probed.FirstBatchBytes, probed.FirstBatchHopEntries
		}
	}
	return max(need, v.MinMemory(shape, cfg))
}

// InfeasibleError is a memory budget below MinMemoryFor: the run cannot
// start. It wraps ErrConfig.
type InfeasibleError struct {
	System, Dataset string
	Limit, Need     int64
	Nodes           int64
	FeatureDim      int
}

func (e *InfeasibleError) Error() string {
	return fmt.Sprintf("%s: mem_limit: %s (%d bytes) is below the %s (%d bytes) that %s needs to start on %s (%d nodes, %d-dim features)",
		ErrConfig, floorText.Format(e.Limit), e.Limit, floorText.Format(e.Need), e.Need, e.System, e.Dataset, e.Nodes, e.FeatureDim)
}

// Reason is the error without its "configuration error" prefix, for a
// refused cell's reason.
func (e *InfeasibleError) Reason() string {
	return fmt.Sprintf("%s is below the %s that %s needs to start on %s", floorText.Format(e.Limit), floorText.Format(e.Need), e.System, e.Dataset)
}

func (e *InfeasibleError) Unwrap() error { return ErrConfig }

// CheckFeasible refuses cfg's memory budget (cfg.MemLimitBytes, resolved;
// 0 = none, always feasible) when it is below MinMemoryFor. The error is
// an *InfeasibleError.
func CheckFeasible(cfg Config, meta dataset.Meta) error {
	if cfg.MemLimitBytes <= 0 {
		return nil
	}
	if need := MinMemoryFor(cfg, meta); cfg.MemLimitBytes < need {
		return &InfeasibleError{System: cfg.System, Dataset: meta.Name, Limit: cfg.MemLimitBytes, Need: need,
			Nodes: meta.Nodes, FeatureDim: meta.FeatureDim}
	}
	return nil
}

// AsInfeasible returns err's *InfeasibleError, if it has one.
func AsInfeasible(err error) (*InfeasibleError, bool) {
	var ie *InfeasibleError
	ok := errors.As(err, &ie)
	return ie, ok
}

// floorText writes a limit or a floor in MiB ("56.3MiB", "300MiB").
var floorText = units.ByteFormat{Unit: units.MiB}

var (
	probeMu sync.RWMutex
	probe   func(Config) (DatasetShape, error)
)

// SetFirstBatchProbe registers the first-batch probe of MinMemoryFor
// (engine/train registers ProbeShape from its init, so every binary that
// links the runtime has it; a program without it gets the floors of the
// dataset's shape alone, lower bounds still).
func SetFirstBatchProbe(p func(Config) (DatasetShape, error)) {
	probeMu.Lock()
	probe = p
	probeMu.Unlock()
}

func firstBatchProbe() func(Config) (DatasetShape, error) {
	probeMu.RLock()
	defer probeMu.RUnlock()
	return probe
}
