package alipg

// Ali+PG's memory plan (Ginex §5.1). What PyG+ needs comes first: the
// process's base, the model step where it is charged to the budget, and
// two sampled batches with their gathered inputs (the gather thread's and
// the trainer's). "The available memory space" — the budget less that and
// the reserve every variant leaves — is split between the neighbour cache
// and the feature cache on nc_share's ratio ("0:100, 25:75, 50:50, 75:25,
// and 100:0"). The neighbour cache's bytes are its address table and
// lists (cache.NeighborCacheEntries decides what fits); the feature cache
// holds 4 B of slot per node and then whole rows.

import (
	"outcore/engine/system/kit"
	"outcore/engine/vocab"
)

// plan is Ali+PG's memory plan.
type plan struct {
	xRows     int64 // rows of each batch input: the most a batch can have
	need      int64 // base + step charged to the budget + 2 × (a batch + its input)
	available int64 // budget − need − reserve (0 when none is left, or no budget)
	ncBytes   int64 // the neighbour cache's share of available
	fcBytes   int64 // the feature cache's share: slot table and rows
	fcRows    int64 // rows the feature cache holds
	row       int64 // bytes of one feature row
	slots     int64 // the feature cache's slot table (4 B a node; 0 without rows)
	feasible  bool
}

// size computes Ali+PG's plan, a pure function of kit.Sizing. Without a
// budget there is no memory to split: no cache, PyG+ alone.
func size(s kit.Sizing[options, kit.NoProfile]) plan {
	budget, ws, shape, cfg, opt := s.Budget, s.WS, s.Shape, s.Cfg, s.Opt
	p := plan{xRows: min(shape.Nodes, vocab.MaxInputBound(shape, cfg)), row: shape.RowBytes()}
	p.need = ws.BaseBytes + ws.ArenaBytes + ws.StepExtra + 2*(ws.BatchBytes+int64(ws.MaxInputs)*shape.RowBytes())
	p.feasible = budget <= 0 || p.need+kit.ReserveBytes(budget) <= budget
	if budget <= 0 || !p.feasible {
		return p
	}
	p.available = budget - p.need - kit.ReserveBytes(budget)
	p.ncBytes = p.available * opt.ncPercent() / 100
	p.fcBytes = p.available - p.ncBytes
	if p.row > 0 && p.fcBytes > 4*shape.Nodes {
		p.fcRows = min((p.fcBytes-4*shape.Nodes)/p.row, shape.Nodes)
	}
	if p.fcRows > 0 {
		p.slots = 4 * shape.Nodes
	}
	return p
}

// Fits is whether the budget holds the plan (kit.Fitter): the floor is
// the least budget for which it does (kit.Register).
func (p plan) Fits() bool { return p.feasible }

// memory is the plan as the shared preparation applies it: nothing held
// outside the budget but the model step, nothing cut; the feature cache's
// rows are off the Go heap, the neighbour cache and the slot table on it.
func (p plan) memory() kit.Plan {
	return kit.Plan{Fits: p.feasible, Heap: &kit.GoHeap{OffHeap: p.fcRows * p.row, HeapNeed: p.need + p.ncBytes + p.slots}}
}
