package gids

// An epoch (§3.2, §3.4): window buffering samples `window` iterations
// ahead and pins the lines they need; the accumulator merges consecutive
// iterations into one aggregation pass (aggregation_pass.go) until their
// accesses pass its threshold; the merged batches then train one by one
// in the reference order.

import (
	"context"
	"fmt"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

func (g *gids) RunEpoch(ctx context.Context, env *train.Env, epoch int, ep *metrics.EpochStats) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := env.EpochBatches(epoch)
	n := len(batches)
	ahead := g.opt.window + g.kAlloc + g.opt.samplers
	ep.BatchStarted()
	pool := kit.StartSamplers(ctx, g.graph.Sampler, epoch, batches, 0, g.opt.samplers, ahead, ahead, ep)
	defer pool.Stop()
	next := pool.InOrder(ctx)
	nextIn := 0
	var fifo []windowed
	windowOn := g.opt.window > 0 && g.cache != nil
	// pull takes the next batch in index order into the window buffer;
	// with window buffering its accesses pin their lines (Fig. 6 ①–④).
	pull := func() error {
		t0 := time.Now()
		mb, err := next(nextIn)
		if err != nil {
			return err
		}
		ep.Add(metrics.StageStall, time.Since(t0))
		nextIn++
		w := windowed{mb: mb}
		if windowOn {
			for _, v := range mb.InputNodes {
				if g.cpu.row(v) != nil {
					continue // served by the CPU buffer: never touches the cache
				}
				lo, hi := g.agg.linesOf(v)
				for l := lo; l <= hi; l++ {
					w.lines = append(w.lines, l)
				}
			}
			g.cache.Enter(w.lines)
		}
		fifo = append(fifo, w)
		return nil
	}
	var (
		passes, iters, depthMax, capped int64
		pinnedMax                       int64
		rows, cpuRows, cacheRows        int64
		storageRows, reads, uncached    int64
		aggTime, ioTime                 time.Duration
		inflightSum, modelIOPSxReads    float64
	)
	concurrency := float64(g.opt.rings * g.depth)
	var x nn.Tensor
	for i := 0; i < n; {
		// §3.2: merge iterations until the pass holds enough accesses
		k, accesses := 0, int64(0)
		for {
			for len(fifo) <= k {
				if err := pull(); err != nil {
					return err
				}
			}
			accesses += int64(len(fifo[k].mb.InputNodes))
			k++
			if i+k == n || g.acc.Enough(accesses, k) {
				break
			}
			if k == g.kAlloc {
				capped++
				break
			}
			if k == len(g.xbufs) {
				if err := g.grow(env); err != nil {
					return err
				}
			}
		}
		// §3.4: the window holds the next `window` iterations beyond the pass
		if windowOn {
			for len(fifo) < min(k+g.opt.window, n-i) {
				if err := pull(); err != nil {
					return err
				}
			}
			pinnedMax = max(pinnedMax, int64(g.cache.pinned))
		}
		var prs []passRow
		var heapX [][]float32
		for j := 0; j < k; j++ {
			mb := fifo[j].mb
			var xb []float32
			if len(mb.InputNodes) <= g.maxBatch {
				xb = g.xbufs[j][:len(mb.InputNodes)*g.dim]
			} else {
				xb = make([]float32, len(mb.InputNodes)*g.dim)
				ep.Count("x_overflow", 1)
			}
			heapX = append(heapX, xb)
			for r, v := range mb.InputNodes {
				prs = append(prs, passRow{node: v, dst: xb[r*g.dim : (r+1)*g.dim], batch: int32(j)})
			}
		}
		ps, err := g.agg.run(ctx, prs, k, ep)
		if err != nil {
			return err
		}
		// DESIGN §5: each iteration's lookups once, tiers in lookup order
		var devRows int64
		for _, b := range ps.batches {
			ep.Lookup(b.rows, g.rowBytes, b.shared,
				metrics.TierRows{Tier: metrics.TierCPU, Rows: b.cpu},
				metrics.TierRows{Tier: metrics.TierGPU, Rows: b.cache})
			devRows += b.device
		}
		// Line reads are byte ranges: the rows from the device are the
		// whole rows the lines hold, each once per read (DESIGN §5); the
		// ones no looked-up row of the pass asked for were read into the
		// cache ahead of any lookup (rows_filled).
		ep.AddRowsFromDevice(ps.lineRows)
		ep.Count(metrics.CounterRowsFilled, max(ps.lineRows-devRows, 0))
		g.acc.Observe(k, ps.redirected(), ps.initial(), ps.termination())
		passes++
		iters += int64(k)
		depthMax = max(depthMax, int64(k))
		rows += ps.rows
		cpuRows += ps.cpuRows
		cacheRows += ps.cacheRows
		storageRows += ps.storageRows
		reads += ps.reads
		uncached += ps.uncached
		d := ps.end.Sub(ps.start)
		aggTime += d
		ioTime += ps.ioTime()
		inFlight := min(float64(ps.reads), concurrency)
		inflightSum += inFlight * float64(ps.reads)
		modelIOPSxReads += g.acc.Model().ExpectedIOPS(inFlight) * float64(ps.reads)
		ep.AddSpan(metrics.StageExtract, ps.start, ps.end)
		// train the merged iterations in order
		for j := 0; j < k; j++ {
			mb := fifo[j].mb
			x.Data, x.Rows, x.Cols = heapX[j], len(mb.InputNodes), g.dim
			if _, err := env.TrainStep(ep, mb, &x); err != nil {
				return err
			}
			pool.Release()
		}
		clear(fifo[:k])
		fifo = fifo[k:]
		i += k
	}
	if windowOn && g.cache.pinned != 0 {
		return fmt.Errorf("gids: end of epoch %d: %d cache slots still pinned", epoch, g.cache.pinned)
	}
	ep.AddTotal("storage_io_s", ioTime)
	var cs CacheStats
	if g.cache != nil {
		cs = g.cache.Stats().Sub(g.lastCache)
		g.lastCache = g.cache.Stats()
	}
	line := g.agg.lineBytes
	counters := map[string]int64{
		"accumulator_passes":         passes,
		"accumulator_iterations":     iters,
		"accumulator_depth_max":      depthMax,
		"accumulator_capped":         capped,
		"accumulator_required":       int64(g.acc.Required()),
		"cpu_buffer_hits":            cpuRows,
		"gpu_cache_hits":             cs.Hits,
		"gpu_cache_shared":           cs.Shared,
		"gpu_cache_misses":           cs.Misses,
		"gpu_cache_bypass":           cs.Bypasses,
		"gpu_cache_bypass_permille":  permille(cs.Bypasses, cs.Accesses()),
		"gpu_cache_evictions":        cs.Evictions,
		"gpu_cache_hit_permille":     permille(cs.Hits+cs.Shared, cs.Accesses()),
		"window_pinned_max":          pinnedMax,
		"storage_reads":              reads,
		"storage_bytes":              reads * line,
		"uncached_reads":             uncached,
		"storage_MBps":               mbps(reads*line, ioTime),
		"aggregation_MBps":           mbps(rows*g.rowBytes, aggTime),
		"accesses_in_flight":         int64(safeDiv(inflightSum, float64(reads))),
		"model_storage_MBps":         int64(safeDiv(modelIOPSxReads, float64(reads)) * float64(line) / 1e6),
		"accumulator_initial_us":     g.acc.Model().Initial.Microseconds(),
		"accumulator_termination_us": g.acc.Model().Termination.Microseconds(),
	}
	for k, v := range counters {
		ep.Count(k, v)
	}
	return nil
}

func permille(a, b int64) int64 {
	if b == 0 {
		return 0
	}
	return a * 1000 / b
}

func mbps(bytes int64, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(float64(bytes) / d.Seconds() / 1e6)
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
