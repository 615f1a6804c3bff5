package ginex

// The executor's main loop (§3.1, Fig. 9; §3.3–3.4): per iteration of a
// superbatch, load its runtime files, gather the rows the feature cache
// misses with O_DIRECT preads, update the cache from the iteration's
// changeset and train; iteration i+1 is gathered while i trains when the
// plan holds two batch inputs.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"outcore/engine/cache"
	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

// gatherChunk is how many missing rows one ReadRows call reads.
const gatherChunk = 8192

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
	g.mem.Enter(g.plan.mainGo(g.rowBytes))
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
