package alipg

// Ali+PG's run (Ginex §5.1): PyG+'s pipeline — the topology and the
// features memory-mapped with readahead off, sampling workers feeding a
// queue, a gather thread one batch ahead of training ("for all schemes, we
// overlap the CUDA operations (transfer, compute) on GPU with the CPU
// operations"), io_threads page faults in flight — with the neighbour
// cache in front of the indices mapping (neighbor_cache.go) and the
// feature cache in front of the features mapping (feature_cache.go).

import (
	"context"
	"fmt"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

type aliPG struct {
	kit.Base
	opt  options
	plan plan

	closeTopo func() error
	src       *cachedIndices
	sampler   *sample.Sampler
	feats     *osutil.Mapping
	fc        *featureCache
	rowBytes  int64
	dim       int
	xs        [2]nn.Tensor
	fcHits    int64 // this epoch's feature-cache hits (the gather goroutine's)

	missAt, missIDs []int64
	resident        []byte
	check           []bool
	mem             kit.OffHeap // the feature cache's rows
	inputs          kit.OffHeap // the two batch inputs, dropped after each epoch
}

func (a *aliPG) Prepare(ctx context.Context, env *train.Env) error {
	t0 := time.Now()
	topo, closeTopo, err := env.Topology("mmap")
	if err != nil {
		return err
	}
	a.closeTopo = closeTopo
	env.PrepareStage("map_s", time.Since(t0))
	budget := kit.NewBudget(env)
	ws, err := budget.ProfileStage(ctx, time.Now(), topo, a.opt.profile)
	if err != nil {
		return err
	}
	var least int64
	a.plan, least = kit.Size(size, kit.SizingOf(env, ws, a.opt, kit.NoProfile{}))
	if _, err := budget.Apply(a.plan.memory(env.MemBudget, least)); err != nil {
		return err
	}
	env.Logf("ali+pg: memory plan: %d MiB for PyG+'s pipeline (base %d MiB, %d sampled batches of up to %d MiB, two batch inputs of %d MiB), %d MiB kept as page cache for the mappings, %d MiB to the caches",
		a.plan.need>>20, ws.BaseBytes>>20, a.plan.heldBatches, ws.BatchBytes>>20, a.plan.inputs/2>>20, a.plan.pageCache>>20, a.plan.available>>20)
	a.rowBytes, a.dim = env.Dataset.RowBytes(), env.Dataset.Meta.FeatureDim
	if a.feats, err = osutil.MapFile(env.FeaturesPath()); err != nil {
		return err
	}
	t0 = time.Now()
	if err := a.buildCaches(env, topo); err != nil {
		return err
	}
	env.PrepareStage("build_caches_s", time.Since(t0))
	topo.Indices = a.src
	if a.sampler, err = env.NewSampler(topo); err != nil {
		return err
	}
	// The gathered batch inputs, off the Go heap and reserved for the
	// largest batch these fanouts allow (Resize falls back to the heap
	// beyond it); only the rows a batch fills are touched, as the plan
	// counts them.
	for i := range a.xs {
		xd, err := a.inputs.Float32s(int(a.plan.xRows) * a.dim)
		if err != nil {
			return fmt.Errorf("ali+pg: batch input: %w", err)
		}
		a.xs[i].Data = xd[:0]
	}
	if len(a.feats.Data) > 0 {
		a.resident = make([]byte, (len(a.feats.Data)+pageSize-1)/pageSize)
	}
	// Every gather thread and sampling worker can wait on a page fault at
	// once: the depth of the faults in the I/O floor (DESIGN §11).
	env.Reads.SetFaultThreads(a.opt.ioThreads + a.opt.workers)
	env.Logf("ali+pg: indices and features memory-mapped (MADV_RANDOM); %d MiB available to the caches split %d:%d: neighbour cache %d MiB (%d lists), feature cache %d rows of the highest out-degree; %d sampling workers, %d gather threads",
		a.plan.available>>20, a.opt.ncPercent(), 100-a.opt.ncPercent(), a.plan.ncBytes>>20, a.cachedLists(), a.plan.fcRows, a.opt.workers, a.opt.ioThreads)
	return nil
}

var pageSize = osutil.PageSize()

// buildCaches computes the out-degrees in one pass over the indices and
// builds both caches from them, then drops the pages the pass and the
// fill brought into the page cache, so the epochs start cold.
func (a *aliPG) buildCaches(env *train.Env, topo sample.Topology) error {
	mem, ok := topo.Indices.(sample.InMemory)
	if !ok {
		return fmt.Errorf("ali+pg: the indices mapping is not addressable")
	}
	a.src = &cachedIndices{indptr: topo.Indptr, mapped: mem.All()}
	if m, ok := topo.Indices.(sample.Metered); ok {
		a.src.account, a.src.kind = m.ReadAccount()
	}
	if a.plan.available <= 0 {
		return nil
	}
	outDeg, err := outDegrees(topo.NumNodes(), mem.All())
	if err != nil {
		return err
	}
	if a.src.nc, err = buildNeighborCache(topo.Indptr, outDeg, mem.All(), a.plan.ncBytes); err != nil {
		return fmt.Errorf("ali+pg: neighbour cache: %w", err)
	}
	if err := osutil.DropMapped(osutil.Bytes(mem.All()), env.Dataset.Path(dataset.IndicesFile)); err != nil {
		env.Warnf("ali+pg: %v", err)
	}
	if a.plan.fcRows > 0 {
		rows, err := a.mem.Bytes(int(a.plan.fcRows * a.rowBytes))
		if err != nil {
			return fmt.Errorf("ali+pg: feature cache rows: %w", err)
		}
		if a.fc, _, err = buildFeatureCache(outDeg, a.plan.fcRows, a.feats, a.rowBytes, rows, a.opt.ioThreads); err != nil {
			return err
		}
		if err := osutil.DropMapped(a.feats.Data, env.FeaturesPath()); err != nil {
			env.Warnf("ali+pg: %v", err)
		}
	}
	return nil
}

func (a *aliPG) cachedLists() int {
	if a.src == nil || a.src.nc == nil {
		return 0
	}
	return a.src.nc.Cached()
}

func (a *aliPG) RunEpoch(ctx context.Context, env *train.Env, epoch int, ep *metrics.EpochStats) error {
	// The batch inputs' pages go back at the end of the epoch, so that
	// evaluation does not hold them next to its own.
	defer a.inputs.Drop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := env.EpochBatches(epoch)
	lists0, hits0 := a.src.lists.Load(), a.src.hits.Load()
	a.fcHits = 0
	ep.BatchStarted()
	pool := kit.StartSamplers(ctx, a.sampler, epoch, batches, 0, a.opt.workers, a.opt.prefetch*a.opt.workers, a.opt.prefetch*a.opt.workers, ep)
	var err error
	if a.opt.sampleOnly {
		err = kit.DrainSamples(ctx, pool, len(batches))
	} else {
		err = kit.TrainGatheredAhead(ctx, cancel, env, ep, pool, len(batches), a.xs[:], func(mb *graph.MiniBatch, x *nn.Tensor) error {
			return a.gather(env, ep, mb, x)
		})
	}
	cancel()
	if serr := pool.Stop(); err == nil {
		err = serr
	}
	ep.Count("neighbor_lists", a.src.lists.Load()-lists0)
	ep.Count("neighbor_cache_hits", a.src.hits.Load()-hits0)
	ep.Count("feature_cache_hits", a.fcHits)
	return err
}

// gather fills x with mb's input rows: hits copied from the feature cache,
// misses faulted from the mapping by the gather threads (rows whose pages
// were not resident before, Mincore, checked one by one for the device
// tier, as PyG+).
func (a *aliPG) gather(env *train.Env, ep *metrics.EpochStats, mb *graph.MiniBatch, x *nn.Tensor) error {
	ids := mb.InputNodes
	n := int64(len(ids))
	x.Resize(len(ids), a.dim)
	dst := osutil.Bytes(x.Data[:len(ids)*a.dim])
	w := ep.StartWorker(metrics.WorkExtract)
	a.missAt, a.missIDs = a.fc.split(ids, dst, a.missAt, a.missIDs)
	hits := n - int64(len(a.missIDs))
	a.fcHits += hits
	var check []bool
	if a.resident != nil && len(a.missIDs) > 0 {
		if err := osutil.Mincore(a.feats.Data, a.resident); err == nil {
			a.check = a.check[:0]
			for _, v := range a.missIDs {
				a.check = append(a.check, !a.residentRow(v))
			}
			check = a.check
		}
	}
	w.Stop()
	g, err := kit.GatherMapped(a.feats, a.rowBytes, a.missIDs, dst, a.opt.ioThreads, check)
	if err != nil {
		return err
	}
	w = ep.StartWorker(metrics.WorkExtract)
	scatterMisses(dst, a.missAt, a.rowBytes)
	w.Stop()
	env.Reads.Add(metrics.FileFeatures, g.DeviceBytes, g.DeviceRows)
	env.Reads.AddFaults(g.Mapped())
	env.Reads.AddDelivered(metrics.FileFeatures, g.DeviceRows)
	ep.AddWorkerTime(metrics.WorkExtract, g.Busy, g.Wait)
	if check != nil || len(a.missIDs) == 0 {
		ep.Lookup(n, a.rowBytes, 0, metrics.TierRows{Tier: metrics.TierCPU, Rows: n - g.DeviceRows})
	} else {
		ep.AddBytesNeeded(n * a.rowBytes)
	}
	return nil
}

// residentRow is whether every page of row v was resident at the last
// Mincore.
func (a *aliPG) residentRow(v int64) bool {
	first := v * a.rowBytes / int64(pageSize)
	last := (v*a.rowBytes + a.rowBytes - 1) / int64(pageSize)
	for pg := first; pg <= last; pg++ {
		if a.resident[pg]&1 == 0 {
			return false
		}
	}
	return true
}

func (a *aliPG) Close() error {
	var c kit.Closer
	c.Close(a.feats)
	a.fc, a.xs = nil, [2]nn.Tensor{}
	c.Add(a.mem.Free())
	c.Add(a.inputs.Free())
	c.Func(a.closeTopo)
	return c.Err(Name)
}
