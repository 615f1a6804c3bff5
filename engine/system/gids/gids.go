package gids

// "gids": the GIDS dataloader (Park et al., PVLDB 17(6), 2024; artifact
// jeongminpark417/GIDS, GIDS.py fetch_feature). Implemented:
//
//   - §3.1: feature data stays in storage and is read in cache lines
//     (one feature row rounded up to 512 B by default, as the artifact's
//     page_size; `line` sets BaM's 4 KiB) into a software cache in device
//     memory; the graph structure is pinned in host memory (§3.5).
//   - §3.2, Eq. 2–3 (accumulator.go): consecutive iterations are merged
//     into one aggregation pass until they hold more than N_access
//     accesses plus the accesses redirected per iteration; IOP_peak and
//     the latency come from a probe at start (iops_probe.go) or options,
//     and T_i, T_t are measured on every pass.
//   - §3.3 (reverse_pagerank.go): the constant CPU buffer pins the rows of
//     the nodes with the highest weighted reverse PageRank (cpu_buffer of
//     the feature table, the paper's default 10%), cut by the host budget.
//   - §3.4 (window_cache.go): random eviction; window buffering samples
//     `window` iterations ahead and keeps lines they need unevictable.
//   - Training sees the batches in the reference order (the DGL
//     dataloader's), so its losses equal the reference pipeline's.
//
// An epoch (epoch.go) merges iterations into passes; each pass
// (aggregation_pass.go) reads the merged batches' rows into
// their batch buffers; then the batches train one by one, as the
// artifact's loader returns merged batches from its buffer before it
// aggregates the next group (no prefetch thread).
//
// Tiers per input row: "cpu" = constant CPU buffer, "gpu" = software
// cache (every line of the row a hit, or shared with a load in flight),
// "device" = a line of the row read from storage. Stages: extract_s is the
// aggregation passes' time, storage_io_s their storage windows (first
// submission to last completion), stall_s the wait for sampled batches.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"outcore/engine/cache"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

type gids struct {
	kit.Base
	cfg train.Config
	opt options

	graph    *kit.Graph // §3.5: the topology pinned in host memory
	feats    *storage.File
	readers  []storage.Reader
	depth    int
	layout   Layout
	cpu      *cpuBuffer
	cache    *WindowCache
	acc      *Accumulator
	agg      *aggregator
	dim      int
	rowBytes int64
	maxBatch int
	kAlloc   int // most iterations a pass may merge
	xbufs    [][]float32
	// device memory held in the device budget: per batch buffer and per
	// sampled mini-batch kept for a pass
	bufBytes, perBatchMeta int64
	budget                 *kit.Budget
	hostMem                kit.OffHeap
	devMem                 kit.OffHeap
	lastCache              CacheStats
}

func (g *gids) Prepare(ctx context.Context, env *train.Env) error {
	var err error
	if g.graph, err = kit.LoadGraph(env, "memory"); err != nil { // §3.5: pinned in host memory
		return err
	}
	p, err := kit.ProfilePinned(ctx, env, g.graph.Topology, g.opt.profile)
	if err != nil {
		return err
	}
	g.budget = p.Budget
	shape, ws := p.Shape, p.WS
	g.dim, g.rowBytes = shape.FeatureDim, shape.RowBytes()
	g.maxBatch = int(min(int64(float64(ws.MaxInputs)*g.opt.margin)+1, shape.Nodes))

	// the storage path: lines read whole, one request per line
	line := LineBytes(shape, g.opt.line)
	g.depth = g.opt.depth
	var opts storage.Options
	if g.feats, err = env.OpenFeaturesWith(storage.BackendUring, func(o *storage.Options) {
		o.MaxMergeBytes, o.QueueDepth = line, g.depth
		opts = *o
	}); err != nil {
		return err
	}
	featPath := g.feats.Path()
	if line%g.feats.BlockSize() != 0 {
		return fmt.Errorf("%w: gids: line %d B is not a multiple of the device's %d B block", train.ErrConfig, line, g.feats.BlockSize())
	}

	model, err := g.storageModel(ctx, env, featPath, opts, line)
	if err != nil {
		return err
	}
	if g.acc, err = NewAccumulator(model, g.opt.peakPercent, g.opt.accumulator); err != nil {
		return err
	}
	env.Logf("gids: Eq. 2: N_access = %.0f for %.0f%% of %.0f IOPS × %d SSD(s), T_i + T_t = %v",
		g.acc.Required(), 100*g.opt.peakPercent, model.PeakIOPS, model.SSDs, model.Initial+model.Termination)

	if err := g.planMemory(env, p); err != nil {
		return err
	}
	env.Deviate("cache lines of %d B for rows of %d B: the artifact's page is one feature row (4096 B for its 1024-dim IGB features, 512 B for 128-dim OGB); the paper's micro-benchmarks read 4 KiB (option line)", line, g.rowBytes)

	// §3.3: the constant CPU buffer
	if g.layout.CPUBufferRows > 0 {
		t3 := time.Now()
		if err := g.loadCPUBuffer(ctx, env); err != nil {
			return err
		}
		env.PrepareStage("cpu_buffer_s", time.Since(t3))
	}
	if err := g.startAggregator(line); err != nil {
		return err
	}
	goLimit := g.budget.Enter(g.goHeap(shape.Nodes))
	env.Logf("gids: constant CPU buffer %d rows (%d MiB, %s), software cache %d lines of %d B (%.1f%% of the feature file), window %d, accumulator %v (up to %d merged iterations), %d rings of depth %d; Go heap limit %d MiB",
		g.layout.CPUBufferRows, g.layout.CPUBufferRows*g.rowBytes>>20, g.opt.cpuSelect, g.layout.CacheLines, line,
		100*float64(g.layout.CacheLines)/float64(g.layout.Lines), g.opt.window, g.opt.accumulator, g.kAlloc, g.opt.rings, g.depth, goLimit>>20)
	return nil
}

// planMemory sizes the CPU buffer in the host budget and the cache and
// batch buffers on the device (Plan over the profile p), allocates the
// first batch buffer and applies the plan (memory).
func (g *gids) planMemory(env *train.Env, p kit.PinnedProfile) error {
	cpuWant := kit.SizeBytes(g.opt.cpuBuffer, p.Shape.FeatureBytes())
	g.kAlloc = 1
	if g.opt.accumulator {
		g.kAlloc = g.opt.maxMerge
	}
	g.layout = Plan(kit.Sizing[options, kit.NoProfile]{Budget: env.MemBudget, WS: p.PlanWS, Shape: p.Shape, Cfg: env.Config, Opt: g.opt})
	if !g.layout.Feasible {
		env.Warnf("gids: the %d MiB budget cannot hold the pinned topology (%d MiB) next to the process (%d MiB in all) and the reserve: expect an OOM kill", env.MemBudget>>20, g.layout.TopologyBytes>>20, g.layout.HostBytes>>20)
	}
	// Device memory: the model step, the cache and its metadata stay; the
	// batch buffers (and the sampled mini-batches waiting with them) grow
	// with the iterations a pass merges (grow), so the limit holds what is
	// used.
	g.perBatchMeta = p.WS.BatchBytes + int64(p.WS.MaxInputs)*8
	g.bufBytes = int64(g.maxBatch) * g.rowBytes
	if g.opt.gpuCache == gpuCacheAuto {
		// the device budget less the other device memory at its most
		// (every batch buffer the accumulator may merge)
		other := int64(g.opt.window)*g.perBatchMeta + int64(g.kAlloc)*(g.bufBytes+g.perBatchMeta)
		g.layout.CacheLines = DeviceCacheLines(g.budget.Device(), other, g.layout)
	}
	if err := g.addBuffer(); err != nil {
		return err
	}
	_, err := g.budget.Apply(g.memory(cpuWant))
	return err
}

// startAggregator builds §3.4's software cache in device memory, one
// reader a ring, and the aggregator over them.
func (g *gids) startAggregator(line int64) error {
	if g.layout.CacheLines > 0 {
		data, err := g.devMem.Bytes(int(g.layout.CacheLines * line))
		if err != nil {
			return fmt.Errorf("gids: software cache: %w", err)
		}
		if g.cache, err = NewWindowCache(g.layout.Lines, line, data, uint64(g.cfg.Seed)); err != nil {
			return err
		}
	}
	for i := 0; i < g.opt.rings; i++ {
		r, err := g.feats.NewReader()
		if err != nil {
			return fmt.Errorf("gids: ring %d: %w", i, err)
		}
		g.readers = append(g.readers, r)
	}
	g.agg = newAggregator(g.feats, g.readers, g.depth, g.cpu, g.cache, g.opt.window > 0 && g.cache != nil, g.rowBytes, line)
	return nil
}

// grow adds one batch buffer (device memory) and holds the limit at the
// device memory now in use.
func (g *gids) grow(env *train.Env) error {
	if err := g.addBuffer(); err != nil {
		return err
	}
	return g.budget.Hold(g.memory(0).Device)
}

// addBuffer allocates one more batch buffer.
func (g *gids) addBuffer() error {
	x, err := g.devMem.Float32s(g.maxBatch * g.dim)
	if err != nil {
		return fmt.Errorf("gids: batch buffer: %w", err)
	}
	g.xbufs = append(g.xbufs, x)
	return nil
}

// memory is the plan as the shared preparation applies it (kit.Plan): the
// software cache with its metadata, the batch buffers allocated so far
// with their mini-batches and the window buffer's mini-batches held
// outside the host budget; the CPU buffer's cut (of cpuWant bytes asked
// for) in words.
func (g *gids) memory(cpuWant int64) kit.Plan {
	line := g.layout.LineBytes
	m := kit.Plan{Fits: g.layout.Feasible, Why: "as the GPU memory they occupy in GIDS", Device: []kit.Part{
		{Name: "software_cache", Bytes: g.layout.CacheLines*line + g.layout.CacheMetaBytes(),
			What: fmt.Sprintf("software cache (%d lines of %d B, %d MiB of them metadata)", g.layout.CacheLines, line, g.layout.CacheMetaBytes()>>20)},
		{Name: "batch_buffers", Bytes: int64(len(g.xbufs)) * (g.bufBytes + g.perBatchMeta),
			What: fmt.Sprintf("batch buffers of %d MiB with their mini-batches (one per merged iteration, up to %d)", g.bufBytes>>20, g.kAlloc)},
		{Name: "window", Bytes: int64(g.opt.window) * g.perBatchMeta, What: fmt.Sprintf("the window buffer's %d mini-batches", g.opt.window)},
	}}
	if g.layout.CPUBufferCut {
		m.Cuts = append(m.Cuts, fmt.Sprintf("the host budget holds a constant CPU buffer of %d MiB of the %d MiB asked for", g.layout.CPUBufferRows*g.rowBytes>>20, cpuWant>>20))
	}
	return m
}

// goHeap is the Go heap of the run: the CPU buffer, its slot map and the
// rings' staging off the heap; the sampled mini-batches of the window and
// the merged iterations (device memory) on it.
func (g *gids) goHeap(nodes int64) kit.GoHeap {
	return kit.GoHeap{OffHeap: g.layout.CPUBufferRows*g.rowBytes + nodes*4 + g.layout.Staging, HeapNeed: g.layout.HeapNeed + int64(g.opt.window+g.kAlloc)*g.perBatchMeta}
}

// storageModel is §3.2's storage model: IOP_peak and the initial latency
// as the options give them, else measured by a probe (a deviation), timed
// as the preparation stage probe_s.
func (g *gids) storageModel(ctx context.Context, env *train.Env, featPath string, opts storage.Options, line int64) (StorageModel, error) {
	t2 := time.Now()
	model := StorageModel{PeakIOPS: g.opt.iops, Initial: time.Duration(g.opt.latencyUS * float64(time.Microsecond)), SSDs: g.opt.ssds}
	if g.opt.iops == 0 || g.opt.latencyUS == 0 {
		probed, res, err := ProbeModel(ctx, featPath, opts, line, g.opt.rings*g.depth, g.opt.rings, g.opt.ssds)
		if err != nil {
			return model, fmt.Errorf("gids: probe the device: %w", err)
		}
		if g.opt.iops == 0 {
			model.PeakIOPS = probed.PeakIOPS
		}
		if g.opt.latencyUS == 0 {
			model.Initial = probed.Initial
		}
		env.Logf("gids: probe: %.0f IOPS with %d %d-byte reads in flight over %d rings (median latency under load %v), %v at depth 1",
			res.IOPS, res.InFlight, line, g.opt.rings, res.Latency, probed.Initial)
		env.Deviate("IOP_peak (%.0f per SSD) and the initial latency (%v) of Eq. 2 were measured by a probe of random %d-byte reads of features.bin at start (the paper takes them from the SSD; the artifact as arguments); T_i and T_t are then measured on every pass", model.PeakIOPS, model.Initial.Round(time.Microsecond), line)
	}
	env.PrepareStage("probe_s", time.Since(t2))
	return model, nil
}

// loadCPUBuffer ranks the nodes, pins the top rows in host memory and
// reads them from features.bin.
func (g *gids) loadCPUBuffer(ctx context.Context, env *train.Env) error {
	n := env.Dataset.Nodes()
	k := g.layout.CPUBufferRows
	var hot []int64
	switch g.opt.cpuSelect {
	case "pagerank":
		t0 := time.Now()
		all, ok := g.graph.Indices.(sample.InMemory)
		if !ok {
			return errors.New("gids: reverse PageRank needs the topology in memory")
		}
		fanout := g.cfg.Fanout[len(g.cfg.Fanout)-1]
		score, err := ReversePageRank(g.graph.Indptr, all.All(), PageRankConfig{Iterations: g.opt.pagerankIters, Fanout: max(fanout, 0)})
		if err != nil {
			return err
		}
		hot = cache.TopByScore(score, int(k))
		env.PrepareStage("pagerank_s", time.Since(t0))
		env.Deviate("the weighted reverse PageRank (%d iterations, weights min(1, %d/deg)) is computed at start over the pinned topology (the artifact computes it offline)", g.opt.pagerankIters, fanout)
	case "first":
		for v := int64(0); v < k; v++ {
			hot = append(hot, v)
		}
	}
	slices.Sort(hot)
	rows, err := g.hostMem.Float32s(int(k) * g.dim)
	if err != nil {
		return fmt.Errorf("gids: constant CPU buffer: %w", err)
	}
	slot := make([]int32, n)
	for i := range slot {
		slot[i] = -1
	}
	r, err := g.feats.NewReader()
	if err != nil {
		return err
	}
	defer r.Close()
	const chunk = 4096
	for lo := 0; lo < len(hot); lo += chunk {
		hi := min(lo+chunk, len(hot))
		if err := r.ReadRows(ctx, hot[lo:hi], osutil.Bytes(rows[lo*g.dim:hi*g.dim])); err != nil {
			return fmt.Errorf("gids: fill the constant CPU buffer: %w", err)
		}
		for i, v := range hot[lo:hi] {
			slot[v] = int32(lo + i)
		}
	}
	g.cpu = &cpuBuffer{slot: slot, rows: rows, dim: g.dim}
	return nil
}

func (g *gids) Close() error {
	var c kit.Closer
	for _, r := range g.readers {
		c.Add(r.Close())
	}
	g.readers = nil
	c.Close(g.feats, g.graph)
	g.cache, g.cpu, g.xbufs, g.agg = nil, nil, nil, nil
	c.Add(g.devMem.Free(), g.hostMem.Free())
	runtime.GC()
	return c.Err(Name)
}
