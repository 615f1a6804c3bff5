package kit

// Profiling (Ginex §3.5: "by a short offline profiling"). Each variant
// sizes its caches and buffers from the run's memory budget the way its
// paper does; all of them need the same few measurements first: what the
// process holds before any cache exists, how many input nodes a
// mini-batch has, and how much workspace one training step takes.
// ProfileWorkspace measures them; PlanStep (pure) decides how the
// measured step is accounted.

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"outcore/engine/graph"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

// Workspace is what profiling measured, with the model step accounted by
// PlanStep.
type Workspace struct {
	BaseBytes  int64 // resident memory before caches: runtime, indptr, labels, model
	MaxInputs  int   // most input nodes of a profiled mini-batch (M_b)
	BatchBytes int64 // memory of the largest profiled mini-batch (ids and blocks)
	MeanInputs int
	// MaxHopEntries is the most index entries one hop of a profiled
	// mini-batch sampled (its largest block's edges): what one sampler's
	// gather of the neighbour lists asks for at once.
	MaxHopEntries int
	// ArenaBytes is the trainer's reserved step workspace charged to the
	// host budget (0 when the step is held outside it).
	ArenaBytes int64
	// StepExtra is what the process held during the profiled step beyond
	// base, arena and batch input (matrix-library buffers, collector
	// slack), charged to the host budget (0 when the step is outside).
	StepExtra int64
	RowBytes  int64
	Batches   int // mini-batches profiled
	// DeviceBytes is the model step held outside the budget (model_mem.go):
	// parameters, optimizer state, arena and step extra with a margin. When
	// it is set, ArenaBytes and StepExtra are zero (nothing of the step is
	// charged to the host budget) and StepArena/StepOther keep the measure.
	DeviceBytes          int64
	StepArena, StepOther int64
	LibBytes             int64 // matrix-library buffers kept after the step
	// Step is the measured step and how it is accounted.
	Step StepPlan
}

// BatchInputBytes is the size of one gathered batch input of the largest
// profiled batch.
func (w Workspace) BatchInputBytes() int64 { return int64(w.MaxInputs) * w.RowBytes }

// StepMeasure is what profiling measured of one training step on the
// largest profiled mini-batch.
type StepMeasure struct {
	Arena  int64 // the model's step workspace (activations and gradients)
	Extra  int64 // held during the step beyond base, arena and batch input
	Lib    int64 // matrix-library buffers kept after the step
	Params int64 // parameters, gradients and Adam's two moments
}

// StepPlan is how a measured step is accounted.
type StepPlan struct {
	Measure StepMeasure
	// Reserved is the trainer's workspace reserved up front: the measured
	// arena plus 1/ReserveMarginDiv (batches vary), so that it is held from
	// the start instead of growing in the first steps.
	Reserved int64
	// Outside reports whether the step is held outside the host budget.
	Outside bool
	// HeldArena is the workspace held outside the budget: Reserved plus
	// 1/GrowthMarginDiv (a larger batch would grow it). 0 when not Outside.
	HeldArena int64
	// Device is everything held outside: HeldArena, the step's extras, the
	// library buffers and the parameters with optimizer state.
	Device int64
	// Charged are the step's bytes charged to the host budget (Reserved +
	// Extra when not Outside).
	ChargedArena, ChargedExtra int64
}

// Margins of the step accounting: the reserved workspace is the measure
// plus 1/ReserveMarginDiv, what is held outside the budget the reserve
// plus 1/GrowthMarginDiv.
const (
	ReserveMarginDiv = 8
	GrowthMarginDiv  = 8
)

// PlanStep accounts a measured step: reserved at the measure plus a
// margin, and, when outside (the model step held outside the budget,
// model_mem.go), held outside with a further margin together with its
// extras, library buffers and parameters.
func PlanStep(m StepMeasure, outside bool) StepPlan {
	p := StepPlan{Measure: m, Outside: outside}
	p.Reserved = m.Arena + m.Arena/ReserveMarginDiv
	if !outside {
		p.ChargedArena, p.ChargedExtra = p.Reserved, m.Extra
		return p
	}
	p.HeldArena = p.Reserved + p.Reserved/GrowthMarginDiv
	p.Device = p.HeldArena + m.Extra + m.Lib + m.Params
	return p
}

// ArenaMarginPct is the margin of the held workspace over the measured
// one, in whole percent (the deviation text states it).
func (p StepPlan) ArenaMarginPct() int {
	if p.Measure.Arena <= 0 {
		return 0
	}
	return int((100*(p.HeldArena-p.Measure.Arena) + p.Measure.Arena/2) / p.Measure.Arena)
}

// ProfileWorkspace samples the first n training batches of epoch 0 and runs
// one training step of a throw-away copy of the model on the largest of them
// (constant dense features: only the shapes matter), so the real model is
// untouched. When the step is held outside the budget (ModelMemOutside)
// the memory limit is lifted for the step and then held at budget + the
// step (Budget.Profile is the usual way in).
func ProfileWorkspace(ctx context.Context, env *train.Env, topo sample.Topology, n int) (Workspace, error) {
	w := Workspace{RowBytes: env.Dataset.RowBytes()}
	s, err := env.NewSampler(topo)
	if err != nil {
		return w, err
	}
	batches := env.EpochBatches(0)
	n = min(n, len(batches))
	var largest *graph.MiniBatch
	sum := 0
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return w, err
		}
		mb, err := s.Sample(0, i, batches[i])
		if err != nil {
			return w, fmt.Errorf("profile: %w", err)
		}
		sum += len(mb.InputNodes)
		w.BatchBytes = max(w.BatchBytes, mb.Bytes())
		for _, b := range mb.Blocks {
			w.MaxHopEntries = max(w.MaxHopEntries, len(b.Indices))
		}
		if len(mb.InputNodes) > w.MaxInputs {
			w.MaxInputs = len(mb.InputNodes)
			largest = mb
		}
	}
	w.Batches = n
	if n > 0 {
		w.MeanInputs = sum / n
	}
	reserveFloats, reserveInts := 0, 0
	// In the compute modes none and model: no model step runs (DESIGN §10):
	// none is measured, reserved, charged or held outside the budget, and
	// the limit enforced is the budget.
	if largest != nil && env.TrainsModel() {
		lifted, err := liftForProfiling(env)
		if err != nil {
			return w, err
		}
		settled := !lifted
		defer func() {
			if !settled { // an error return: back to the budget alone
				_ = HoldOutsideBudget(env, 0)
			}
		}()
		runtime.GC()
		debug.FreeOSMemory()
		before := AnonRSS()
		cfg := env.Config
		m, err := nn.NewModel(cfg.Model, env.Trainer.InDim(), cfg.Hidden, env.Trainer.Classes(), len(cfg.Fanout), cfg.Heads, float32(cfg.Dropout), uint64(cfg.Seed))
		if err != nil {
			return w, fmt.Errorf("profile: %w", err)
		}
		x := nn.NewTensor(len(largest.InputNodes), env.Trainer.InDim())
		for i := range x.Data {
			// dense, like real features: zeros would take the layers'
			// sparse-input path, whose workspace is smaller
			x.Data[i] = 1
		}
		labels := make([]int32, len(largest.Seeds))
		m.Step(largest.Blocks, x, labels)
		arena := int64(m.ArenaBytes())
		floats, ints := m.ArenaSizes()
		during := AnonRSS()
		x, m = nil, nil
		runtime.GC()
		debug.FreeOSMemory()
		after := AnonRSS()
		// What stays after the step is freed: the matrix library's
		// per-thread buffers (OpenBLAS keeps them for the process's life).
		meas := StepMeasure{
			Arena:  arena,
			Lib:    max(0, after-before),
			Extra:  max(0, during-after-arena-w.BatchInputBytes()),
			Params: int64(env.Trainer.Model().NumParams()) * 4 * 4, // weights, gradients, Adam m and v
		}
		outside := ModelMemOutside(env)
		w.setStep(PlanStep(meas, outside))
		// The trainer's workspace is reserved (at the end, after the base
		// is measured) at the plan's size, so that it is held from the
		// start instead of growing, and re-chunking, in the first steps.
		reserveFloats, reserveInts = floats+floats/ReserveMarginDiv, ints+ints/ReserveMarginDiv
		if lifted {
			settled = true
			if err := HoldOutsideBudget(env, w.DeviceBytes); err != nil {
				return w, err
			}
		}
		if w.DeviceBytes > 0 {
			env.Deviate("%s", StepDeviation(w.Step, n, env.MemBudget))
		}
		env.HoldDevice(nil, w.DeviceBytes) // the memory account: no device tiers yet
	}
	s, largest = nil, nil
	// The profiled batches' index pages are not the first epoch's warm
	// cache: evict what the sampling faulted in through a memory map (the
	// supervisor started the run with the dataset evicted).
	if d, ok := topo.Indices.(interface{ DropCache() error }); ok {
		if err := d.DropCache(); err != nil {
			return w, fmt.Errorf("profile: evict the sampled index pages: %w", err)
		}
	}
	if r, ok := topo.Indices.(interface{ Release() error }); ok {
		// readers' buffers sized by profiling's gathers are not base memory
		if err := r.Release(); err != nil {
			return w, fmt.Errorf("profile: %w", err)
		}
	}
	runtime.GC()
	debug.FreeOSMemory()
	w.BaseBytes = AnonRSS()
	if w.DeviceBytes > 0 {
		w.BaseBytes = max(0, w.BaseBytes-w.LibBytes) // counted in DeviceBytes
	}
	if reserveFloats > 0 {
		env.Trainer.ReserveWorkspace(reserveFloats, reserveInts)
	}
	return w, nil
}

// setStep fills the workspace's step fields from a plan.
func (w *Workspace) setStep(p StepPlan) {
	w.Step = p
	w.LibBytes = p.Measure.Lib
	w.ArenaBytes, w.StepExtra = p.ChargedArena, p.ChargedExtra
	if p.Outside {
		w.StepArena, w.StepOther = p.Reserved, p.Measure.Extra+p.Measure.Lib
		w.DeviceBytes = p.Device
	}
}

// StepDeviation is the deviation a run records when its model step is held
// outside the budget; every number comes from the plan.
func StepDeviation(p StepPlan, profiled int, budget int64) string {
	return fmt.Sprintf("the CPU trainer's model step (%d MiB: parameters and optimizer state, %d MiB of activations and gradients measured on the largest of %d profiled mini-batches plus %d%%, %d MiB of matrix-library buffers) is held outside the %d MiB memory budget, as the GPU memory it occupies in the papers; the cgroup limit is %d MiB",
		p.Device>>20, p.HeldArena>>20, profiled, p.ArenaMarginPct(), (p.Measure.Extra+p.Measure.Lib)>>20, budget>>20, (budget+p.Device)>>20)
}

// AnonRSS is the process's anonymous resident memory (RssAnon): heap,
// stacks and allocations, without the file pages of its memory maps, which
// are page cache the kernel can reclaim. 0 when it cannot be read.
func AnonRSS() int64 {
	v, _ := osutil.AnonRSSBytes()
	return v
}
