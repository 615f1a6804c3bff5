package pygplus

// PyG+'s memory plan. PyG+ sizes nothing from the budget (Ginex §5.1: all
// of its caching is the OS page cache, which the memory limit bounds), so
// its plan is small and pure: the batch input it reserves (virtually, off
// the Go heap) for the largest mini-batch the fanouts allow, and the least
// a budget must hold for it to run at all: what profiling saw as base, the
// model step where it is charged to the budget, one sampled mini-batch and
// its gathered input. The page cache of the mappings is what is left.

import (
	"outcore/engine/system/kit"
	"outcore/engine/vocab"
)

// plan is PyG+'s memory plan.
type plan struct {
	xRows int64 // rows of each reserved batch input: the most a batch can have
	// inputs is the number of batch inputs held at once: two when the
	// gather overlaps training (one trained, one gathered), else one
	inputs   int
	need     int64 // base + step charged to the budget + inputs × (a batch + its input)
	feasible bool  // need fits the budget (or there is none)
}

// size computes PyG+'s plan.
func size(s kit.Sizing[options, kit.NoProfile]) plan {
	budget, ws, shape, cfg, opt := s.Budget, s.WS, s.Shape, s.Cfg, s.Opt
	p := plan{xRows: min(shape.Nodes, vocab.MaxInputBound(shape, cfg)), inputs: 1}
	if opt.overlap {
		p.inputs = 2
	}
	p.need = ws.BaseBytes + ws.ArenaBytes + ws.StepExtra + int64(p.inputs)*(ws.BatchBytes+int64(ws.MaxInputs)*shape.RowBytes())
	p.feasible = budget <= 0 || p.need <= budget
	return p
}

// Fits is whether the budget holds PyG+'s plan (kit.Fitter).
func (p plan) Fits() bool { return p.feasible }

// memory is the plan as the shared preparation applies it (kit.Plan):
// nothing held outside the budget but the model step, nothing cut, and the
// Go heap left to the budget (PyG+ plans no heap: the page cache is its
// cache).
func (p plan) memory() kit.Plan {
	return kit.Plan{Fits: p.feasible, Heap: &kit.GoHeap{}}
}
