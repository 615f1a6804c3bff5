package helios

// "helios": Helios (Sun et al., "Helios: An Efficient Out-of-core GNN
// Training System on Terabyte-scale Graphs with In-memory Performance").
// Implemented:
//
//   - §3.1 (submit_complete.go): the asynchronous disk I/O stack: batch
//     preparers submit one read per uncached feature row over several
//     rings, and one completion goroutine per ring reaps them; a batch's
//     reads complete independently of other batches'.
//   - §3.2 (static_cache.go, sizing.go): the heterogeneous static cache:
//     before training, one epoch of pre-sampling counts each node's
//     accesses; the hottest rows fill the GPU tier (gpu_cache), the next
//     hottest the CPU tier, which is the host memory left after the whole
//     topology (kept in memory) and the process's own needs.
//   - §3.3 (pipeline.go): the deep pipeline: each hop's new nodes are
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
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

// Name is the registered name of the Helios variant.
const Name = "helios"

type helios struct {
	kit.Base
	cfg train.Config
	opt options

	topo      sample.Topology
	closeTopo func() error
	samplers  []*sample.Sampler
	feats     *storage.File
	stack     *IOStack
	tiers     *Tiers
	gpuRows   []float32
	cpuRows   []float32
	xbufs     [][]float32
	maxBatch  int
	dim       int
	rowBytes  int64
	layout    Layout
	hostMem   kit.OffHeap
	devMem    kit.OffHeap
	cancel    context.CancelFunc
	lastIO    IOStats
}

// presampleSalt separates the pre-sampling epoch's random choices from the
// training epochs'.
const presampleSalt = 0x4e6c1f

func (h *helios) Prepare(ctx context.Context, env *train.Env) error {
	shape := train.ShapeOf(env.Dataset.Meta)
	h.dim, h.rowBytes = shape.FeatureDim, shape.RowBytes()
	t0 := time.Now()
	topo, closeTopo, err := env.Topology("memory") // §3.2: the whole topology in the CPU cache
	if err != nil {
		return err
	}
	h.topo, h.closeTopo = topo, closeTopo
	proto, err := env.NewSampler(topo)
	if err != nil {
		return err
	}
	h.samplers = []*sample.Sampler{proto}
	for len(h.samplers) < h.opt.preparers {
		h.samplers = append(h.samplers, proto.Clone())
	}
	env.PrepareStage("load_topology_s", time.Since(t0))

	budget := kit.NewBudget(env)
	ws, err := budget.ProfileStage(ctx, time.Now(), topo, h.opt.profile)
	if err != nil {
		return err
	}
	// the plan counts the indices itself; the profile's base holds them
	planWS := ws
	planWS.BaseBytes = max(0, ws.BaseBytes-shape.IndicesBytes())
	h.opt.device = budget.Device() // gpu_cache auto: the device budget (DESIGN §2 "One memory contract")
	h.layout = Plan(env.MemBudget, planWS, shape, h.opt)
	h.maxBatch = int(h.layout.MaxBatch)

	// §3.2: one epoch of pre-sampling ranks the nodes by accesses
	t2 := time.Now()
	counts, err := h.presample(ctx, env, topo)
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
	if h.layout.CPUCut {
		env.Deviate("the host budget holds a CPU tier of %d MiB of the %d MiB asked for", h.layout.CPURows*h.rowBytes>>20, kit.SizeBytes(h.opt.cpuCache, shape.FeatureBytes())>>20)
	}
	place, err := Place(counts, h.layout.GPURows, h.layout.CPURows)
	if err != nil {
		return err
	}
	if h.tiers, err = NewTiers(shape.Nodes, place); err != nil {
		return err
	}
	xBytes := int64(h.opt.depth) * int64(h.maxBatch) * h.rowBytes
	gpuBytes := int64(len(place.GPU)) * h.rowBytes
	if err := budget.HoldOutside(map[string]int64{"gpu_cache": gpuBytes, "batch_buffers": xBytes, "in_flight": inFlight}); err != nil {
		return err
	}
	if env.MemBudget > 0 {
		env.Deviate("device memory held outside the %d MiB host budget: GPU cache tier %d MiB (%d rows), %d batch buffers of %d MiB and their sampled mini-batches (%d MiB), model step %d MiB",
			env.MemBudget>>20, gpuBytes>>20, len(place.GPU), h.opt.depth, int64(h.maxBatch)*h.rowBytes>>20, inFlight>>20, ws.DeviceBytes>>20)
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
	goLimit := budget.LimitGo(int64(len(place.CPU))*h.rowBytes+4*shape.Nodes+h.layout.Staging, 0, h.layout.HeapNeed+inFlight)
	var covered uint64
	var total uint64
	for v, c := range counts {
		total += uint64(c)
		if tr, _ := h.tiers.Lookup(int64(v)); tr != None {
			covered += uint64(c)
		}
	}
	env.Logf("helios: GPU tier %d rows (%d MiB), CPU tier %d rows (%d MiB) after the %d MiB topology; the tiers held %.1f%% of the pre-sampled accesses; %d rings of depth %d, pipeline %v (%d preparers, depth %d); Go heap limit %d MiB",
		len(place.GPU), gpuBytes>>20, len(place.CPU), int64(len(place.CPU))*h.rowBytes>>20, h.layout.TopologyBytes>>20,
		100*float64(covered)/float64(max(total, 1)), h.opt.rings, h.opt.ringDepth, h.opt.pipeline, h.opt.preparers, h.opt.depth, goLimit>>20)
	return nil
}

// presample samples one epoch (with its own seed) and counts every node's
// accesses.
func (h *helios) presample(ctx context.Context, env *train.Env, topo sample.Topology) ([]uint32, error) {
	seed := env.Config.Seed ^ presampleSalt
	proto, err := sample.New(topo, env.Config.Fanout, seed)
	if err != nil {
		return nil, err
	}
	batches := sample.EpochBatches(env.Train, env.Config.Batch, seed, 0)
	counts := make([]uint32, env.Dataset.Nodes())
	var mu sync.Mutex
	var next atomic.Int64
	workers := min(h.opt.preparers, len(batches))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		s := proto
		if w > 0 {
			s = proto.Clone()
		}
		wg.Add(1)
		go func(w int, s *sample.Sampler) {
			defer wg.Done()
			var mb graph.MiniBatch
			for {
				i := int(next.Add(1) - 1)
				if i >= len(batches) || ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				if err := s.SampleInto(&mb, 0, i, batches[i]); err != nil {
					errs[w] = err
					return
				}
				mu.Lock()
				CountAccesses(counts, mb.InputNodes)
				mu.Unlock()
			}
		}(w, s)
	}
	wg.Wait()
	return counts, errors.Join(errs...)
}

// loadTier reads the rows of nodes (in tier order) into memory from mem.
func (h *helios) loadTier(ctx context.Context, mem *kit.OffHeap, nodes []int64) ([]float32, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	rows, err := mem.Float32s(len(nodes) * h.dim)
	if err != nil {
		return nil, fmt.Errorf("helios: cache tier: %w", err)
	}
	// read in file order, place in tier order
	order := make([]int32, len(nodes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch {
		case nodes[a] < nodes[b]:
			return -1
		case nodes[a] > nodes[b]:
			return 1
		}
		return 0
	})
	r, err := h.feats.NewReader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	const chunk = 4096
	ids := make([]int64, 0, chunk)
	buf := make([]float32, chunk*h.dim)
	for lo := 0; lo < len(order); lo += chunk {
		hi := min(lo+chunk, len(order))
		ids = ids[:0]
		for _, i := range order[lo:hi] {
			ids = append(ids, nodes[i])
		}
		if err := r.ReadRows(ctx, ids, osutil.Bytes(buf[:len(ids)*h.dim])); err != nil {
			return nil, fmt.Errorf("helios: fill the cache: %w", err)
		}
		for k, i := range order[lo:hi] {
			copy(rows[int(i)*h.dim:(int(i)+1)*h.dim], buf[k*h.dim:(k+1)*h.dim])
		}
	}
	return rows, nil
}

// batchState is one batch's buffers and I/O.
type batchState struct {
	sw      metrics.Worker // the preparer as a sample worker
	x       []float32
	job     *Job
	reqs    []storage.Request
	gpu     int64 // rows from the GPU tier
	cpu     int64 // rows from the CPU tier
	read    int64 // rows read from storage
	spill   []float32
	oldJob  *Job // the job whose reads target x when the batch spilled
	oldRows int  // rows of x already placed when it spilled
}

// stages runs one epoch's batches through the pipeline.
type stages struct {
	h       *helios
	env     *train.Env
	ep      *metrics.EpochStats
	epoch   int
	batches [][]int64
	x       nn.Tensor
	gpu     atomic.Int64
	cpu     atomic.Int64
	read    atomic.Int64
	spills  atomic.Int64
}

func (s *stages) Begin(b *Batch) error {
	b.Job = &batchState{x: s.h.xbufs[b.Slot], job: s.h.stack.NewJob()}
	return nil
}

// Sample samples b on preparer w; the preparer is a sample worker while
// it samples and an extract worker while its hop callbacks look up and
// submit (Hop).
func (s *stages) Sample(w int, b *Batch, onHop sample.HopFunc) error {
	st := b.Job.(*batchState)
	hop := onHop
	if onHop != nil {
		hop = func(h, first int, nodes []int64) error {
			st.sw.Stop()
			err := onHop(h, first, nodes)
			st.sw = s.ep.StartWorker(metrics.WorkSample)
			return err
		}
	}
	st.sw = s.ep.StartWorker(metrics.WorkSample)
	t0 := time.Now()
	err := s.h.samplers[w].SampleHops(&b.MB, s.epoch, b.Index, s.batches[b.Index], hop)
	s.ep.Span(metrics.StageSample, t0, time.Now()) // its seconds: AddTotal in RunEpoch
	st.sw.Stop()
	return err
}

// Hop looks each new node up in the GPU and CPU tiers and submits one
// read per remaining row into the batch buffer.
func (s *stages) Hop(b *Batch, hop, first int, nodes []int64) error {
	st := b.Job.(*batchState)
	h := s.h
	w := s.ep.StartWorker(metrics.WorkExtract)
	defer w.Stop()
	t0 := time.Now()
	defer func() { s.ep.Span(metrics.StageExtract, t0, time.Now()) }()
	dim := h.dim
	if need := (first + len(nodes)) * dim; need > len(st.x) {
		s.spill(st, first, need)
	}
	st.reqs = st.reqs[:0]
	for i, v := range nodes {
		dst := st.x[(first+i)*dim : (first+i+1)*dim]
		switch tr, row := h.tiers.Lookup(v); tr {
		case GPU:
			copy(dst, h.gpuRows[row*dim:(row+1)*dim])
			st.gpu++
		case CPU:
			copy(dst, h.cpuRows[row*dim:(row+1)*dim])
			st.cpu++
		default:
			st.reqs = append(st.reqs, h.feats.RowRequest(v, osutil.Bytes(dst), 0))
			st.read++
		}
	}
	return h.stack.Submit(st.job, st.reqs)
}

// spill moves a batch that outgrew its buffer to a heap buffer: the rows
// placed so far are copied over once their reads completed (Complete).
func (s *stages) spill(st *batchState, first, need int) {
	s.spills.Add(1)
	nx := make([]float32, max(need, 2*len(st.x)))
	if st.oldJob == nil {
		st.oldJob, st.oldRows = st.job, first
		s.h.stack.Seal(st.job)
		st.job = s.h.stack.NewJob()
		st.spill = st.x
	} else {
		// spilled before: the previous heap buffer's rows are all local
		// copies or reads of the current job; wait for them here.
		s.h.stack.Seal(st.job)
		_ = s.h.stack.Wait(context.Background(), st.job)
		copy(nx, st.x[:first*s.h.dim])
		st.job = s.h.stack.NewJob()
	}
	st.x = nx
}

func (s *stages) Complete(ctx context.Context, b *Batch) error {
	st := b.Job.(*batchState)
	t0 := time.Now()
	defer func() { s.ep.Span(metrics.StageExtract, t0, time.Now()) }() // waiting for the batch's reads is loading it
	s.h.stack.Seal(st.job)
	if err := s.h.stack.Wait(ctx, st.job); err != nil {
		return err
	}
	if st.oldJob != nil {
		if err := s.h.stack.Wait(ctx, st.oldJob); err != nil {
			return err
		}
		copy(st.x, st.spill[:st.oldRows*s.h.dim])
	}
	return nil
}

func (s *stages) Train(b *Batch) error {
	st := b.Job.(*batchState)
	n := len(b.MB.InputNodes)
	s.x.Data, s.x.Rows, s.x.Cols = st.x[:n*s.h.dim], n, s.h.dim
	_, err := s.env.TrainStep(s.ep, &b.MB, &s.x)
	return err
}

// End waits until no read of the batch is in flight, so its buffer can be
// reused, and adds its tier counts.
func (s *stages) End(b *Batch) {
	st, ok := b.Job.(*batchState)
	if !ok {
		return
	}
	for _, j := range []*Job{st.job, st.oldJob} {
		if j == nil {
			continue
		}
		select {
		case <-j.Done():
		default:
			s.h.stack.Seal(j)
			_ = s.h.stack.Wait(context.Background(), j)
		}
	}
	s.gpu.Add(st.gpu)
	s.cpu.Add(st.cpu)
	s.read.Add(st.read)
	// DESIGN §5: the batch's lookups once, GPU tier first
	s.ep.Lookup(st.gpu+st.cpu+st.read, s.h.rowBytes, 0,
		metrics.TierRows{Tier: metrics.TierGPU, Rows: st.gpu},
		metrics.TierRows{Tier: metrics.TierCPU, Rows: st.cpu})
	b.Job = nil
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
	c.Close(h.feats)
	c.Func(h.closeTopo)
	h.gpuRows, h.cpuRows, h.xbufs, h.tiers = nil, nil, nil, nil
	c.Add(h.devMem.Free(), h.hostMem.Free())
	runtime.GC()
	return c.Err(Name)
}
