package gnndrive

// GNNDrive's memory plan (§4.2 and the artifact), a pure function of the
// budget, the profiled workspace, the dataset's shape and the options:
// the feature buffer holds (training-queue depth + 1) × M_b slots ×
// buffer_factor, capped by what the budget leaves after the workspace;
// "the number of extractors ... is decided with regard to the volume of
// topological data and the capacity of available host memory": extractors
// are cut to what the budget can reserve N_e × M_b slots for, leaving the
// memory-mapped indices their page cache when possible; when not even one
// extractor's reservation fits next to the paper's queues, the queues are
// shortened. With feature_buffer=device (§4.2's GPU-based layout) the
// buffer and the indexed batch input are held outside the host budget and
// the extractors are cut to what host memory holds next to the indices,
// each with its M_b rows of the host staging buffer (staging_buffer.go).

import (
	"runtime"

	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

// artifactReadBlock is the artifact's read granularity: one request per
// row at the sector size (§4.4 "Access Granularity": multiples of 512 B;
// rows sharing a sector are loaded together).
const artifactReadBlock = 512

// profile is what GNNDrive's plan depends on besides kit.Sizing (its
// Prof). The zero profile is the floor's: run false, and the plan takes
// the configuration's queue depth, this machine's cores and the model's
// in-place reading (runOf), no device budget.
type profile struct {
	run        bool // a run's profile (false: the floor's, runOf)
	queueDepth int  // I/O depth of an extractor's ring (0 = storage default)
	cpus       int  // cores, the most samplers of shortened queues
	// inPlace: the model reads an aliased batch input without copying it
	// (nn.IndexedInPlace)
	inPlace bool
	// device is the run's device budget (device_mem) when deviceCap is
	// set: feature_buffer=device keeps the buffer and the batch input
	// within it (DESIGN §2 "One memory contract"); never below the
	// extractors' N_e × M_b reservation, which a recorded deviation then
	// states (train.Env.HoldDevice).
	device    int64
	deviceCap bool
}

// runOf is the profile s sizes with: s.Prof in a run, the floor's
// otherwise.
func runOf(s kit.Sizing[options, profile]) profile {
	if s.Prof.run {
		return s.Prof
	}
	return profile{run: true, queueDepth: s.Cfg.QueueDepth, cpus: runtime.NumCPU(), inPlace: inPlace(s.Shape, s.Cfg)}
}

// slotOverhead is the feature buffer's bookkeeping per slot beyond the row:
// mapping-table entry, reverse mapping and standby-list links.
const slotOverhead = 17

// plan is GNNDrive's memory plan.
type plan struct {
	maxBatch   int   // M_b: the largest profiled input-node count × batch_margin
	paperSlots int64 // (training queue + 1) × M_b × buffer_factor, at most every node
	slots      int64 // feature buffer slots
	// the pipeline: possibly fewer extractors and shorter queues than asked
	samplers, extractors, extractQ, trainQ int
	perBatch                               int64 // one mini-batch in flight: ids, blocks, aliases
	heapNeed                               int64 // the Go heap planned for
	staging                                int64 // extractors' ring buffers
	// hostStaging is the staging buffer of the device layout: N_e × M_b
	// rows of host memory (staging_buffer.go), 0 for the CPU buffer
	hostStaging int64
	keepTopo    int64 // page cache left to the memory-mapped indices
	topo        int64 // size of the indices
	// CPU buffer under a budget: the working set besides the buffer and
	// the slots the budget leaves without and with the indices cached
	work, availAll, availTopo int64
	shortWork                 int64 // the working set with shortened queues
	onDevice                  bool  // feature_buffer=device under a budget
	slotsCutByDevice          bool  // the device budget holds fewer slots than the paper's (trainQ+1) × M_b
	outside                   int64 // held outside the budget besides the model step (device: buffer + batch input)
	offHeap                   int64 // buffer and batch input off the Go heap, in the budget
	topoSqueezed              bool  // not even one mini-batch of features next to the indices' page cache
	queuesShortened           bool
	// aliasInput: the trainer reads the batch input through the alias
	// list; no batch-input copy (x) is planned
	aliasInput bool
	xBytes     int64 // the batch-input copy, 0 with aliasInput
	// overReserve: even the shortest pipeline's working set (with the
	// collection slack, staging and reserve) leaves less than one
	// extractor's N_e × M_b reservation; the run warns of an OOM kill.
	overReserve bool
	// minNeed is what the plan cannot shrink below: the Go heap of the
	// shortest pipeline with one extractor (device: the paper's queues
	// with one extractor and its M_b rows of host staging), plus, for the
	// CPU buffer, the batch input and one extractor's reservation; no
	// slack, ring buffers or reserve.
	minNeed int64
	// feasible: minNeed fits the budget and the plan does not warn of an
	// OOM kill (overReserve), or there is no budget; MinMemory is the
	// least budget where it holds (train.CheckFeasible: the run's plan is
	// the authority, the callers' floor predicts it).
	feasible bool
}

// size computes GNNDrive's plan: with the batch input gathered into a copy
// (the artifact's trainer), or read through the alias list when asked, or,
// with batch_input=auto, when the copy would cost the paper's pipeline
// something under the budget (fewer extractors, the indices' page cache,
// shorter queues, or the run itself).
//
// It is GNNDrive's sizing (kit.Sizer): Register's floor and the run's plan.
func size(s kit.Sizing[options, profile]) plan {
	in := sizingInput{s, runOf(s)}
	alias := in.inPlace && in.Opt.batchInput == "alias"
	p := sizeWith(in, alias)
	if in.inPlace && in.Opt.batchInput == "auto" && in.Budget > 0 && !p.onDevice &&
		(p.extractors < in.Opt.extractors || p.topoSqueezed || p.queuesShortened || !p.feasible) {
		p = sizeWith(in, true)
	}
	return p
}

// sizeWith computes the plan with the batch input copied (x) or aliased.
func sizeWith(in sizingInput, alias bool) plan {
	o, ws := in.Opt, in.WS
	nodes, rowBytes := in.Shape.Nodes, in.Shape.RowBytes()
	p := plan{samplers: o.samplers, extractors: o.extractors, extractQ: o.extractQ, trainQ: o.trainQ}
	p.maxBatch = int(float64(ws.MaxInputs)*o.margin + 0.5)
	p.maxBatch = int(min(int64(max(p.maxBatch, 1)), nodes))
	mb := int64(p.maxBatch)
	p.aliasInput = alias
	if !alias {
		p.xBytes = mb * rowBytes
	}
	p.paperSlots = min(int64(float64(mb*int64(o.trainQ+1))*o.bufferFactor), nodes)
	p.slots = p.paperSlots
	p.perBatch = ws.BatchBytes + int64(ws.MaxInputs)*4
	depth := in.queueDepth
	if depth == 0 {
		depth = storage.DefaultQueueDepth
	}
	stagingOf := func(extractors int) int64 { return int64(extractors) * int64(depth) * storage.DefaultMaxMergeBytes }
	// The Go heap: what profiling saw, the model step (when charged to the
	// budget), the mini-batches in the queues, the samplers' id maps, the
	// mapping table and the readers' request bookkeeping.
	heapOf := func(samplers, extractQ, trainQ, extractors int) int64 {
		return ws.BaseBytes + ws.ArenaBytes + ws.StepExtra +
			int64(extractQ+samplers+extractors+trainQ+1)*p.perBatch +
			int64(samplers)*sample.IDMapBytes(nodes, ws.MaxInputs) + nodes*8 + int64(extractors)*submitAhead*256
	}
	p.heapNeed = heapOf(p.samplers, p.extractQ, p.trainQ, p.extractors)
	p.topo = in.Shape.IndicesBytes()
	budget := in.Budget
	reserve := kit.ReserveBytes(budget)
	switch {
	case budget > 0 && o.bufferAt == "device":
		// §4.2: the feature buffer is sized by the training queue and M_b
		// in device memory; extractors by the host memory left after the
		// topology: each needs its staging ring next to the queues.
		// Each extractor's part of the host staging buffer (M_b rows) is
		// host memory under the budget.
		p.onDevice = true
		hostOf := func(extractors int) int64 {
			heap := heapOf(p.samplers, p.extractQ, p.trainQ, extractors)
			return heap + heap/4 + stagingOf(extractors) + int64(extractors)*mb*rowBytes + reserve
		}
		for p.extractors > 1 && hostOf(p.extractors)+p.topo > budget {
			p.extractors--
		}
		p.slots = p.paperSlots
		if in.deviceCap {
			if fit := max(0, in.device-p.xBytes) / rowBytes; fit < p.slots {
				p.slots, p.slotsCutByDevice = fit, true
			}
		}
		p.slots = max(p.slots, int64(p.extractors)*mb)
		p.heapNeed = heapOf(p.samplers, p.extractQ, p.trainQ, p.extractors)
		p.hostStaging = int64(p.extractors) * mb * rowBytes
		p.keepTopo = max(0, min(p.topo, budget-p.heapNeed-p.heapNeed/4-p.hostStaging-reserve))
		p.outside = p.slots*rowBytes + p.xBytes
	case budget > 0:
		workOf := func(heap int64, extractors int) int64 {
			return heap + heap/4 + // the heap and its collection slack (GOGC 25)
				p.xBytes + // trainer's x (none when aliased)
				stagingOf(extractors) + // staging (ring buffers)
				reserve
		}
		p.work = workOf(p.heapNeed, p.extractors)
		perSlot := rowBytes + slotOverhead
		p.availAll = max(0, budget-p.work) / perSlot
		// leave the memory-mapped indices their page cache if possible
		p.availTopo = max(0, budget-p.work-p.topo) / perSlot
		avail := p.availTopo
		switch {
		case p.availTopo >= int64(p.extractors)*mb:
			p.keepTopo = p.topo
		case p.availTopo >= mb:
			p.extractors = int(p.availTopo / mb)
			p.keepTopo = p.topo
		default:
			avail = p.availAll
			p.extractors = int(max(1, min(int64(p.extractors), p.availAll/mb)))
			p.topoSqueezed = true
		}
		p.slots = min(p.paperSlots, avail)
		if avail < int64(p.extractors)*mb {
			// Not even one extractor's reservation next to the paper's
			// queues: shorten the queues (mini-batches in flight are host
			// memory too) down to one extracting and one training slot and
			// as many samplers as cores.
			p.queuesShortened = true
			p.samplers, p.extractQ, p.trainQ = min(p.samplers, max(1, in.cpus)), 1, 1
			p.heapNeed = heapOf(p.samplers, p.extractQ, p.trainQ, p.extractors)
			p.shortWork = workOf(p.heapNeed, p.extractors)
			p.slots = min(p.paperSlots, max(0, budget-p.shortWork)/perSlot)
			p.overReserve = p.slots < int64(p.extractors)*mb
		} else {
			p.heapNeed = heapOf(p.samplers, p.extractQ, p.trainQ, p.extractors)
		}
	}
	p.slots = max(p.slots, int64(p.extractors)*mb)
	p.staging = stagingOf(p.extractors)
	if o.bufferAt == "device" {
		p.minNeed = heapOf(o.samplers, o.extractQ, o.trainQ, 1) + mb*rowBytes
	} else {
		p.minNeed = heapOf(min(o.samplers, max(1, in.cpus)), 1, 1, 1) + p.xBytes + mb*(rowBytes+slotOverhead)
	}
	p.feasible = budget <= 0 || (p.minNeed <= budget && !p.overReserve)
	if p.onDevice {
		p.offHeap = p.hostStaging
	} else {
		p.offHeap = p.slots*rowBytes + p.xBytes
	}
	return p
}

// sizingInput is the sizing with the profile resolved (runOf).
type sizingInput struct {
	kit.Sizing[options, profile]
	profile
}

// Fits is whether the budget holds GNNDrive's plan (kit.Fitter). The
// least budget where it does (kit.Size) is what a refusal names:
// the plan's minNeed leaves out the over-reserve case, which a budget
// above minNeed can still fall into.
func (p plan) Fits() bool { return p.feasible }

// inPlace reports whether the run's model reads an aliased batch input in
// place (nn.IndexedInPlace).
func inPlace(shape train.DatasetShape, cfg train.Config) bool {
	return nn.IndexedInPlace(cfg.Model, shape.FeatureDim, cfg.Hidden, shape.Classes, len(cfg.Fanout), cfg.Dropout)
}

// goHeap is the Go heap of the run: the buffer and batch input off the
// heap, the indices' page cache kept, the planned heap.
func (p plan) goHeap() kit.GoHeap {
	return kit.GoHeap{OffHeap: p.offHeap, KeepCached: p.keepTopo, HeapNeed: p.heapNeed}
}
