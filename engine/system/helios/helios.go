package helios

// "helios": Helios (Sun et al., "Helios: An Efficient Out-of-core GNN
// Training System on Terabyte-scale Graphs with In-memory Performance").
// Implemented:
//
//   - §3.1 (submit_complete.go): the asynchronous disk I/O stack: batch
//     preparers submit one read per uncached feature row over several
//     rings, and one completion goroutine per ring reaps them; a batch's
//     reads complete independently of other batches'.
//   - §3.2 (presample.go, static_cache.go, sizing.go): the heterogeneous static cache:
//     before training, one epoch of pre-sampling counts each node's
//     accesses; the hottest rows fill the GPU tier (gpu_cache), the next
//     hottest the CPU tier, which is the host memory left after the whole
//     topology (kept in memory) and the process's own needs.
//   - §3.3 (pipeline.go, its operators in pipeline_stages.go): the deep pipeline: each hop's new nodes are
//     looked up and their reads submitted while the next hop is sampled,
//     and batches are prepared ahead of the one training; pipeline=false
//     runs every operator in turn (Helios-NoPipe).
//   - Batches train in the reference order, so the losses equal the
//     reference pipeline's.
//
// Lookups per input row (DESIGN §5): the GPU tier, then the CPU tier, the
// rest read from storage for the batch. Stages: sample_s is the
// preparers' sampling, extract_s their cache lookups and read submissions
// (each a sample worker or an extract worker accordingly); stall_s is the
// trainer waiting for its next batch (pipeline stall), complete_wait_s
// the part of it spent waiting for I/O completion, io_complete_s the
// completion goroutines' time handling completions.

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

type helios struct {
	kit.Base
	opt options

	graph    *kit.Graph // §3.2: the whole topology in the CPU cache
	samplers []*sample.Sampler
	feats    *storage.File
	stack    *IOStack
	tiers    *Tiers
	gpuRows  []float32
	cpuRows  []float32
	xbufs    [][]float32
	maxBatch int
	dim      int
	rowBytes int64
	layout   Layout
	hostMem  kit.OffHeap
	devMem   kit.OffHeap
	cancel   context.CancelFunc
	lastIO   IOStats
}

func (h *helios) Prepare(ctx context.Context, env *train.Env) error {
	var err error
	if h.graph, err = kit.LoadGraph(env, "memory"); err != nil { // §3.2: the whole topology in the CPU cache
		return err
	}
	h.samplers = []*sample.Sampler{h.graph.Sampler}
	for len(h.samplers) < h.opt.preparers {
		h.samplers = append(h.samplers, h.graph.Sampler.Clone())
	}

	p, err := kit.ProfilePinned(ctx, env, h.graph.Topology, h.opt.profile)
	if err != nil {
		return err
	}
	budget, shape, ws := p.Budget, p.Shape, p.WS
	h.dim, h.rowBytes = shape.FeatureDim, shape.RowBytes()
	h.opt.device = budget.Device() // gpu_cache auto: the device budget (DESIGN §2 "One memory contract")
	h.layout = Plan(kit.Sizing[options, kit.NoProfile]{Budget: env.MemBudget, WS: p.PlanWS, Shape: shape, Cfg: env.Config, Opt: h.opt})
	h.maxBatch = int(h.layout.MaxBatch)

	// §3.2: one epoch of pre-sampling ranks the nodes by accesses
	t2 := time.Now()
	counts, err := h.presample(ctx, env, h.graph.Topology)
	if err != nil {
		return err
	}
	env.PrepareStage("presample_s", time.Since(t2))

	// one block per read: no merging beyond blocks rows share
	if h.feats, err = env.OpenFeaturesWith(storage.BackendUring, func(o *storage.Options) {
		o.MaxMergeBytes, o.QueueDepth = 1, h.opt.ringDepth
	}); err != nil {
		return err
	}
	// the sampled mini-batches in flight are GPU memory in Helios (sampled
	// by GPU kernels): device memory on the Go heap
	inFlight := int64(h.opt.depth) * (ws.BatchBytes + int64(ws.MaxInputs)*8)
	if !h.layout.Feasible {
		env.Warnf("helios: the %d MiB budget cannot hold the topology (%d MiB) next to the process (%d MiB in all) and the reserve: expect an OOM kill", env.MemBudget>>20, h.layout.TopologyBytes>>20, h.layout.HostBytes>>20)
	}
	place, err := Place(counts, h.layout.GPURows, h.layout.CPURows)
	if err != nil {
		return err
	}
	if h.tiers, err = NewTiers(shape.Nodes, place); err != nil {
		return err
	}
	if _, err := budget.Apply(h.memory(place, inFlight, shape)); err != nil {
		return err
	}
	t3 := time.Now()
	if h.gpuRows, err = h.loadTier(ctx, &h.devMem, place.GPU); err != nil {
		return err
	}
	if h.cpuRows, err = h.loadTier(ctx, &h.hostMem, place.CPU); err != nil {
		return err
	}
	env.PrepareStage("fill_cache_s", time.Since(t3))
	for i := 0; i < h.opt.depth; i++ {
		x, err := h.devMem.Float32s(h.maxBatch * h.dim)
		if err != nil {
			return fmt.Errorf("helios: batch buffer: %w", err)
		}
		h.xbufs = append(h.xbufs, x)
	}
	if h.stack, err = NewIOStack(h.feats, h.opt.rings); err != nil {
		return err
	}
	var sctx context.Context
	sctx, h.cancel = context.WithCancel(context.Background())
	h.stack.Start(sctx)
	goLimit := budget.Enter(h.goHeap(place, inFlight, shape))
	env.Logf("helios: GPU tier %d rows (%d MiB), CPU tier %d rows (%d MiB) after the %d MiB topology; the tiers held %.1f%% of the pre-sampled accesses; %d rings of depth %d, pipeline %v (%d preparers, depth %d); Go heap limit %d MiB",
		len(place.GPU), int64(len(place.GPU))*h.rowBytes>>20, len(place.CPU), int64(len(place.CPU))*h.rowBytes>>20, h.layout.TopologyBytes>>20,
		100*h.covered(counts), h.opt.rings, h.opt.ringDepth, h.opt.pipeline, h.opt.preparers, h.opt.depth, goLimit>>20)
	return nil
}

// memory is the plan as the shared preparation applies it (kit.Plan): the
// GPU cache tier, the batch buffers and the sampled mini-batches in
// flight held outside the host budget, the CPU tier's cut in words.
func (h *helios) memory(place Placement, inFlight int64, shape train.DatasetShape) kit.Plan {
	m := kit.Plan{Fits: h.layout.Feasible, Device: []kit.Part{
		{Name: "gpu_cache", Bytes: int64(len(place.GPU)) * h.rowBytes, What: fmt.Sprintf("GPU cache tier (%d rows)", len(place.GPU))},
		{Name: "batch_buffers", Bytes: int64(h.opt.depth) * int64(h.maxBatch) * h.rowBytes, What: fmt.Sprintf("%d batch buffers of %d MiB", h.opt.depth, int64(h.maxBatch)*h.rowBytes>>20)},
		{Name: "in_flight", Bytes: inFlight, What: "their sampled mini-batches"},
	}, Why: "as the GPU memory they occupy in Helios"}
	if h.layout.CPUCut {
		m.Cuts = append(m.Cuts, fmt.Sprintf("the host budget holds a CPU tier of %d MiB of the %d MiB asked for", h.layout.CPURows*h.rowBytes>>20, kit.SizeBytes(h.opt.cpuCache, shape.FeatureBytes())>>20))
	}
	return m
}

// goHeap is the Go heap of the run: the CPU tier, its slot map and the
// rings' staging off the heap, the mini-batches in flight on it.
func (h *helios) goHeap(place Placement, inFlight int64, shape train.DatasetShape) kit.GoHeap {
	return kit.GoHeap{OffHeap: int64(len(place.CPU))*h.rowBytes + 4*shape.Nodes + h.layout.Staging, HeapNeed: h.layout.HeapNeed + inFlight}
}

// covered is the share of the pre-sampled accesses the tiers hold.
func (h *helios) covered(counts []uint32) float64 {
	var covered, total uint64
	for v, c := range counts {
		total += uint64(c)
		if tr, _ := h.tiers.Lookup(int64(v)); tr != None {
			covered += uint64(c)
		}
	}
	return float64(covered) / float64(max(total, 1))
}

func (h *helios) RunEpoch(ctx context.Context, env *train.Env, epoch int, ep *metrics.EpochStats) error {
	st := &stages{h: h, env: env, ep: ep, epoch: epoch, batches: env.EpochBatches(epoch)}
	ep.BatchStarted()
	ps, err := RunPipeline(ctx, PipelineConfig{On: h.opt.pipeline, Preparers: h.opt.preparers, Depth: h.opt.depth}, len(st.batches), st)
	if err != nil {
		return err
	}
	gpu, cpu := st.gpu.Load(), st.cpu.Load()
	// totals of the pipeline's calls; their spans were marked as they ran
	ep.AddTotal(metrics.StageSample, ps.Sample)
	ep.AddTotal(metrics.StageExtract, ps.Hop)
	ep.AddTotal(metrics.StageStall, ps.Stall)
	ep.AddTotal("complete_wait_s", ps.Complete)
	io := h.stack.Stats()
	d := IOStats{
		Submitted: io.Submitted - h.lastIO.Submitted, Completed: io.Completed - h.lastIO.Completed,
		SubmitCalls: io.SubmitCalls - h.lastIO.SubmitCalls, Overlapped: io.Overlapped - h.lastIO.Overlapped,
		CompletedDuringSubmit: io.CompletedDuringSubmit - h.lastIO.CompletedDuringSubmit,
		SubmitTime:            io.SubmitTime - h.lastIO.SubmitTime, CompleteTime: io.CompleteTime - h.lastIO.CompleteTime,
	}
	h.lastIO = io
	ep.AddTotal("io_complete_s", d.CompleteTime)
	for k, v := range map[string]int64{
		"gpu_cache_hits":             gpu,
		"cpu_cache_hits":             cpu,
		"storage_reads":              d.Completed,
		"io_submits":                 d.SubmitCalls,
		"io_submits_overlapped":      d.Overlapped,
		"io_completed_during_submit": d.CompletedDuringSubmit,
		"pipeline_hops":              ps.Hops,
		"pipeline_early_hops":        ps.EarlyHops,
		"pipeline_ahead_max":         int64(ps.Ahead),
		"pipeline_stall_ms":          ps.Stall.Milliseconds(),
		"x_overflow":                 st.spills.Load(),
	} {
		ep.Count(k, v)
	}
	return nil
}

func (h *helios) Close() error {
	var c kit.Closer
	c.Close(h.stack)
	if h.cancel != nil {
		h.cancel()
	}
	c.Close(h.feats, h.graph)
	h.gpuRows, h.cpuRows, h.xbufs, h.tiers = nil, nil, nil, nil
	c.Add(h.devMem.Free(), h.hostMem.Free())
	runtime.GC()
	return c.Err(Name)
}
