package dglondisk

// DGL-OnDisk's memory plan. It caches no features (DiskGNN §7.2), so the
// budget holds the process, one model step, one sampled batch with its
// gathered input, and the graph structure DGL keeps in memory; the rest of
// the budget is unused by design. The workspace it sizes with has the
// indices taken out of the profiled base (kit.PinnedProfile.PlanWS): the
// profile runs after the graph is loaded, so its base holds them, and a
// plan that added them again asked for 588 MiB on medium and, running on
// regardless, set the Go limit above the 512 MiB budget (make test-long's
// memory check killed it at 50 %, docs/REPRODUCTION.md).

import (
	"fmt"

	"outcore/engine/system/kit"
)

// plan is DGL-OnDisk's memory plan.
type plan struct {
	need     int64 // heap + topology, without the reserve
	heap     int64 // the Go heap it plans for (topology included: a Go slice)
	feasible bool
}

// size computes the plan, a pure function of kit.Sizing.
func size(s kit.Sizing[options, kit.NoProfile]) plan {
	p := plan{heap: s.WS.BaseBytes + s.WS.ArenaBytes + s.WS.StepExtra + s.WS.BatchBytes + int64(s.WS.MaxInputs)*s.Shape.RowBytes() + s.Shape.IndicesBytes()}
	p.need = p.heap
	p.feasible = s.Budget <= 0 || p.need+kit.ReserveBytes(s.Budget) <= s.Budget
	return p
}

// Fits is whether the budget holds the plan (kit.Fitter): the floor is
// the least budget for which it does (kit.Register).
func (p plan) Fits() bool { return p.feasible }

// memory is the plan as the shared preparation applies it: a plan that
// does not fit is refused, naming what it holds and (Apply) the least
// budget that fits; else nothing held outside the budget but the model
// step, nothing cut, one phase.
func (p plan) memory(budget, least int64) kit.Plan {
	if !p.feasible {
		return kit.Plan{LeastBudget: least, Refusal: fmt.Errorf("dgl-ondisk: the memory budget (%d MiB) cannot hold the process, the graph structure, a step and a batch with its input (%d MiB) and the reserve (%d MiB)",
			budget>>20, p.need>>20, kit.ReserveBytes(budget)>>20)}
	}
	return kit.Plan{Fits: true, Heap: &kit.GoHeap{HeapNeed: p.heap}}
}
