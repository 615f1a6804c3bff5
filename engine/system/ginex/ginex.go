package ginex

// "ginex": Ginex (SSD-enabled Billion-scale GNN Training on a Single Machine
// via Provably Optimal In-memory Caching, VLDB '22). Implemented:
//
//   - §3.1 (Fig. 7–9): the inspector–executor pipeline. Each epoch is cut
//     into superbatches of S iterations. Per superbatch: superbatch sample
//     (all S mini-batches sampled by a pool of workers, their ids and adj
//     written to runtime files on the data disk), changeset precomputation,
//     feature-cache initialisation ("switch") and the main loop
//     (executor.go). The
//     superbatch-level pipeline runs the changeset precomputation of
//     superbatch k (its third pass) while superbatch k+1 is being sampled,
//     as the artifact's inspect() does; passes 1–2 run just before.
//   - §3.2 (Fig. 10, neighbor_cache.go): the static neighbour cache, built offline by the
//     out/in-degree score and sized from the budget, dumped to a file, loaded
//     at the start of every superbatch sample stage and freed after it.
//     Sampling reads uncached neighbour lists with O_DIRECT preads (§4).
//   - §3.3–3.4 (Fig. 11–13): the feature cache with direct addressing,
//     initialised per superbatch from the init file (the first entries in
//     access order), gathered from with O_DIRECT preads for misses, and
//     updated after every gather from that iteration's changeset, which the
//     three-pass O(S) algorithm computed by simulating Belady exactly
//     (engine/cache). While iteration i trains, iteration i+1 is gathered
//     (the artifact's gather thread).
//   - §3.5: cache sizes from the memory budget, by a short offline profiling:
//     neighbour cache = budget − peak of the sample stage − reserve; feature
//     cache = budget − peak of the main loop − reserve. The two caches never
//     coexist (sample stage and main loop alternate). Superbatch size from
//     option superbatch (the artifact's default 1000, capped at an epoch)
//     and the runtime-file storage budget.
//
// Stages: inspect_s (superbatch sample + changeset precomputation, the
// pipelined inspector), switch_s (feature-cache initialisation), gather time
// as extract_s, cache_update_s, train_s, stall_s (the trainer waiting for
// its batch's gather and runtime files); also sample_s (samplers' time in
// Sample), changeset_s (the three passes), neighbor_cache_load_s and
// runfile_io_s (loading runtime files in the main loop). Busy and wait
// (DESIGN §5): the samplers of each superbatch sample; each gather as one
// extract worker. Tiers: "cpu" = feature cache hits on rows already used in
// the epoch, "device" = O_DIRECT reads of misses and the first use of each
// row the switch read into the cache (fresh_slots.go: one device read each,
// DESIGN §5's hit-ratio definition).
// Device reads: features.bin (misses and the switch's cache fill, both in
// rows_from_device), indices.bin and the neighbour cache file (topology);
// runtime files are the rest of bytes_read. Counters: neighbor_lists and
// neighbor_cache_hits (sampling), runfile_bytes (written).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"outcore/engine/cache"
	"outcore/engine/metrics"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

type ginex struct {
	kit.Base
	opt  options // as asked
	plan plan    // as sized for the budget (sizing.go)
	mem  *kit.Budget

	scratch  string // runtime-file directory of this run
	ncPath   string
	indptr   []int64
	nodes    int64
	dim      int
	rowBytes int64
	idxFile  *storage.File
	disk     *sample.StorageIndices
	feats    *storage.File
	featRead storage.Reader
	ncCached int

	staticPath string // policy static: the init file of the static set (policy.go)
	staticRows int
}

// policyDeviations are the departures the feature-cache policy adds.
func (o options) policyDeviations() []string {
	if o.policy != policyStatic {
		return nil
	}
	return []string{"policy=static: PaGraph's static feature cache (highest out-degree nodes) in place of Ginex's Belady cache (Fig. 15's baseline); it is filled again at every superbatch's switch because Ginex's feature and neighbour caches alternate in memory (PaGraph loads it once)"}
}

// featBackend is the features' backend: preads, or io_uring with option
// io_depth (the testbed's emulation of the artifact's I/O threads).
func featBackend(o options) storage.Backend {
	if o.ioDepth > 0 {
		return storage.BackendUring
	}
	return storage.BackendPread
}

func (g *ginex) Prepare(ctx context.Context, env *train.Env) error {
	g.mem = kit.NewBudget(env)
	g.indptr = env.Dataset.Indptr
	g.nodes = env.Dataset.Nodes()
	g.dim = env.Dataset.Meta.FeatureDim
	g.rowBytes = env.Dataset.RowBytes()
	var err error
	if g.scratch, err = env.ScratchDir(); err != nil {
		return err
	}
	// O_DIRECT preads for both the topology and the features (§4), at
	// the artifact's granularity (kit/read_block.go): every missing row
	// is its own pread of the read_block-aligned blocks holding it, shared
	// with no other row; index entries are read in read_block blocks.
	if g.opt.readBlock != artifactReadBlock {
		env.Deviate("read_block=%d: rows and index entries are read in %d-byte blocks, not the artifact's 4 KiB", g.opt.readBlock, g.opt.readBlock)
	}
	threads := g.opt.ioThreads
	if g.opt.ioDepth > 0 {
		threads = g.opt.ioDepth
	}
	preads := func(o *storage.Options) { o.Workers, o.BlockSize = threads, g.opt.readBlock }
	if g.idxFile, err = env.OpenIndicesWith(storage.BackendPread, preads); err != nil {
		return err
	}
	g.disk = sample.NewStorageIndices(g.idxFile)
	if g.feats, err = env.OpenFeaturesWith(featBackend(g.opt), func(o *storage.Options) {
		preads(o)
		o.SeparateReads = true
		if g.opt.ioDepth > 0 {
			o.QueueDepth = g.opt.ioDepth
		}
	}); err != nil {
		return err
	}
	if g.featRead, err = g.feats.NewReader(); err != nil {
		return fmt.Errorf("ginex: features reader: %w", err)
	}
	if g.opt.ioDepth > 0 { // what the file was opened with, not the option
		env.Logf("ginex: io_depth: feature gathers through one %s reader, at most %d reads in flight", g.feats.Backend(), g.feats.Options().QueueDepth)
	}

	// Short offline profiling (§3.5), sampling from disk.
	ws, err := g.mem.ProfileStage(ctx, time.Now(), sample.Topology{Indptr: g.indptr, Indices: g.disk}, g.opt.profile)
	if err != nil {
		return err
	}
	batches := env.NumBatches()
	readerBuf := max(g.idxFile.ReaderBufferBytes(), g.feats.ReaderBufferBytes())
	p := size(kit.SizingOf(env, ws, g.opt, profile{readerBuf: readerBuf}))
	g.plan = p
	if _, err := g.mem.Apply(p.memory()); err != nil { // the phases' Go limits: sampleGo, mainGo
		return err
	}
	if p.oneBuffer == oneBufferBudget {
		env.Warnf("ginex: one batch input buffer (the budget cannot hold two): gather and training alternate")
	}
	// The changeset precomputation must know the cache capacity.
	env.Logf("ginex: superbatch %d iterations (%d per epoch), %d samplers, %d I/O threads (%s, direct=%v); profiled M_b %d, model step %d MiB (+%d MiB around it; %d MiB held outside the budget), base %d MiB",
		p.superbatch, batches, g.opt.samplers, threads, g.feats.Backend(), g.feats.Direct(), ws.MaxInputs, (ws.ArenaBytes+ws.StepArena)>>20, (ws.StepExtra+ws.StepOther)>>20, ws.DeviceBytes>>20, ws.BaseBytes>>20)
	env.Logf("ginex: budget %d MiB: neighbour cache %d MiB (sample-stage peak %d MiB), feature cache %d MiB = %d entries, %.1f%% of nodes (main-loop peak %d MiB)",
		env.MemBudget>>20, p.ncBytes>>20, p.samplePeak>>20, p.fcBytes>>20, p.fcEntries, 100*float64(p.fcEntries)/float64(g.nodes), p.mainPeak>>20)
	if p.overReserve {
		env.Warnf("ginex: the main loop's workspace (%d MiB) exceeds the memory budget (%d MiB): expect an OOM kill", p.mainPeak>>20, env.MemBudget>>20)
	}

	// Offline: build the neighbour cache by score and dump it (§3.1).
	t1 := time.Now()
	if err := g.buildNeighborCache(env); err != nil {
		return err
	}
	env.PrepareStage("neighbor_cache_build_s", time.Since(t1))
	return nil
}

// superbatchPlan is an inspected superbatch waiting for its main loop.
type superbatchPlan struct {
	dir   superbatchDir
	iters int
	init  []int64
	stats cache.ChangesetStats
}

func (g *ginex) RunEpoch(ctx context.Context, env *train.Env, epoch int, ep *metrics.EpochStats) error {
	batches := env.EpochBatches(epoch)
	S := g.plan.superbatch
	numSB := (len(batches) + S - 1) / S
	ep.BatchStarted()
	var prev *superbatchPlan
	var tracker *cache.NextAccessTracker
	for k := 0; k <= numSB; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		// inspect(k): passes 1–2 of superbatch k-1, then sample superbatch k
		// while pass 3 of k-1 runs.
		tInspect := time.Now()
		if prev != nil && g.opt.policy == policyBelady {
			t0 := time.Now()
			var err error
			tracker, prev.init, err = cache.BuildNextAccessTracker(g.nodes, g.plan.fcEntries, &runTrace{dir: prev.dir, n: prev.iters})
			if err != nil {
				return fmt.Errorf("ginex: superbatch %d changesets: %w", k-1, err)
			}
			ep.Add("changeset_s", time.Since(t0))
		}
		var pass3 sync.WaitGroup
		var pass3Err error
		if prev != nil {
			pass3.Add(1)
			go func(p *superbatchPlan, tr *cache.NextAccessTracker) {
				defer pass3.Done()
				t0 := time.Now()
				if g.opt.policy == policyStatic {
					pass3Err = g.precomputeStatic(p)
				} else {
					pass3Err = g.precompute(p, tr)
				}
				ep.Add("changeset_s", time.Since(t0))
			}(prev, tracker)
		}
		var next *superbatchPlan
		var sampleErr error
		if k < numSB {
			lo, hi := k*S, min((k+1)*S, len(batches))
			next, sampleErr = g.superbatchSample(ctx, env, ep, epoch, k, batches, lo, hi)
		}
		pass3.Wait()
		tracker = nil
		ep.Add("inspect_s", time.Since(tInspect))
		if sampleErr != nil {
			return sampleErr
		}
		if pass3Err != nil {
			return fmt.Errorf("ginex: superbatch %d changesets: %w", k-1, pass3Err)
		}
		if prev != nil {
			if err := g.execute(ctx, env, ep, prev); err != nil {
				return err
			}
			if !g.opt.keepRunFiles {
				if err := removeSuperbatch(prev.dir); err != nil {
					return err
				}
			}
		}
		prev = next
	}
	return nil
}

// superbatchSample loads the neighbour cache, samples iterations [lo,hi) of
// the epoch with the worker pool, writes their runtime files, and frees the
// neighbour cache (Fig. 8(b)).
func (g *ginex) superbatchSample(ctx context.Context, env *train.Env, ep *metrics.EpochStats, epoch, k int, batches [][]int64, lo, hi int) (*superbatchPlan, error) {
	dir := superbatchDir(filepath.Join(g.scratch, fmt.Sprintf("e%d_sb%d", epoch, k)))
	if err := os.MkdirAll(string(dir), 0o755); err != nil {
		return nil, fmt.Errorf("ginex: %w", err)
	}
	t0 := time.Now()
	// The disk readers' buffers grow with the samplers' gathers; the main
	// loop does not need them.
	defer g.disk.Release()
	g.mem.Enter(g.plan.sampleGo())
	var ncMem kit.OffHeap
	defer ncMem.Free() // after the workers are done with the cache
	// The neighbour cache file is the topology read back from disk
	// (§3.2): its device reads, measured on this thread, are topology
	// reads of the run (DESIGN §5).
	var nc *cache.NeighborCache
	if g.ncPath != "" { // else the budget holds no cache (buildNeighborCache)
		meter := metrics.StartThreadMeter()
		var err error
		nc, err = cache.ReadNeighborCacheFileInto(g.ncPath, ncMem.Int64s)
		read, _, _ := meter.Stop()
		env.Reads.Add(metrics.FileTopology, read, 0)
		if err != nil {
			return nil, err
		}
		osutil.DropFileCache(g.ncPath)
	}
	ep.Add("neighbor_cache_load_s", time.Since(t0))
	src := &cachedIndices{indptr: g.indptr, nc: nc, disk: g.disk}
	proto, err := env.NewSampler(sample.Topology{Indptr: g.indptr, Indices: src})
	if err != nil {
		return nil, err
	}
	pool := kit.StartSamplers(ctx, proto, epoch, batches[lo:hi], lo, g.opt.samplers, 2*g.opt.samplers, 0, ep)
	var written int64
	var werr error
	for mb := range pool.Out {
		if werr != nil {
			continue
		}
		// Iteration mb.Index-lo of the superbatch is the epoch's batch mb.Index.
		n, err := writeBatchFiles(dir, mb.Index-lo, mb)
		written += n
		werr = err
	}
	if err := pool.Stop(); err != nil {
		return nil, err
	}
	if werr != nil {
		return nil, werr
	}
	ep.Count("neighbor_lists", src.lookups.Load())
	ep.Count("neighbor_cache_hits", src.hits.Load())
	ep.Count("runfile_bytes", written)
	nc, src = nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	return &superbatchPlan{dir: dir, iters: hi - lo}, nil
}

// precompute runs pass 3 and writes the init and update files (Fig. 8(c)).
func (g *ginex) precompute(p *superbatchPlan, tr *cache.NextAccessTracker) error {
	if err := writeInit(p.dir, p.init); err != nil {
		return err
	}
	st, err := cache.SimulateBelady(tr, p.init, g.plan.fcEntries, &runTrace{dir: p.dir, n: p.iters}, func(cs cache.Changeset) error {
		_, err := writeUpdate(p.dir, cs)
		return err
	})
	p.stats = st
	return err
}

func (g *ginex) Close() error {
	var c kit.Closer
	c.Close(g.featRead, g.feats, g.disk, g.idxFile)
	c.Remove(g.scratch, g.opt.keepRunFiles)
	return c.Err(Name)
}
