package alipg

// Ali+PG's memory plan (Ginex §5.1). What PyG+ needs comes first: the
// process's base, the model step where it is charged to the budget, every
// sampled batch the pipeline holds at once (the sampling workers'
// prefetch × workers dispatched ahead, the one being gathered and the one
// being trained) and the two gathered inputs (the gather thread's and the
// trainer's), which live off the Go heap. "The available memory space" —
// the budget less that, the reserve every variant leaves, and the page
// cache the two mappings need to make progress — is split between the
// neighbour cache and the feature cache on nc_share's ratio ("0:100,
// 25:75, 50:50, 75:25, and 100:0"). The neighbour cache's bytes are its
// address table and lists (cache.NeighborCacheEntries decides what fits);
// the feature cache holds 4 B of slot per node and then whole rows.
//
// The page-cache share is what make test-long's memory check on medium
// found missing (docs/REPRODUCTION.md "The papers' own baselines"): every
// miss of either cache is a page fault on a mapping, whose pages are
// charged to the run's cgroup; a plan that gave the caches all but the
// reserve left the faults of the samplers and gather threads too little
// page cache to reclaim from, and the cgroup killed the run.

import (
	"fmt"

	"outcore/engine/system/kit"
	"outcore/engine/vocab"
)

// plan is Ali+PG's memory plan.
type plan struct {
	xRows int64 // rows reserved for each batch input: the most a batch can have
	// heldBatches is the number of sampled batches alive at once:
	// prefetch × workers dispatched ahead, one gathered, one trained
	heldBatches int64
	inputs      int64 // the two gathered inputs (off the Go heap)
	need        int64 // base + step charged to the budget + held batches + inputs
	pageCache   int64 // kept for the mappings' faults (mappedPageCache)
	available   int64 // budget − need − reserve − pageCache (0 when none is left, or no budget)
	ncBytes     int64 // the neighbour cache's share of available
	fcBytes     int64 // the feature cache's share: slot table and rows
	fcRows      int64 // rows the feature cache holds
	row         int64 // bytes of one feature row
	slots       int64 // the feature cache's slot table (4 B a node; 0 without rows)
	feasible    bool
}

// size computes Ali+PG's plan, a pure function of kit.Sizing. Without a
// budget there is no memory to split: no cache, PyG+ alone.
func size(s kit.Sizing[options, kit.NoProfile]) plan {
	budget, ws, shape, cfg, opt := s.Budget, s.WS, s.Shape, s.Cfg, s.Opt
	p := plan{xRows: min(shape.Nodes, vocab.MaxInputBound(shape, cfg)), row: shape.RowBytes()}
	p.heldBatches = int64(opt.prefetch*opt.workers) + 2
	p.inputs = 2 * int64(ws.MaxInputs) * shape.RowBytes()
	p.need = ws.BaseBytes + ws.ArenaBytes + ws.StepExtra + p.heldBatches*ws.BatchBytes + p.inputs
	if budget > 0 {
		p.pageCache = mappedPageCache(budget)
	}
	p.feasible = budget <= 0 || p.need+kit.ReserveBytes(budget)+p.pageCache <= budget
	if budget <= 0 || !p.feasible {
		return p
	}
	p.available = budget - p.need - kit.ReserveBytes(budget) - p.pageCache
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

// mappedPageCache is the page cache the plan keeps for the two mappings
// beside the reserve: as much again as the reserve (a tenth of the budget,
// at least 32 MiB). On medium at 25 % (256 MiB) PyG+, whose whole
// remainder is page cache, ran with 32–37 MiB of it; Ali+PG, whose caches
// left it the reserve's 32 MiB less what the pipeline held beyond its
// plan, was killed with 22 MiB.
func mappedPageCache(budget int64) int64 { return kit.ReserveBytes(budget) }

// Fits is whether the budget holds the plan (kit.Fitter): the floor is
// the least budget for which it does (kit.Register).
func (p plan) Fits() bool { return p.feasible }

// memory is the plan as the shared preparation applies it: a plan that
// does not fit is refused, naming what it must hold and (Apply) the least
// budget that fits; else nothing held outside the budget but the model
// step, nothing cut; the feature cache's rows and the two batch inputs are
// off the Go heap, the neighbour cache, the slot table and the sampled
// batches on it, and the mappings' page cache is kept out of the Go limit.
func (p plan) memory(budget, least int64) kit.Plan {
	if !p.feasible {
		return kit.Plan{LeastBudget: least, Refusal: fmt.Errorf("ali+pg: the memory budget (%d MiB) cannot hold PyG+'s pipeline (%d MiB: %d sampled batches and two batch inputs of up to %d MiB), the page cache of the mappings (%d MiB) and the reserve (%d MiB)",
			budget>>20, p.need>>20, p.heldBatches, p.inputs/2>>20, p.pageCache>>20, kit.ReserveBytes(budget)>>20)}
	}
	heap := p.need - p.inputs + p.ncBytes + p.slots
	return kit.Plan{Fits: true, Heap: &kit.GoHeap{OffHeap: p.fcRows*p.row + p.inputs, KeepCached: p.pageCache, HeapNeed: heap}}
}
