package gnndrive

// "gnndrive": GNNDrive (Reducing Memory Contention and I/O Congestion for
// Disk-based GNN Training, ICPP '24), CPU-training variant. Implemented:
//
//   - §4.1 (Fig. 4): four stages joined by three queues. Samplers (default
//     4) → extracting queue (bound 6) → extractors (default 4) → training
//     queue (bound 4) → trainer → releasing queue → releaser. The queues
//     carry node lists, not feature data.
//   - §4.2: the feature buffer (engine/cache: mapping table {slot,
//     refcount, valid}, reverse mapping, standby LRU list, wait list) with
//     at least N_e × M_b slots reserved against deadlock; asynchronous
//     two-phase extraction per mini-batch by one extractor with its own
//     io_uring ring and direct I/O (extractor.go, Algorithm 1); delayed
//     invalidation on release (releaser.go).
//   - §4.3: mini-batches are trained in the order extraction finishes
//     (reordering); the count of batches trained after a later-numbered one
//     is reported as the counter out_of_order_batches.
//   - §4.4: sampling reads the memory-mapped indices through the page cache
//     (indptr in memory); "CPU-based training": the feature buffer lives in
//     host memory and loads land in it directly, the Reader's aligned
//     buffers acting as the staging buffer (bounded by extractors × ring
//     depth).
//   - Option feature_buffer=device: §4.2's GPU-based layout, in which the
//     feature buffer (and the batch input indexed from it) is GPU memory:
//     both are held outside the host budget (model_mem.go), which keeps
//     the queues, the host staging buffer of N_e × M_b rows that every
//     load passes through (staging_buffer.go) and the page cache of the
//     indices. Training still runs on the CPU.
//   - Sizing (§4.2 and the artifact): the feature buffer holds
//     (training-queue depth + 1) × M_b slots × buffer_factor, capped by the
//     memory budget after the workspace; when the budget cannot hold
//     N_e × M_b, the number of extractors is reduced ("we decide [it] with
//     regard to ... the capacity of available host memory").
//
// Stages: sample_s and extract_s are the samplers' time in Sample and the
// extractors' time per batch, summed; stall_s is the trainer waiting on the
// training queue; index_s is the trainer assembling x from buffer slots
// (x[remap_ids]); release_s the releaser; slot_wait_s extractors waiting
// for a standby slot. Busy and wait (DESIGN §5): samplers and extractors
// over their lifetime in the epoch. Tiers: "cpu" = feature buffer (valid
// hits); rows in flight in another extractor are rows_shared_in_flight;
// "device" = rows read from the SSD. Device reads: features.bin by the
// extractors (direct I/O), indices.bin by the samplers' page faults.

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"outcore/engine/cache"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

type gnnDrive struct {
	kit.Base
	opt  options // as asked
	plan plan    // as sized for the budget (sizing.go)

	topo         sample.Topology
	closeTopo    func() error
	sampler      *sample.Sampler
	feats        *storage.File
	buf          *cache.FeatureBuffer
	exs          []*extractor
	dim          int
	maxBatch     int
	x            nn.Tensor
	lastStats    cache.BufferStats
	lastRequests int64 // features.bin device requests before this epoch
	// releaseEarly: the trainer releases a batch's nodes as soon as its
	// rows were read out of the buffer (early_release.go)
	releaseEarly bool
	mem          kit.OffHeap
}

func (g *gnnDrive) Prepare(ctx context.Context, env *train.Env) error {
	g.dim = env.Dataset.Meta.FeatureDim
	t0 := time.Now()
	topo, closeTopo, err := env.Topology("mmap")
	if err != nil {
		return err
	}
	g.topo, g.closeTopo = topo, closeTopo
	if g.sampler, err = env.NewSampler(topo); err != nil {
		return err
	}
	if err := g.openFeatures(env); err != nil {
		return err
	}
	env.PrepareStage("map_s", time.Since(t0))

	budget := kit.NewBudget(env)
	ws, err := budget.ProfileStage(ctx, time.Now(), topo, g.opt.profile)
	if err != nil {
		return err
	}
	s := kit.SizingOf(env, ws, g.opt, profile{
		run:        true,
		queueDepth: env.Storage.QueueDepth,
		cpus:       runtime.NumCPU(),
		inPlace:    inPlace(env.Shape(), env.Config),
		device:     budget.Device(),
		deviceCap:  true,
	})
	p, least := kit.Size(size, s)
	g.plan, g.maxBatch = p, p.maxBatch
	if g.releaseEarly = releaseEarly(g.opt.release, p.aliasInput); g.releaseEarly {
		env.Deviate("%s", earlyReleaseDeviation)
	}
	if err := g.explain(env, budget, s, p, least); err != nil {
		return err
	}
	rowBytes := env.Dataset.RowBytes()
	rows, err := g.mem.Float32s(int(p.slots) * g.dim)
	if err != nil {
		return fmt.Errorf("gnndrive: feature buffer: %w", err)
	}
	if g.buf, err = cache.NewFeatureBuffer(cache.FeatureBufferConfig{
		Nodes: env.Dataset.Nodes(), Dim: g.dim, Slots: int(p.slots), Extractors: p.extractors, MaxBatch: g.maxBatch, Rows: rows,
	}); err != nil {
		return fmt.Errorf("gnndrive: %w", err)
	}
	if !p.aliasInput {
		if xd, err := g.mem.Float32s(g.maxBatch * g.dim); err == nil {
			g.x.Data = xd[:0]
		}
	}
	var staging []float32
	if p.onDevice {
		// §4.2: the host staging buffer, N_e × M_b rows under the budget
		if staging, err = g.mem.Float32s(p.extractors * g.maxBatch * g.dim); err != nil {
			return fmt.Errorf("gnndrive: staging buffer: %w", err)
		}
	}
	goLimit := budget.Enter(p.goHeap())
	if err := g.startExtractors(p, staging); err != nil {
		return err
	}
	env.Logf("gnndrive: %d samplers, %d extractors (%s, direct=%v), queues %d/%d; M_b %d (profiled max %d, mean %d over %d batches); feature buffer %d slots = %d MiB (%.1f%% of the feature table); Go heap limit %d MiB",
		p.samplers, p.extractors, g.feats.Backend(), g.feats.Direct(), p.extractQ, p.trainQ, g.maxBatch, ws.MaxInputs, ws.MeanInputs, ws.Batches,
		p.slots, (p.slots*rowBytes)>>20, 100*float64(p.slots)/float64(env.Dataset.Nodes()), goLimit>>20)
	return nil
}

// startExtractors gives each of the plan's extractors its reader and,
// with the GPU-based layout, its part of the host staging buffer.
func (g *gnnDrive) startExtractors(p plan, staging []float32) error {
	for i := 0; i < p.extractors; i++ {
		r, err := g.feats.NewReader()
		if err != nil {
			return fmt.Errorf("gnndrive: extractor %d reader: %w", i, err)
		}
		e := &extractor{id: i, r: r, feats: g.feats, buf: g.buf}
		if staging != nil {
			part := g.maxBatch * g.dim
			e.stage = newStagingArea(staging[i*part:(i+1)*part], g.dim)
		}
		g.exs = append(g.exs, e)
	}
	return nil
}

// openFeatures opens features.bin for the extractors, at the read block
// and merging the options ask for, their departures recorded.
func (g *gnnDrive) openFeatures(env *train.Env) error {
	if g.opt.readBlock != artifactReadBlock {
		env.Deviate("read_block=%d: rows are read in %d-byte blocks, not the artifact's 512-byte sectors", g.opt.readBlock, g.opt.readBlock)
	}
	// Read merging (storage's planner): the artifact submits one request
	// per row, as merge=false (the default) does; merge=true merges
	// adjacent rows' sectors into larger requests, outcore's, so it is a
	// deviation recorded only then.
	if g.opt.merge {
		most := env.Storage.MaxMergeBytes
		if most == 0 {
			most = storage.DefaultMaxMergeBytes
		}
		env.Deviate("merge=true: the sector reads of adjacent rows are merged into requests of up to %d KiB (the artifact issues one request per row, as the default merge=false does)", most>>10)
	}
	// extractors read through io_uring; the read granularity
	// (kit/read_block.go) is raised by a device whose logical block is
	// larger (storage's probe)
	var err error
	g.feats, err = env.OpenFeaturesWith(storage.BackendUring, func(o *storage.Options) {
		o.BlockSize = g.opt.readBlock
		o.NoMerge = !g.opt.merge
	})
	return err
}

// explain applies the plan (memory) and warns of what it could not give
// the paper's pipeline.
func (g *gnnDrive) explain(env *train.Env, budget *kit.Budget, s kit.Sizing[options, profile], p plan, least int64) error {
	if !p.aliasInput && g.opt.batchInput == "alias" {
		env.Warnf("gnndrive: batch_input=alias, but the %s model copies its input anyway: the batch input is gathered", env.Config.Model)
	}
	if _, err := budget.Apply(g.memory(env, s, p, least)); err != nil { // the Go limit: goHeap, once the buffers are allocated
		return err
	}
	if p.onDevice || env.MemBudget <= 0 {
		return nil
	}
	ws, rowBytes, mb := budget.Workspace(), env.Dataset.RowBytes(), int64(p.maxBatch)
	env.Logf("gnndrive: budget %d MiB, workspace %d MiB (base %d, model step %d +%d (%d MiB outside the budget), %d mini-batches in flight of %d MiB, batch input %d, reserve %d); feature buffer may use %d MiB, %d MiB leaving the indices (%d MiB) cached",
		env.MemBudget>>20, p.work>>20, ws.BaseBytes>>20, ws.ArenaBytes>>20, ws.StepExtra>>20, ws.DeviceBytes>>20, g.opt.extractQ+g.opt.samplers+g.opt.extractors+g.opt.trainQ+1, p.perBatch>>20, p.xBytes>>20, kit.ReserveBytes(env.MemBudget)>>20, p.availAll*rowBytes>>20, p.availTopo*rowBytes>>20, p.topo>>20)
	if p.topoSqueezed {
		env.Warnf("gnndrive: budget too small to keep the indices cached next to one mini-batch of features")
	}
	if p.extractors < g.opt.extractors {
		env.Warnf("gnndrive: budget holds the N_e × M_b reservation for %d extractor(s) only", p.extractors)
	}
	if p.queuesShortened {
		env.Warnf("gnndrive: queues shortened to %d samplers, extracting %d, training %d for the budget; feature buffer %d MiB", p.samplers, p.extractQ, p.trainQ, p.slots*rowBytes>>20)
	}
	if p.overReserve {
		env.Warnf("gnndrive: one extractor's N_e × M_b reservation (%d MiB) next to the rest (%d MiB, with %d MiB of reserve and the Go heap's collection slack) exceeds the %d MiB budget: the run lives on the reserve and reclaimed page cache and may be OOM-killed (feature_buffer=device keeps the buffer outside the host budget, as GNNDrive's GPU-based layout does)", (int64(p.extractors)*mb*rowBytes)>>20, p.shortWork>>20, kit.ReserveBytes(env.MemBudget)>>20, env.MemBudget>>20)
	}
	return nil
}

// memory is the plan as the shared preparation applies it (kit.Plan):
// the refusal of a plan that does not fit, the device parts of the
// GPU-based layout, and the plan's cuts in words.
func (g *gnnDrive) memory(env *train.Env, s kit.Sizing[options, profile], p plan, least int64) kit.Plan {
	rowBytes, mb := s.Shape.RowBytes(), int64(p.maxBatch)
	m := kit.Plan{Fits: p.feasible, LeastBudget: least}
	if !p.feasible {
		what := "the heap of the shortest pipeline (2 queue slots, one extractor), the batch input and one extractor's N_e × M_b reservation"
		if p.onDevice {
			what = "the heap of the paper's queues with one extractor"
		}
		if p.overReserve {
			// The budget holds the least pipeline but not its feature
			// buffer next to the reserve: the minimum is the least budget
			// whose plan is feasible with this run's profiled workspace
			// (LeastBudget), not p.minNeed (which the budget may well
			// exceed).
			what = "the shortened pipeline's feature buffer, which must hold every extractor's N_e × M_b reservation next to the collector's reserve"
		}
		m.Refusal = fmt.Errorf("%w: gnndrive: the memory budget (%d MiB) is below this variant's minimum on this run (%s, as profiled)",
			train.ErrConfig, env.MemBudget>>20, what)
		return m
	}
	if p.aliasInput {
		why := "batch_input=alias"
		if g.opt.batchInput == "auto" {
			why = "the budget cannot hold the copy next to the paper's pipeline (batch_input=auto)"
		}
		m.Cuts = append(m.Cuts, fmt.Sprintf("the first layer reads the mini-batch's rows through the node alias list in the feature buffer instead of the artifact's x = buffer[aliases] copy (%d MiB at M_b): %s", (mb*rowBytes)>>20, why))
	}
	if p.onDevice {
		m.Device = []kit.Part{
			{Name: "feature_buffer", Bytes: p.slots * rowBytes, What: "feature_buffer=device: the feature buffer"},
			{Name: "batch_input", Bytes: p.xBytes, What: "the indexed batch input"},
		}
		m.Why = fmt.Sprintf("as the GPU memory they occupy in GNNDrive's GPU-based layout (§4.2); loads land in the host staging buffer (%d extractor(s) × M_b rows = %d MiB, in the budget) and are copied to the buffer (the host-to-device transfer, untimed as such)", p.extractors, p.hostStaging>>20)
		if p.slotsCutByDevice {
			m.Cuts = append(m.Cuts, fmt.Sprintf("the device budget (%d MiB) holds a feature buffer of %d slots, fewer than the paper's (training queue + 1) × M_b × buffer_factor = %d (buffer_factor %g)", s.Prof.device>>20, p.slots, p.paperSlots, g.opt.bufferFactor))
		}
		if p.extractors < g.opt.extractors {
			m.Cuts = append(m.Cuts, fmt.Sprintf("the host budget holds the staging of %d extractor(s) (of %d asked) next to the indices", p.extractors, g.opt.extractors))
		}
		return m
	}
	if env.MemBudget <= 0 {
		return m
	}
	if p.slots < p.paperSlots {
		// buffer_factor asks for paperSlots; the budget gives p.slots. Not
		// saying so would show a larger buffer_factor as a run that had it.
		m.Cuts = append(m.Cuts, fmt.Sprintf("the memory budget (%d MiB) holds a feature buffer of %d slots (%d MiB), fewer than the paper's (training queue + 1) × M_b × buffer_factor = %d (buffer_factor %g)",
			env.MemBudget>>20, p.slots, (p.slots*rowBytes)>>20, p.paperSlots, g.opt.bufferFactor))
	}
	if p.topoSqueezed {
		m.Cuts = append(m.Cuts, "the memory budget cannot hold a mini-batch of features next to the page cache of the indices: the topology is squeezed")
	}
	if p.extractors < g.opt.extractors {
		m.Cuts = append(m.Cuts, fmt.Sprintf("the memory budget holds the N_e × M_b reservation for %d extractor(s) (of %d asked)", p.extractors, g.opt.extractors))
	}
	if p.queuesShortened {
		m.Cuts = append(m.Cuts, fmt.Sprintf("the memory budget cannot hold the paper's queues next to one extractor's N_e × M_b reservation: %d samplers, extracting queue %d, training queue %d (of %d, %d, %d)", p.samplers, p.extractQ, p.trainQ, g.opt.samplers, g.opt.extractQ, g.opt.trainQ))
	}
	return m
}

func (g *gnnDrive) RunEpoch(ctx context.Context, env *train.Env, epoch int, ep *metrics.EpochStats) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := env.EpochBatches(epoch)
	ep.BatchStarted()

	fe := &kit.FirstError{Cancel: cancel, OnFail: g.buf.Fail}
	fail := fe.Set
	// A cancelled run must wake extractors blocked in the buffer.
	stopWake := context.AfterFunc(ctx, func() { g.buf.Fail(context.Cause(ctx)) })
	defer stopWake()
	pool := kit.StartSamplers(ctx, g.sampler, epoch, batches, 0, g.plan.samplers, g.plan.extractQ, 0, ep) // ①–②
	if g.opt.sampleOnly {
		// GNNDrive Fig. 2 "-only": the sample stage alone
		return kit.DrainSamples(ctx, pool, len(batches))
	}
	trainQ := make(chan extracted, g.plan.trainQ)
	waitExtractors := runExtractors(ctx, g.exs, pool.Out, trainQ, ep, fail) // ③–⑥
	go func() { waitExtractors(); close(trainQ) }()
	releaseQ := make(chan []int64, len(batches)+1)
	released := runReleaser(g.buf, releaseQ, ep) // ⑧–⑨

	trained, outOfOrder, highest := 0, 0, -1
	for {
		t0 := time.Now()
		item, ok := <-trainQ // ⑦
		ep.Add(metrics.StageStall, time.Since(t0))
		if !ok {
			break
		}
		if fe.Err() != nil {
			releaseQ <- item.mb.InputNodes
			continue
		}
		if item.mb.Index < highest {
			outOfOrder++
		}
		highest = max(highest, item.mb.Index)
		var err error
		released := false
		release := func() { // ⑧
			if !released {
				released = true
				releaseQ <- item.mb.InputNodes
			}
		}
		if g.plan.aliasInput {
			// the first layer reads the rows through the alias list
			xi := nn.Indexed{Base: g.buf.Rows(), Cols: g.dim, Idx: item.x.Aliases}
			if g.releaseEarly {
				xi.Consumed = release // early_release.go
			}
			_, err = env.TrainStepIndexed(ep, item.mb, xi)
		} else {
			t1 := time.Now()
			g.x.Resize(len(item.x.Aliases), g.dim)
			for i, s := range item.x.Aliases {
				copy(g.x.Data[i*g.dim:(i+1)*g.dim], g.buf.Row(s))
			}
			ep.Add("index_s", time.Since(t1))
			if g.releaseEarly {
				release() // early_release.go: x holds the rows now
			}
			_, err = env.TrainStep(ep, item.mb, &g.x)
		}
		release()
		if err != nil {
			fail(err)
			continue
		}
		trained++
	}
	close(releaseQ)
	<-released
	fail(pool.Stop())
	ep.Count("out_of_order_batches", int64(outOfOrder))
	st := g.buf.Stats()
	ep.Add("slot_wait_s", st.SlotWaitTime-g.lastStats.SlotWaitTime)
	ep.Count("buffer_evictions", st.Evictions-g.lastStats.Evictions)
	ep.Count("buffer_shared", st.Shared-g.lastStats.Shared)
	ep.Count("admission_waits", st.AdmitWaits-g.lastStats.AdmitWaits)
	g.lastStats = st
	// device requests of the epoch's feature reads (merged or one per row)
	fs := g.feats.Stats()
	ep.Count("io_requests", fs.Requests-g.lastRequests)
	g.lastRequests = fs.Requests
	if err := fe.Err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if trained != len(batches) {
		return fmt.Errorf("gnndrive: epoch %d trained %d of %d batches", epoch, trained, len(batches))
	}
	// Every reference taken this epoch must have been released.
	if err := g.buf.CheckQuiescent(); err != nil {
		return fmt.Errorf("gnndrive: end of epoch %d: %w", epoch, err)
	}
	return nil
}

func (g *gnnDrive) Close() error {
	var c kit.Closer
	for _, e := range g.exs {
		c.Add(e.r.Close())
	}
	c.Close(g.feats)
	c.Func(g.closeTopo)
	g.buf = nil
	g.x.Data = nil
	c.Add(g.mem.Free())
	runtime.GC()
	return c.Err(Name)
}
