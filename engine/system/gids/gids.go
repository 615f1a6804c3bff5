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

	// §3.2: the storage model, measured unless given
	t2 := time.Now()
	model := StorageModel{PeakIOPS: g.opt.iops, Initial: time.Duration(g.opt.latencyUS * float64(time.Microsecond)), SSDs: g.opt.ssds}
	if g.opt.iops == 0 || g.opt.latencyUS == 0 {
		probed, res, err := ProbeModel(ctx, featPath, opts, line, g.opt.rings*g.depth, g.opt.rings, g.opt.ssds)
		if err != nil {
			return fmt.Errorf("gids: probe the device: %w", err)
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
	if g.acc, err = NewAccumulator(model, g.opt.peakPercent, g.opt.accumulator); err != nil {
		return err
	}
	env.Logf("gids: Eq. 2: N_access = %.0f for %.0f%% of %.0f IOPS × %d SSD(s), T_i + T_t = %v",
		g.acc.Required(), 100*g.opt.peakPercent, model.PeakIOPS, model.SSDs, model.Initial+model.Termination)

	// memory: CPU buffer in the host budget, cache and batch buffers on the device
	cpuWant := kit.SizeBytes(g.opt.cpuBuffer, shape.FeatureBytes())
	g.kAlloc = 1
	if g.opt.accumulator {
		g.kAlloc = g.opt.maxMerge
	}
	g.layout = Plan(env.MemBudget, p.PlanWS, shape, g.opt)
	if !g.layout.Feasible {
		env.Warnf("gids: the %d MiB budget cannot hold the pinned topology (%d MiB) next to the process (%d MiB in all) and the reserve: expect an OOM kill", env.MemBudget>>20, g.layout.TopologyBytes>>20, g.layout.HostBytes>>20)
	}
	if g.layout.CPUBufferCut {
		env.Deviate("the host budget holds a constant CPU buffer of %d MiB of the %d MiB asked for", g.layout.CPUBufferRows*g.rowBytes>>20, cpuWant>>20)
	}
	// Device memory: the model step, the cache and its metadata stay; the
	// batch buffers (and the sampled mini-batches waiting with them) grow
	// with the iterations a pass merges (grow), so the limit holds what is
	// used.
	g.perBatchMeta = ws.BatchBytes + int64(ws.MaxInputs)*8
	g.bufBytes = int64(g.maxBatch) * g.rowBytes
	if g.opt.gpuCache == gpuCacheAuto {
		// the device budget less the other device memory at its most
		// (every batch buffer the accumulator may merge)
		other := int64(g.opt.window)*g.perBatchMeta + int64(g.kAlloc)*(g.bufBytes+g.perBatchMeta)
		g.layout.CacheLines = DeviceCacheLines(g.budget.Device(), other, g.layout)
	}
	if err := g.grow(env); err != nil {
		return err
	}
	if env.MemBudget > 0 {
		env.Deviate("device memory held outside the %d MiB host budget: software cache %d MiB (%d lines of %d B) with %d MiB of metadata, batch buffers of %d MiB (one per merged iteration, up to %d), the window buffer's mini-batches (%d MiB for %d), model step %d MiB",
			env.MemBudget>>20, g.layout.CacheLines*line>>20, g.layout.CacheLines, line, g.layout.CacheMetaBytes()>>20, g.bufBytes>>20, g.kAlloc, int64(g.opt.window)*g.perBatchMeta>>20, g.opt.window, ws.DeviceBytes>>20)
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
	// §3.4: the software cache
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
	// off the Go heap: the CPU buffer and the rings' staging; the sampled
	// mini-batches of the window and the merged iterations are device
	// memory on the Go heap
	cpuBytes := g.layout.CPUBufferRows*g.rowBytes + shape.Nodes*4
	goLimit := g.budget.LimitGo(cpuBytes+g.layout.Staging, 0, g.layout.HeapNeed+int64(g.opt.window+g.kAlloc)*g.perBatchMeta)
	env.Logf("gids: constant CPU buffer %d rows (%d MiB, %s), software cache %d lines of %d B (%.1f%% of the feature file), window %d, accumulator %v (up to %d merged iterations), %d rings of depth %d; Go heap limit %d MiB",
		g.layout.CPUBufferRows, g.layout.CPUBufferRows*g.rowBytes>>20, g.opt.cpuSelect, g.layout.CacheLines, line,
		100*float64(g.layout.CacheLines)/float64(g.layout.Lines), g.opt.window, g.opt.accumulator, g.kAlloc, g.opt.rings, g.depth, goLimit>>20)
	return nil
}

// grow adds one batch buffer (device memory) and holds the limit at the
// device memory now in use.
func (g *gids) grow(env *train.Env) error {
	x, err := g.devMem.Float32s(g.maxBatch * g.dim)
	if err != nil {
		return fmt.Errorf("gids: batch buffer: %w", err)
	}
	g.xbufs = append(g.xbufs, x)
	n := int64(len(g.xbufs))
	return g.budget.HoldOutside(map[string]int64{
		"software_cache": g.layout.CacheLines*g.layout.LineBytes + g.layout.CacheMetaBytes(),
		"batch_buffers":  n * (g.bufBytes + g.perBatchMeta),
		"window":         int64(g.opt.window) * g.perBatchMeta,
	})
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
