package pygplus

// "pyg+": PyTorch Geometric extended to disk-based training over a
// memory-mapped graph, the baseline of Ginex §2.2–2.3 and §5.1 ("PyG+") and
// of GNNDrive §3 and §5. Implemented here:
//
//   - Topology and features are memory-mapped with readahead disabled
//     (Ginex §5.1: "we disable the readahead feature"); indptr is in memory.
//     All caching is the OS page cache, which the run's memory cgroup limits
//     (so topology and feature pages compete, GNNDrive §3 "memory
//     contention").
//   - A pool of sampling workers feeds a queue (Ginex §2.2, Fig. 3: "spawn
//     multiple sub-processes ... puts the result into a shared queue"),
//     dispatching at most prefetch × workers batches ahead, like PyTorch's
//     DataLoader; the main loop takes batches in order.
//   - Gather copies the batch's feature rows out of the mapping, page
//     faults and all (Ginex §2.2 "the main process ... executes the
//     remaining jobs, i.e. gather, transfer, and compute"). It overlaps
//     with training (Ginex §5.1: "for all schemes, we overlap the CUDA
//     operations (transfer, compute) on GPU with the CPU operations"): as
//     the artifact's baseline does with a gather thread and a queue of one,
//     the gather of batch i+1 runs while batch i trains, into the second of
//     two batch inputs (gather_thread.go). Option overlap=false gathers on
//     the trainer's critical path instead.
//   - The gather uses more I/O threads than twice the core count (Ginex §5.1,
//     GNNDrive §5): option io_threads, default 4 × cores.
//
// Stages: sample_s (workers' time in Sample), extract_s (gather), train_s,
// stall_s (the trainer waiting for a gathered batch, and, with
// overlap=false, the gather it does itself: the time compute is stalled by
// data preparation, Ginex Fig. 14).
// Busy and wait (DESIGN §5): the sampling workers over their lifetime; the
// gather threads over each gather, their CPU time busy and the rest (page
// faults waiting for the disk, waiting for a core) wait.
// Device reads: the gather threads' and samplers' page faults, measured
// per thread (feature_bytes_read, topology_bytes_read, exact).
// Tiers (option pagecache_stats, default on): "cpu" = page cache, "device"
// = rows whose copy read from the device, checked one by one for the rows
// Mincore found not resident when the gather started (rows_from_device;
// a row evicted between that check and its copy counts as a hit).

import (
	"context"
	"time"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

type pygPlus struct {
	kit.Base
	opt  options
	plan plan

	topo      sample.Topology
	closeTopo func() error
	sampler   *sample.Sampler
	feats     *osutil.Mapping
	rowBytes  int64
	dim       int
	xs        [2]nn.Tensor // batch inputs: one trained, one gathered (gather_thread.go)
	resident  []byte       // Mincore vector of the feature mapping
	check     []bool       // rows of the batch not resident before the gather
	mem       kit.OffHeap
}

func (p *pygPlus) Prepare(ctx context.Context, env *train.Env) error {
	budget := kit.NewBudget(env)
	t0 := time.Now()
	topo, closeTopo, err := env.Topology("mmap")
	if err != nil {
		return err
	}
	p.topo, p.closeTopo = topo, closeTopo
	env.PrepareStage("map_s", time.Since(t0))
	if kit.ModelMemOutside(env) {
		// PyG+ sizes nothing from the budget; profiling only measures the
		// model step held outside it (model_mem.go).
		t1 := time.Now()
		if _, err := budget.Profile(ctx, topo, 8); err != nil {
			return err
		}
		env.PrepareStage("profile_s", time.Since(t1))
	}
	p.plan = size(kit.SizingOf(env, budget.Workspace(), p.opt, kit.NoProfile{}))
	if kit.ModelMemOutside(env) && !p.plan.feasible {
		env.Warnf("pyg+: the memory budget (%d MiB) cannot hold the process's base, one mini-batch and its gathered input (%d MiB): expect an OOM kill", env.MemBudget>>20, p.plan.need>>20)
	}
	if _, err := budget.Apply(p.plan.memory()); err != nil {
		return err
	}
	t0 = time.Now()
	if p.sampler, err = env.NewSampler(topo); err != nil {
		return err
	}
	if p.feats, err = osutil.MapFile(env.FeaturesPath()); err != nil {
		return err
	}
	p.rowBytes = env.Dataset.RowBytes()
	p.dim = env.Dataset.Meta.FeatureDim
	// The gathered batch input, sized for the largest batch possible with
	// these fanouts (Resize falls back to the heap beyond it).
	for i := range p.plan.inputs {
		if xd, err := p.mem.Float32s(int(p.plan.xRows) * p.dim); err == nil {
			p.xs[i].Data = xd[:0]
		}
	}
	env.PrepareStage("map_s", time.Since(t0))
	if p.opt.pcStats && len(p.feats.Data) > 0 {
		p.resident = make([]byte, (len(p.feats.Data)+pageSize-1)/pageSize)
	}
	// Every gather thread and sampling worker can wait on a page fault at
	// once: the depth of the faults in the I/O floor (DESIGN §11).
	env.Reads.SetFaultThreads(p.opt.gatherThreads() + p.opt.workers)
	env.Logf("pyg+: indices and features memory-mapped (MADV_RANDOM); %d sampling workers, prefetch %d, %d gather threads, gather overlapped with training: %v; memory limit %d MiB (page cache only)",
		p.opt.workers, p.opt.prefetch, p.opt.gatherThreads(), p.opt.overlap, env.MemBudget>>20)
	return nil
}

var pageSize = osutil.PageSize()

func (p *pygPlus) RunEpoch(ctx context.Context, env *train.Env, epoch int, ep *metrics.EpochStats) error {
	// The batch inputs' pages go back at the end of the epoch, so that
	// evaluation does not hold them next to its own.
	defer p.mem.Drop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := env.EpochBatches(epoch)
	ep.BatchStarted()
	pool := kit.StartSamplers(ctx, p.sampler, epoch, batches, 0, p.opt.workers, p.opt.prefetch*p.opt.workers, p.opt.prefetch*p.opt.workers, ep)
	var err error
	switch {
	case p.opt.sampleOnly:
		err = kit.DrainSamples(ctx, pool, len(batches))
	case p.opt.overlap:
		err = p.trainOverlapped(ctx, cancel, env, ep, pool, len(batches))
	default:
		err = p.trainInline(ctx, env, ep, pool, len(batches))
	}
	cancel()
	if serr := pool.Stop(); err == nil {
		err = serr
	}
	return err
}

// trainInline is the loop without the gather thread: wait for batch i,
// gather it, train it.
func (p *pygPlus) trainInline(ctx context.Context, env *train.Env, ep *metrics.EpochStats, pool *kit.SamplerPool, n int) error {
	next := pool.InOrder(ctx)
	x := &p.xs[0]
	for i := 0; i < n; i++ {
		t0 := time.Now()
		mb, err := next(i)
		if err != nil {
			return err
		}
		pool.Release()
		wait := time.Since(t0)
		// Gather on the critical path: page faults on the mapping.
		t1 := time.Now()
		err = p.gather(env, ep, mb, x)
		gather := time.Since(t1)
		ep.Add(metrics.StageExtract, gather)
		ep.Add(metrics.StageStall, wait+gather)
		if err != nil {
			return err
		}
		if _, err := env.TrainStep(ep, mb, x); err != nil {
			return err
		}
	}
	return nil
}

// gather fills x with the rows of mb.InputNodes from the mapping and
// accounts them: the gather threads' device reads go to the run's read
// account, their CPU and other time to the extract workers, and with
// pagecache_stats the rows to the "cpu" (page cache) and "device" tiers.
func (p *pygPlus) gather(env *train.Env, ep *metrics.EpochStats, mb *graph.MiniBatch, x *nn.Tensor) error {
	ids := mb.InputNodes
	n := int64(len(ids))
	x.Resize(len(ids), p.dim)
	// The residency check is extract work on this goroutine; the gather
	// threads are measured inside GatherMapped.
	w := ep.StartWorker(metrics.WorkExtract)
	var check []bool
	if p.resident != nil {
		// Page-cache residency before the gather: only rows with a page
		// missing can come from the device, and are checked one by one.
		if err := osutil.Mincore(p.feats.Data, p.resident); err == nil {
			p.check = p.check[:0]
			for _, v := range ids {
				first := v * p.rowBytes / int64(pageSize)
				last := (v*p.rowBytes + p.rowBytes - 1) / int64(pageSize)
				miss := false
				for pg := first; pg <= last; pg++ {
					if p.resident[pg]&1 == 0 {
						miss = true
						break
					}
				}
				p.check = append(p.check, miss)
			}
			check = p.check
		}
	}
	w.Stop()
	g, err := kit.GatherMapped(p.feats, p.rowBytes, ids, osutil.Bytes(x.Data[:len(ids)*p.dim]), p.opt.gatherThreads(), check)
	if err != nil {
		return err
	}
	env.Reads.Add(metrics.FileFeatures, g.DeviceBytes, g.DeviceRows)
	env.Reads.AddFaults(g.Mapped())
	// The mapped gather is this variant's storage layer: the rows it
	// delivered from the device are the ones whose copy read (DESIGN §5).
	env.Reads.AddDelivered(metrics.FileFeatures, g.DeviceRows)
	ep.AddWorkerTime(metrics.WorkExtract, g.Busy, g.Wait)
	if check != nil {
		ep.Lookup(n, p.rowBytes, 0, metrics.TierRows{Tier: metrics.TierCPU, Rows: n - g.DeviceRows})
	} else {
		ep.AddBytesNeeded(n * p.rowBytes)
	}
	return nil
}

func (p *pygPlus) Close() error {
	var c kit.Closer
	c.Close(p.feats)
	p.xs = [2]nn.Tensor{}
	c.Add(p.mem.Free())
	c.Func(p.closeTopo)
	return c.Err(Name)
}
