package mariusgnn

// Sizing the partition buffer from the host memory budget, a pure function
// of the budget, the profiled workspace, the dataset's shape, the
// partitioning and the options. The artifact takes buffer_capacity from
// its configuration (its papers100M node-classification configuration
// holds 3584 of 8192 partitions); outcore derives it from the run's budget
// as the other variants size their caches: the largest c whose buffer,
// with everything else the run holds and the reserve Ginex §3.5 keeps for
// fluctuations, fits. A run is feasible when the least buffer the ordering
// accepts (SEQUENTIAL: every training partition; DISPERSED: one) fits next
// to what the run cannot do without; MinMemory is the least feasible
// budget with kit.EstimateWorkspace in place of the profile.

import (
	"fmt"
	"slices"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

// ahead is how many mini-batches the samplers may have sampled and the
// trainer not yet taken.
func (o options) ahead() int { return 2 * o.samplers }

// batchMeasure is what the largest DENSE mini-batch measured holds.
type batchMeasure struct {
	maxInputs int   // its input nodes
	bytes     int64 // its ids and blocks
}

// profile is what the plan depends on besides kit.Sizing (its Prof): the
// layout's. The zero profile is the floor's (runOf): the partitioning
// NewLayout makes of the shape, the layout's maps and no edges, so the
// floor is a lower bound of what a run needs.
type profile struct {
	run bool // a run's profile (false: the floor's, runOf)
	// extraBase is held before the buffer but not in WS.BaseBytes (with
	// an estimated workspace: the layout's maps, allocated before the
	// profile in a run).
	extraBase  int64
	p          int   // partitions of the layout
	partSize   int64 // nodes per partition
	trainParts int   // leading partitions holding the training nodes
	// buckets are the p² bucket sizes in edges; nil counts no edges (a
	// lower bound).
	buckets []int64
	// dense is the measured DENSE batch; zero: the profiled standard
	// batches of ws stand in (DENSE batches of resident partitions are no
	// larger).
	dense batchMeasure
	// readerQueue is the buffer readers' queue depth.
	readerQueue int
}

// runOf is the profile s sizes with: s.Prof in a run, the floor's
// otherwise.
func runOf(s kit.Sizing[options, profile]) profile {
	if s.Prof.run {
		return s.Prof
	}
	p, ps, tp := layoutShape(s.Shape, s.Opt.partitions)
	return profile{run: true, extraBase: layoutMapBytes(s.Shape.Nodes), p: p, partSize: ps, trainParts: tp, readerQueue: ioQueueDepth}
}

// sizingInput is the sizing with its profile resolved (runOf).
type sizingInput struct {
	kit.Sizing[options, profile]
	profile
}

// plan is MariusGNN's memory plan.
type plan struct {
	c, slots int // buffer capacity, and its slots (c + a spare for prefetching)
	minC     int // the least capacity the ordering accepts
	spare    bool
	reserve  int64
	xRows    int64 // rows of the batch input
	perBatch int64 // batch input, mini-batches sampled ahead, the readers' aligned buffers
	fixed    int64 // what the run holds besides the buffer and the reserve
	buffer   int64 // the buffer of c: rows, resident buckets, subgraph, per-node arrays
	need     int64 // fixed + reserve + buffer
	// minNeed is what the run cannot do without: fixed and the buffer of
	// minC, no reserve.
	minNeed int64
	// feasible: minNeed fits the budget and the plan does not warn of an
	// OOM kill (overReserve), or there is no budget.
	feasible bool
	// fromBudget: c is the largest that fits with the reserve; otherwise
	// it is the option, p (no budget) or minC (nothing larger fits).
	fromBudget bool
	// overReserve: need exceeds the budget (the run warns of an OOM kill).
	overReserve bool
	bound       []int64 // edge bound per resident-partition count
}

// edgeBound returns, for every k in 0..p, an upper bound of the edges among
// k resident partitions: the sum of the k² largest buckets.
func edgeBound(buckets []int64, p int) []int64 {
	s := slices.Clone(buckets)
	slices.Sort(s)
	slices.Reverse(s)
	prefix := make([]int64, len(s)+1)
	for i, v := range s {
		prefix[i+1] = prefix[i] + v
	}
	out := make([]int64, p+1)
	for k := 0; k <= p; k++ {
		out[k] = prefix[min(k*k, len(s))]
	}
	return out
}

// size computes the plan: MariusGNN's sizing (kit.Sizer), Register's
// floor and the run's plan.
func size(s kit.Sizing[options, profile]) plan {
	in := sizingInput{s, runOf(s)}
	o, ws := in.Opt, in.WS
	rowBytes := in.Shape.RowBytes()
	pl := plan{minC: 1, bound: edgeBound(in.buckets, in.p)}
	if o.ordering == OrderingSequential {
		pl.minC = max(in.trainParts, 1)
	}
	pl.spare = o.prefetch && o.ordering == OrderingDispersed
	if in.Budget > 0 {
		pl.reserve = kit.ReserveBytes(in.Budget)
	}
	batchBytes := ws.BatchBytes
	pl.xRows = int64(ws.MaxInputs) + int64(ws.MaxInputs)/10
	if in.dense.maxInputs > 0 {
		pl.xRows = int64(in.dense.maxInputs) + int64(in.dense.maxInputs)/4
		batchBytes = in.dense.bytes + in.dense.bytes/4
	}
	readers := int64(4 * in.readerQueue * ioMergeBytes) // 4 readers with a prefetch in flight
	pl.perBatch = pl.xRows*rowBytes + int64(o.ahead()+1)*batchBytes + readers
	pl.fixed = ws.BaseBytes + ws.ArenaBytes + ws.StepExtra + in.extraBase + pl.perBatch
	// Per buffer node besides its row: the samplers' index arrays (4 B
	// each) and the subgraph's indptr (8 B).
	perNode := rowBytes + 4*int64(o.samplers) + 8
	buffer := func(c int) int64 {
		slots := c
		if pl.spare && c < in.p {
			slots++
		}
		// resident buckets of every slot (a prefetch reads the next state's
		// while the current one's are held), the subgraph of one state
		return int64(slots)*in.partSize*perNode + pl.bound[slots]*EdgeBytes + 4*pl.bound[c]
	}
	pl.minNeed = pl.fixed + buffer(pl.minC)
	switch {
	case o.bufferCapacity > 0:
		pl.c = min(o.bufferCapacity, in.p)
	case in.Budget <= 0:
		pl.c = in.p
	default:
		pl.c = pl.minC
		for c := in.p; c >= pl.minC; c-- {
			if pl.fixed+pl.reserve+buffer(c) <= in.Budget {
				pl.c, pl.fromBudget = c, true
				break
			}
		}
	}
	pl.slots = pl.c
	if pl.spare && pl.c < in.p {
		pl.slots++
	}
	pl.buffer = buffer(pl.c)
	pl.need = pl.fixed + pl.reserve + pl.buffer
	pl.overReserve = in.Budget > 0 && pl.need > in.Budget
	// A plan that warns of an OOM kill is not feasible: the floor every
	// caller checks (train.CheckFeasible) is where the run does not warn.
	pl.feasible = in.Budget <= 0 || (pl.minNeed <= in.Budget && !pl.overReserve)
	return pl
}

// layoutShape is the partitioning NewLayout makes of shape's nodes for p:
// the partitions, their size and the training partitions of the
// train-first layout.
func layoutShape(shape train.DatasetShape, p int) (parts int, partSize int64, trainParts int) {
	p = int(min(int64(max(p, 1)), max(shape.Nodes, 1)))
	partSize = (max(shape.Nodes, 1) + int64(p) - 1) / int64(p)
	parts = int((max(shape.Nodes, 1) + partSize - 1) / partSize)
	trainParts = int((shape.Train + partSize - 1) / partSize)
	return parts, partSize, trainParts
}

// Fits is whether the budget holds the plan (kit.Fitter; Register's
// floor is the least budget where it does with the floor's profile).
func (pl plan) Fits() bool { return pl.feasible }

// infeasible is the refusal of a budget the plan does not fit: below
// minNeed, or (overReserve) below minNeed with the reserve kept for
// fluctuations. It names what was over the budget; the least budget that
// fits is the plan's (kit.Plan.LeastBudget, which Apply names).
func (pl plan) infeasible(budget int64, s kit.Sizing[options, profile]) error {
	in := sizingInput{s, runOf(s)}
	mib := func(b int64) int64 { return (b + (1 << 20) - 1) >> 20 }
	what := fmt.Sprintf("a buffer of %d of %d partitions of %d MiB and what the run holds besides: %d MiB, of which %d MiB per mini-batch",
		pl.minC, in.p, (in.partSize*in.Shape.RowBytes())>>20, pl.fixed>>20, pl.perBatch>>20)
	if pl.minNeed <= budget {
		return fmt.Errorf("memory budget %d MiB below the %d MiB this run needs with the reserve for fluctuations (%d MiB: %d MiB without it, for %s)",
			budget>>20, mib(pl.need), mib(pl.reserve), mib(pl.minNeed), what)
	}
	return fmt.Errorf("memory budget %d MiB below the %d MiB this run holds even without the reserve (%s)", budget>>20, mib(pl.minNeed), what)
}

// goHeap is the Go heap of the run: the buffer and the per-batch memory
// off the heap; on it the base, each of samplers' per-node maps of the
// slots' partSize nodes and the mini-batches sampled ahead.
func (pl plan) goHeap(ws kit.Workspace, samplers, ahead, slots int, partSize int64) kit.GoHeap {
	heap := ws.BaseBytes + int64(samplers)*4*int64(slots)*partSize + int64(ahead+1)*ws.BatchBytes
	return kit.GoHeap{OffHeap: pl.buffer + pl.perBatch, HeapNeed: heap}
}
