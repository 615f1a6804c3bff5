package kit

// The memory budget (docs/ARCHITECTURE.md "Model step outside the
// budget"). Every variant goes through the same sequence, kept here in one
// place:
//
//	b := kit.NewBudget(env)            // the Go collector under the budget, no plan yet
//	ws, err := b.Profile(ctx, topo, n) // one step measured with the limit lifted, then held outside
//	                                   // (ProfileStage: the same, recorded as the stage profile_s)
//	plan, least := kit.Size(size, kit.SizingOf(env, ws, opt, prof)) // the variant's pure sizing (its sizing.go)
//	_, err = b.Apply(plan.memory(least)) // memplan.go: refuse, hold the device parts, deviations, Go limit
//	b.Enter(plan.mainHeap)             // a later phase's Go limit, if any
//
// and MinMemory is the smallest budget whose plan is feasible, found by
// MinBudget over the same sizing (Sizer.MinMemory, through Register) with
// EstimateWorkspace in place of the profile and the zero Prof.

import (
	"context"
	"runtime/debug"
	"time"

	"outcore/engine/sample"
	"outcore/engine/train"
)

// Budget is a run's host memory budget as a variant works with it.
type Budget struct {
	env *train.Env
	ws  Workspace
}

// NewBudget starts a variant's memory accounting: under a budget, the Go
// collector is set to the budget with no plan yet (ApplyGoMemoryLimit).
func NewBudget(env *train.Env) *Budget {
	ApplyGoMemoryLimit(env.MemBudget, 0, 0, 0, 0)
	return &Budget{env: env}
}

// Bytes is the host budget (0 = unlimited).
func (b *Budget) Bytes() int64 { return b.env.MemBudget }

// Workspace is what Profile measured.
func (b *Budget) Workspace() Workspace { return b.ws }

// Profile measures n mini-batches and one training step (ProfileWorkspace)
// and holds the step outside the budget when the run says so.
func (b *Budget) Profile(ctx context.Context, topo sample.Topology, n int) (Workspace, error) {
	ws, err := ProfileWorkspace(ctx, b.env, topo, n)
	b.ws = ws
	return ws, err
}

// ProfileStage is Profile recorded as the preparation stage profile_s,
// timed from since: the variant's choice of start, so that a variant that
// opens the topology it profiles over counts the opening in profile_s.
func (b *Budget) ProfileStage(ctx context.Context, since time.Time, topo sample.Topology, n int) (Workspace, error) {
	ws, err := b.Profile(ctx, topo, n)
	if err == nil {
		b.env.PrepareStage("profile_s", time.Since(since))
	}
	return ws, err
}

// Device is the run's device budget in bytes (device_mem; 0: none).
func (b *Budget) Device() int64 { return b.env.DeviceBudget() }

// ReserveBytes is the region Ginex §3.5 keeps free "for memory
// fluctuations": a tenth of the budget, at least 32 MiB.
func ReserveBytes(budget int64) int64 { return max(budget/10, 32<<20) }

// GoMemoryLimit is the Go runtime's soft memory limit under a budget (0
// when there is none). The papers' systems free tensors as soon as they
// die (reference counting), so their anonymous memory is their live data;
// Go's default (GOGC=100) lets the heap grow to twice the live data, and
// that slack would come out of the page cache the budget leaves to the OS
// (PyG+ and GNNDrive's topology live there) or push the process over the
// limit. So, under a budget, the collector runs at 25% growth, and the
// runtime is capped at the heap the variant planned for (heapNeed plus
// that quarter), or at what the budget leaves (less an eighth) after the
// memory held outside the Go heap (offHeap: caches, buffers) and the page
// cache the variant wants to keep (keepCached), whichever is smaller, but
// never below heapNeed (below it the collector would run without pause)
// nor 32 MiB. heapNeed 0 means "no plan": the budget decides. device is
// the model step held outside the budget (model_mem.go), added on top.
func GoMemoryLimit(budget, device, offHeap, keepCached, heapNeed int64) int64 {
	if budget <= 0 {
		return 0
	}
	limit := budget - budget/8 - offHeap - keepCached
	if heapNeed > 0 {
		limit = min(limit, heapNeed+heapNeed/4)
	}
	return max(limit, heapNeed, 32<<20) + device
}

// ApplyGoMemoryLimit sets the collector to 25% growth and the runtime's
// memory limit to GoMemoryLimit under a budget, and returns the limit (0:
// no budget, nothing set).
func ApplyGoMemoryLimit(budget, device, offHeap, keepCached, heapNeed int64) int64 {
	limit := GoMemoryLimit(budget, device, offHeap, keepCached, heapNeed)
	if limit == 0 {
		return 0
	}
	debug.SetGCPercent(25)
	debug.SetMemoryLimit(limit)
	return limit
}

// RuntimeFloor is train.RuntimeFloor, the lower bound of what an `outcore
// train` process holds before it loads any data (one constant, one place).
const RuntimeFloor = train.RuntimeFloor

// EstimateWorkspace is a lower bound of what ProfileWorkspace would
// measure, from the dataset's shape alone: the runtime floor, indptr and
// labels as the base; a batch's input nodes, the first batch's when it was
// sampled (train.ProbeShape), else its seeds (every seed is one); as the
// batch, the first batch's ids and blocks when it was sampled, else its
// ids, and its largest hop's neighbour entries; no model step charged to
// the budget. Fed to a variant's sizing it gives a lower bound of the
// budget the variant needs (MinBudget), the same plan the run sizes with
// its profiled workspace: the first batch is one of the batches profiling
// measures, whose largest it keeps.
func EstimateWorkspace(shape train.DatasetShape, cfg train.Config) Workspace {
	seeds := int64(cfg.Batch)
	if seeds <= 0 || seeds > shape.Train {
		seeds = shape.Train
	}
	inputs := max(seeds, shape.FirstBatchInputs, 1)
	return Workspace{
		BaseBytes:     RuntimeFloor + shape.IndptrBytes() + 4*shape.Nodes,
		MaxInputs:     int(inputs),
		MeanInputs:    int(inputs),
		BatchBytes:    max(8*inputs, shape.FirstBatchBytes),
		MaxHopEntries: int(shape.FirstBatchHopEntries),
		RowBytes:      shape.RowBytes(),
	}
}

// MinBudget is the smallest budget in bytes for which feasible holds,
// assuming feasibility only grows with the budget (binary search up to
// 1 PiB; 1 PiB when nothing smaller is feasible).
func MinBudget(feasible func(budget int64) bool) int64 {
	lo, hi := int64(1), int64(1)<<50
	if !feasible(hi) {
		return hi
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if feasible(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// TopologyBytes is the graph structure (indptr and indices) held whole in
// host memory, as GIDS pins it (§3.5) and Helios keeps it.
func TopologyBytes(shape train.DatasetShape) int64 {
	return shape.IndptrBytes() + shape.IndicesBytes()
}
