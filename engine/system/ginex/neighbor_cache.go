package ginex

// §3.2 (Fig. 10): the static neighbour cache, built offline from the
// out/in-degree scores, sized from the budget and dumped to a file
// (reading indices.bin through index_scan.go).

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"outcore/engine/cache"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

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
	// The cache built here is on the Go heap, as large as the one each
	// superbatch loads from the file off the heap: give it back before
	// that load, or both are held at once until the collector runs (the
	// budget holds one: an OOM kill at 50 % of medium in 4 of 6 runs).
	nc = nil
	runtime.GC()
	debug.FreeOSMemory()
	return nil
}
