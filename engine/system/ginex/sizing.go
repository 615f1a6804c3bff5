package ginex

// Ginex §3.5: cache sizes from the memory budget, a pure function of the
// budget, the profiled workspace, the dataset's shape and the options.
// The neighbour cache gets the budget less the peak of the superbatch
// sample stage less the reserve; the feature cache the budget less the
// peak of the main loop less the reserve (the two caches never coexist:
// the stages alternate). The superbatch is the option (the artifact's
// 1000), capped at an epoch and by the runtime-file storage budget. The
// main loop gathers the next iteration while one trains when the budget
// holds two batch inputs, else gather and training alternate.

import (
	"fmt"

	"outcore/engine/cache"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

// artifactReadBlock is the artifact's read granularity: the aligned 4 KiB
// block of each missing row (gather_ginex), each list from its aligned
// 4 KiB start (load_neighbors_into_buffer).
const artifactReadBlock = 4096

// profile is what Ginex's plan depends on besides kit.Sizing (its Prof;
// the zero profile is the floor's).
type profile struct {
	// readerBuf is the I/O buffer of one storage Reader of indices.bin
	// and of features.bin (storage.File.ReaderBufferBytes; off the Go
	// heap): each sampler has its own Reader, the main loop one. The
	// floor counts none.
	readerBuf int64
}

// Why the main loop has one batch input (plan.oneBuffer).
const (
	oneBufferAsked  = "option" // x_buffers=1
	oneBufferBudget = "budget" // two do not fit next to the main loop's workspace
)

// plan is Ginex's memory plan.
type plan struct {
	superbatch    int  // iterations per superbatch
	superbatchCut bool // cut by the runtime-file budget
	maxBatch      int  // rows of one batch input: profiled M_b + a tenth
	reserve       int64
	// Go heap and peak (heap, its collection slack, buffers, reserve) of
	// the superbatch sample stage and of the main loop; sampleOff is the
	// sample stage's memory off the Go heap besides the neighbour cache
	// (the samplers' Readers' I/O buffers)
	sampleHeap, samplePeak int64
	sampleOff              int64
	readerBuf              int64 // one Reader's I/O buffer (profile.readerBuf)
	// changesetsOverlap: pass 3 of a superbatch runs while the next one
	// is sampled (more than one superbatch per epoch), so the sample
	// stage holds both workspaces; with one superbatch they alternate.
	changesetsOverlap  bool
	mainHeap, mainPeak int64
	xBytes             int64  // one batch input
	xBuffers           int    // batch inputs of the main loop
	oneBuffer          string // "" or why one buffer (oneBufferAsked, oneBufferBudget)
	ncBytes, fcBytes   int64  // neighbour and feature cache
	fcEntries          int
	// overReserve: the main loop's peak (with its collection slack and
	// the reserve) exceeds the budget; the run warns of an OOM kill.
	overReserve bool
	// minNeed is what the main loop cannot do without: its heap and batch
	// input(s) (one unless x_buffers=2), with no slack and no reserve.
	minNeed int64
	// feasible: the main loop's peak fits the budget (or there is none):
	// no overReserve, so a run the plan calls feasible is not one it warns
	// of an OOM kill (train.CheckFeasible refuses the others before they
	// start). MinMemory is the least budget where it holds.
	feasible bool
}

// size computes Ginex's plan (kit.Sizer: Register's floor and the run's
// plan), with the epoch's iterations from the shape and the batch size.
func size(in kit.Sizing[options, profile]) plan {
	batches := numBatches(in.Shape, in.Cfg)
	o, ws := in.Opt, in.WS
	nodes, rowBytes := in.Shape.Nodes, in.Shape.RowBytes()
	// At least one iteration per superbatch: a shape without training
	// nodes (a preset's dataset before it exists) has no batches.
	p := plan{superbatch: max(1, min(o.superbatch, batches)), readerBuf: in.Prof.readerBuf}
	// Runtime files per iteration ≈ ids (8 B/node) + adj (≈ 3 blocks of
	// int32 indices) + update; the storage budget caps the superbatch.
	perIter := int64(ws.MeanInputs) * 24
	if perIter > 0 && int64(p.superbatch)*perIter*2 > o.runfileBudget { // ×2: two superbatches exist at once
		p.superbatch = max(1, int(o.runfileBudget/(2*perIter)))
		p.superbatchCut = true
	}
	p.maxBatch = ws.MaxInputs + ws.MaxInputs/10
	perBatch := ws.BatchBytes
	p.reserve = kit.ReserveBytes(in.Budget)
	accesses := int64(p.superbatch) * int64(ws.MeanInputs)
	p.xBytes = int64(p.maxBatch) * rowBytes // one batch input of the main loop, off the Go heap
	// Peak of the sample stage: per sampler its id map, its batch, its hop
	// scratch and the scratch of its gather of the neighbour lists (the
	// neighbour cache's split, the disk Reader's sorted chunks and the
	// Reader's I/O buffer, off the heap), and the previous superbatch's
	// changeset workspace when pass 3 overlaps; the Go heap gets a quarter
	// on top (GOGC 25).
	hop := ws.MaxHopEntries
	perSampler := sample.IDMapBytes(nodes, ws.MaxInputs) + perBatch + sample.HopScratchBytes(hop) + cachedGatherBytes(hop) + sample.GatherBytes(hop)
	sampling := int64(o.samplers) * perSampler
	changesets := cache.ChangesetWorkspaceBytes(nodes, accesses, 0)
	p.changesetsOverlap = (batches+p.superbatch-1)/p.superbatch > 1
	p.sampleHeap = ws.BaseBytes + ws.ArenaBytes + ws.StepExtra
	if p.changesetsOverlap {
		p.sampleHeap += sampling + changesets
	} else {
		p.sampleHeap += max(sampling, changesets)
	}
	p.sampleOff = int64(o.samplers) * in.Prof.readerBuf
	p.samplePeak = p.sampleHeap + p.sampleHeap/4 + p.sampleOff + p.reserve
	// Peak of the main loop: model step, prefetched runtime files, a read
	// chunk with its Reader's bookkeeping and the feature cache's address
	// table on the heap; the batch inputs and the Reader's I/O buffer off
	// it.
	p.mainHeap = ws.BaseBytes + ws.ArenaBytes + ws.StepExtra + 4*perBatch + gatherChunk*(rowBytes+storage.PlanBytesPerRow) + 4*nodes
	p.xBuffers = 2
	p.mainPeak = p.mainHeap + p.mainHeap/4 + 2*p.xBytes + in.Prof.readerBuf + p.reserve
	switch {
	case o.xBuffers == 1:
		p.xBuffers, p.oneBuffer = 1, oneBufferAsked
	case o.xBuffers == 0 && in.Budget > 0 && p.mainPeak > in.Budget:
		p.xBuffers, p.oneBuffer = 1, oneBufferBudget
	}
	if p.xBuffers == 1 {
		p.mainPeak -= p.xBytes
	}
	p.overReserve = in.Budget > 0 && p.mainPeak > in.Budget
	p.minNeed = p.mainHeap + p.xBytes + in.Prof.readerBuf
	if o.xBuffers == 2 {
		p.minNeed += p.xBytes
	}
	p.feasible = in.Budget <= 0 || (p.minNeed <= in.Budget && !p.overReserve)
	topoBytes := 8*nodes + 8*(in.Shape.Edges+nodes)
	featBytes := nodes*rowBytes + 4*nodes
	switch {
	case o.ncBytes >= 0:
		p.ncBytes = o.ncBytes
	case in.Budget > 0:
		p.ncBytes = max(0, in.Budget-p.samplePeak)
	default:
		p.ncBytes = topoBytes
	}
	p.ncBytes = min(p.ncBytes, topoBytes)
	switch {
	case o.fcBytes >= 0:
		p.fcBytes = o.fcBytes
	case in.Budget > 0:
		p.fcBytes = max(0, in.Budget-p.mainPeak)
	default:
		p.fcBytes = featBytes
	}
	p.fcBytes = min(p.fcBytes, featBytes)
	p.fcEntries = cache.FeatureCacheEntries(p.fcBytes, nodes, in.Shape.FeatureDim)
	return p
}

// numBatches is the number of training batches per epoch of cfg on a
// dataset of shape (train.Env.NumBatches).
func numBatches(shape train.DatasetShape, cfg train.Config) int {
	b := int64(cfg.Batch)
	if b <= 0 || b >= shape.Train {
		return int(min(1, shape.Train))
	}
	return int((shape.Train + b - 1) / b)
}

// Fits is whether the budget holds Ginex's plan (kit.Fitter).
func (p plan) Fits() bool { return p.feasible }

// sampleGo is the Go heap of the superbatch sample stage: the neighbour
// cache and the samplers' I/O buffers off the heap, strict (the model
// step's matrix-library buffers are C memory, kit.GoHeap.Strict).
func (p plan) sampleGo() kit.GoHeap {
	return kit.GoHeap{OffHeap: p.ncBytes + p.sampleOff, HeapNeed: p.sampleHeap, Strict: true}
}

// mainGo is the Go heap of the main loop: the feature cache's rows of
// rowBytes, the batch inputs and the reader's buffer off the heap, strict.
func (p plan) mainGo(rowBytes int64) kit.GoHeap {
	return kit.GoHeap{OffHeap: int64(p.fcEntries)*rowBytes + int64(p.xBuffers)*p.xBytes + p.readerBuf, HeapNeed: p.mainHeap, Strict: true}
}

// memory is the plan as the shared preparation applies it (kit.Plan):
// nothing held outside the budget but the model step, the cuts in words,
// the Go heap set per phase (sampleGo, mainGo).
func (p plan) memory() kit.Plan {
	m := kit.Plan{Fits: p.feasible}
	if p.superbatchCut {
		m.Cuts = append(m.Cuts, fmt.Sprintf("superbatch cut to %d iterations by the runtime-file budget", p.superbatch))
	}
	switch p.oneBuffer {
	case oneBufferAsked:
		m.Cuts = append(m.Cuts, "x_buffers=1: the next iteration is gathered after the current one trains, not while it trains")
	case oneBufferBudget:
		m.Cuts = append(m.Cuts, fmt.Sprintf("the memory budget cannot hold two batch inputs (%d MiB each) next to the main loop's workspace: the next iteration is gathered after the current one trains, not while it trains", p.xBytes>>20))
	}
	return m
}
