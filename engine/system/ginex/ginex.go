package ginex

// "ginex": Ginex (SSD-enabled Billion-scale GNN Training on a Single Machine
// via Provably Optimal In-memory Caching, VLDB '22). Implemented:
//
//   - §3.1 (Fig. 7–9): the inspector–executor pipeline. Each epoch is cut
//     into superbatches of S iterations. Per superbatch: superbatch sample
//     (all S mini-batches sampled by a pool of workers, their ids and adj
//     written to runtime files on the data disk), changeset precomputation,
//     feature-cache initialisation ("switch") and the main loop. The
//     superbatch-level pipeline runs the changeset precomputation of
//     superbatch k (its third pass) while superbatch k+1 is being sampled,
//     as the artifact's inspect() does; passes 1–2 run just before.
//   - §3.2 (Fig. 10): the static neighbour cache, built offline by the
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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"outcore/engine/cache"
	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

// Name is the registered name of the Ginex variant.
const Name = "ginex"

type ginex struct {
	kit.Base
	cfg  train.Config
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
	preads := func(o *storage.Options) { o.Workers, o.BlockSize = g.opt.ioThreads, g.opt.readBlock }
	if g.idxFile, err = env.OpenIndicesWith(storage.BackendPread, preads); err != nil {
		return err
	}
	g.disk = sample.NewStorageIndices(g.idxFile)
	if g.feats, err = env.OpenFeaturesWith(storage.BackendPread, func(o *storage.Options) { preads(o); o.SeparateReads = true }); err != nil {
		return err
	}
	if g.featRead, err = g.feats.NewReader(); err != nil {
		return fmt.Errorf("ginex: features reader: %w", err)
	}

	// Short offline profiling (§3.5), sampling from disk.
	ws, err := g.mem.ProfileStage(ctx, time.Now(), sample.Topology{Indptr: g.indptr, Indices: g.disk}, g.opt.profile)
	if err != nil {
		return err
	}
	batches := env.NumBatches()
	readerBuf := max(g.idxFile.ReaderBufferBytes(), g.feats.ReaderBufferBytes())
	p := size(sizingInput{Sizing: kit.SizingOf(env, ws, g.opt), batches: batches, readerBuf: readerBuf})
	g.plan = p
	if p.superbatchCut {
		env.Deviate("superbatch cut to %d iterations by the runtime-file budget", p.superbatch)
	}
	switch p.oneBuffer {
	case oneBufferAsked:
		env.Deviate("x_buffers=1: the next iteration is gathered after the current one trains, not while it trains")
	case oneBufferBudget:
		env.Deviate("the memory budget cannot hold two batch inputs (%d MiB each) next to the main loop's workspace: the next iteration is gathered after the current one trains, not while it trains", p.xBytes>>20)
		env.Warnf("ginex: one batch input buffer (the budget cannot hold two): gather and training alternate")
	}
	// The changeset precomputation must know the cache capacity.
	env.Logf("ginex: superbatch %d iterations (%d per epoch), %d samplers, %d I/O threads (%s, direct=%v); profiled M_b %d, model step %d MiB (+%d MiB around it; %d MiB held outside the budget), base %d MiB",
		p.superbatch, batches, g.opt.samplers, g.opt.ioThreads, g.feats.Backend(), g.feats.Direct(), ws.MaxInputs, (ws.ArenaBytes+ws.StepArena)>>20, (ws.StepExtra+ws.StepOther)>>20, ws.DeviceBytes>>20, ws.BaseBytes>>20)
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

// buildNeighborCache computes out-degrees with one pass over indices.bin,
// selects lists by out/in-degree score within the budget, and writes the
// cache file.
func (g *ginex) buildNeighborCache(env *train.Env) error {
	static := g.opt.policy == policyStatic
	if !static && cache.NeighborCacheEntries(g.plan.ncBytes, g.nodes) == 0 {
		// Its address table alone (8 B per node) would not fit: no cache,
		// every list is read from disk (and no table is held).
		env.Logf("ginex: no neighbour cache: the budget leaves it %d MiB, less than its address table (%d MiB); every neighbour list is read from disk", g.plan.ncBytes>>20, (8*g.nodes)>>20)
		return nil
	}
	path := g.idxFile.Path()
	defer osutil.DropFileCache(path)
	outDeg := make([]int64, g.nodes)
	if err := scanIndices(path, func(chunk []int64) {
		for _, u := range chunk {
			if u >= 0 && u < g.nodes {
				outDeg[u]++
			}
		}
	}); err != nil {
		return fmt.Errorf("ginex: out-degrees: %w", err)
	}
	if static {
		if err := g.writeStatic(outDeg); err != nil {
			return err
		}
		env.Logf("ginex: static feature cache (policy=static) of the %d nodes of highest out-degree", g.staticRows)
		if cache.NeighborCacheEntries(g.plan.ncBytes, g.nodes) == 0 {
			env.Logf("ginex: no neighbour cache: the budget leaves it %d MiB, less than its address table (%d MiB); every neighbour list is read from disk", g.plan.ncBytes>>20, (8*g.nodes)>>20)
			return nil
		}
	}
	g.ncPath = filepath.Join(g.scratch, "neighbor_cache.bin") // set only when the file is written
	sr, err := newSeqIndexReader(path)
	if err != nil {
		return err
	}
	defer sr.close()
	nc, err := cache.BuildNeighborCache(g.indptr, outDeg, g.plan.ncBytes, sr.read)
	if err != nil {
		return fmt.Errorf("ginex: %w", err)
	}
	outDeg = nil
	g.ncCached = nc.Cached()
	env.Logf("ginex: neighbour cache holds the in-neighbour lists of %d nodes (%.1f%%), %d MiB", nc.Cached(), 100*float64(nc.Cached())/float64(g.nodes), nc.Bytes()>>20)
	if err := nc.WriteFile(g.ncPath); err != nil {
		return err
	}
	osutil.DropFileCache(g.ncPath)
	return nil
}

// scanIndices streams indices.bin in 4 MiB chunks.
func scanIndices(path string, fn func([]int64)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]int64, 512<<10)
	b := osutil.Bytes(buf)
	for {
		n, err := io.ReadFull(f, b)
		if n%8 != 0 {
			return fmt.Errorf("%s: size not a multiple of 8", path)
		}
		if n > 0 {
			fn(buf[:n/8])
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// seqIndexReader serves BuildNeighborCache's reads, which come in
// ascending position order, with one forward sweep over indices.bin.
type seqIndexReader struct {
	f   *os.File
	r   *bufio.Reader
	pos int64 // entry the reader is at
}

func newSeqIndexReader(path string) (*seqIndexReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &seqIndexReader{f: f, r: bufio.NewReaderSize(f, 1<<20)}, nil
}

func (s *seqIndexReader) read(start int64, dst []int64) error {
	if start < s.pos || start-s.pos > 1<<20 {
		if _, err := s.f.Seek(start*8, io.SeekStart); err != nil {
			return err
		}
		s.r.Reset(s.f)
	} else if start > s.pos {
		if _, err := s.r.Discard(int((start - s.pos) * 8)); err != nil {
			return err
		}
	}
	if _, err := io.ReadFull(s.r, osutil.Bytes(dst)); err != nil {
		return err
	}
	s.pos = start + int64(len(dst))
	return nil
}

func (s *seqIndexReader) close() { s.f.Close() }

// gatherChunk is how many missing rows one ReadRows call reads.
const gatherChunk = 8192

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
	g.mem.LimitGoStrict(g.plan.ncBytes+g.plan.sampleOff, 0, g.plan.sampleHeap)
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

// loaded is one iteration's runtime files.
type loaded struct {
	mb  *graph.MiniBatch
	cs  cache.Changeset
	err error
}

// execute runs switch and the main loop of a superbatch (Fig. 8(d)–(e)).
func (g *ginex) execute(ctx context.Context, env *train.Env, ep *metrics.EpochStats, p *superbatchPlan) error {
	// Switch: initialise the feature cache from the init file.
	t0 := time.Now()
	// The inspector's garbage (trace buffers, the tracker) goes before the
	// cache is filled.
	runtime.GC()
	debug.FreeOSMemory()
	g.mem.LimitGoStrict(int64(g.plan.fcEntries)*g.rowBytes+int64(g.plan.xBuffers)*g.plan.xBytes+g.plan.readerBuf, 0, g.plan.mainHeap)
	var fcMem kit.OffHeap
	defer fcMem.Free()
	rows, err := fcMem.Float32s(g.plan.fcEntries * g.dim)
	if err != nil {
		return fmt.Errorf("ginex: feature cache: %w", err)
	}
	fc, err := cache.NewFeatureCacheOn(g.nodes, g.dim, g.plan.fcEntries, rows)
	if err != nil {
		return fmt.Errorf("ginex: %w", err)
	}
	// The batch inputs (two when gathering overlaps training) live as long
	// as the main loop.
	xs := make([]*nn.Tensor, max(1, g.plan.xBuffers))
	for i := range xs {
		xs[i] = &nn.Tensor{}
		if xd, err := fcMem.Float32s(g.plan.maxBatch * g.dim); err == nil {
			xs[i].Data = xd[:0]
		}
	}
	double := len(xs) == 2
	init, err := readInit(p.dir)
	if err != nil {
		return err
	}
	// Read the rows in file order: neighbouring rows merge into larger
	// device reads (the order of insertion does not matter).
	slices.Sort(init)
	buf := make([]float32, gatherChunk*g.dim)
	for lo := 0; lo < len(init); lo += gatherChunk {
		ids := init[lo:min(lo+gatherChunk, len(init))]
		if err := g.featRead.ReadRows(ctx, ids, osutil.Bytes(buf[:len(ids)*g.dim])); err != nil {
			return fmt.Errorf("ginex: switch: %w", err)
		}
		for j, v := range ids {
			if err := fc.Insert(v, buf[j*g.dim:(j+1)*g.dim]); err != nil {
				return fmt.Errorf("ginex: switch: %w", err)
			}
		}
	}
	// The switch read these rows from the device in this epoch: the first
	// lookup of each is that device read, not a cache hit (DESIGN §5).
	fresh := newFreshSlots(fc, init)
	init = nil
	ep.Add("switch_s", time.Since(t0))
	ep.Count("switch_rows", int64(fresh.left))
	ep.Count(metrics.CounterRowsFilled, int64(fresh.left)) // read ahead of their lookups (DESIGN §5)

	// Runtime-file loader: ids, adj and update files in batch order.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	loadQ := make(chan loaded, 4)
	go func() {
		defer close(loadQ)
		for i := 0; i < p.iters; i++ {
			t0 := time.Now()
			mb, err := readBatch(p.dir, i, g.indptr)
			var cs cache.Changeset
			if err == nil {
				cs, err = readUpdate(p.dir, i)
			}
			ep.Add("runfile_io_s", time.Since(t0))
			if !kit.Send(ctx, loadQ, loaded{mb: mb, cs: cs, err: err}) {
				return
			}
			if err != nil {
				return
			}
		}
	}()
	next := func() (loaded, error) {
		l, ok := <-loadQ
		if !ok {
			if err := ctx.Err(); err != nil {
				return l, err
			}
			return l, errors.New("ginex: runtime-file loader stopped early")
		}
		return l, l.err
	}
	type gathered struct {
		x   *nn.Tensor
		err error
	}
	var miss []int
	gather := func(l loaded, x *nn.Tensor) error {
		t0 := time.Now()
		// The gather is one extract worker while it runs (DESIGN §5):
		// its CPU time busy, waiting for the O_DIRECT reads wait.
		w := ep.StartWorker(metrics.WorkExtract)
		defer func() {
			w.Stop()
			ep.Add(metrics.StageExtract, time.Since(t0))
		}()
		ids := l.mb.InputNodes
		x.Resize(len(ids), g.dim)
		miss = fc.Gather(ids, x.Data, miss)
		n := int64(len(ids))
		m := int64(len(miss))
		first := fresh.firstUses(fc, ids, miss)
		ep.Lookup(n, g.rowBytes, 0, metrics.TierRows{Tier: metrics.TierCPU, Rows: n - m - first})
		var mids []int64
		for lo := 0; lo < len(miss); lo += gatherChunk {
			part := miss[lo:min(lo+gatherChunk, len(miss))]
			mids = mids[:0]
			for _, j := range part {
				mids = append(mids, ids[j])
			}
			if err := g.featRead.ReadRows(ctx, mids, osutil.Bytes(buf[:len(mids)*g.dim])); err != nil {
				return fmt.Errorf("ginex: gather: %w", err)
			}
			for k, j := range part {
				copy(x.Data[j*g.dim:(j+1)*g.dim], buf[k*g.dim:(k+1)*g.dim])
			}
		}
		return nil
	}
	cur, err := next()
	if err != nil {
		return err
	}
	t1 := time.Now()
	if err := gather(cur, xs[0]); err != nil {
		return err
	}
	ep.Add(metrics.StageStall, time.Since(t1))
	var pending chan gathered
	for idx := 0; idx < p.iters; idx++ {
		x := xs[idx%len(xs)]
		if !double && idx > 0 {
			// One buffer: the trainer waits for the whole gather.
			t0 := time.Now()
			if err := gather(cur, x); err != nil {
				return err
			}
			ep.Add(metrics.StageStall, time.Since(t0))
		}
		if pending != nil {
			t0 := time.Now()
			r := <-pending
			ep.Add(metrics.StageStall, time.Since(t0))
			if r.err != nil {
				return r.err
			}
		}
		// Cache update with this iteration's changeset (Fig. 11 ④⑤).
		t2 := time.Now()
		fresh.evicted(fc, cur.cs.OutIDs)
		if err := fc.Apply(cur.cs, x.Data); err != nil {
			return fmt.Errorf("ginex: %w", err)
		}
		ep.Add("cache_update_s", time.Since(t2))
		// Gather the next iteration while this one trains.
		var following loaded
		pending = nil
		if idx+1 < p.iters {
			t0 := time.Now()
			following, err = next()
			ep.Add(metrics.StageStall, time.Since(t0))
			if err != nil {
				return err
			}
			if double {
				pending = make(chan gathered, 1)
				go func(l loaded, x *nn.Tensor) {
					pending <- gathered{x: x, err: gather(l, x)}
				}(following, xs[(idx+1)%2])
			}
		}
		if _, err := env.TrainStep(ep, cur.mb, x); err != nil {
			if pending != nil {
				<-pending
			}
			return err
		}
		cur = following
	}
	ep.Count("changeset_misses", p.stats.Misses)
	ep.Count("switch_rows_unused", int64(fresh.left))
	fc = nil
	runtime.GC()
	debug.FreeOSMemory()
	return nil
}

func (g *ginex) Close() error {
	var c kit.Closer
	c.Close(g.featRead, g.feats, g.disk, g.idxFile)
	c.Remove(g.scratch, g.opt.keepRunFiles)
	return c.Err(Name)
}
