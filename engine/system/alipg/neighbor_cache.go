package alipg

// Ali+PG's neighbour cache (Ginex §5.1: "an Aligraph-style cache [44] is
// used for the neighbor cache"). Ginex §3.2 describes the AliGraph
// metric: the cost and benefit of caching a node's neighbours, "the ratio
// between the number of out-neighbors and in-neighbors, as access
// frequency (benefit) may be roughly proportional to the number of
// out-neighbors while the cache space overhead (cost) is proportional to
// the number of in-neighbors". The cache is built once, before training,
// from one pass over the indices for the out-degrees (engine/cache's
// BuildNeighborCache ranks by that ratio and fills the budget), and never
// changes; the samplers ask it first and fault the rest from the indices
// mapping.

import (
	"fmt"
	"sort"
	"sync/atomic"

	"outcore/engine/cache"
	"outcore/engine/metrics"
	"outcore/engine/sample"
)

// outDegrees counts how often each node appears in the in-neighbour lists
// (its out-degree) in one pass over indices.
func outDegrees(nodes int64, indices []int64) ([]int64, error) {
	out := make([]int64, nodes)
	for i, u := range indices {
		if u < 0 || u >= nodes {
			return nil, fmt.Errorf("ali+pg: index entry %d names node %d of a graph of %d", i, u, nodes)
		}
		out[u]++
	}
	return out, nil
}

// buildNeighborCache is the AliGraph-style cache of ncBytes over the
// mapped indices (nil when its address table alone does not fit).
func buildNeighborCache(indptr, outDeg, indices []int64, ncBytes int64) (*cache.NeighborCache, error) {
	if cache.NeighborCacheEntries(ncBytes, int64(len(indptr)-1)) == 0 {
		return nil, nil
	}
	return cache.BuildNeighborCache(indptr, outDeg, ncBytes, func(start int64, dst []int64) error {
		if start < 0 || start+int64(len(dst)) > int64(len(indices)) {
			return fmt.Errorf("entries %d..%d outside the %d index entries", start, start+int64(len(dst)), len(indices))
		}
		copy(dst, indices[start:])
		return nil
	})
}

// cachedIndices is the samplers' index source: a list in the neighbour
// cache is served from it, the rest from the mapping. It does not expose
// the mapping whole (sample.InMemory), so every read comes through Gather.
type cachedIndices struct {
	indptr  []int64
	nc      *cache.NeighborCache
	mapped  []int64
	account *metrics.ReadAccount // where the mapping's page faults go (nil: nowhere)
	kind    string
	lists   atomic.Int64 // neighbour lists asked for
	hits    atomic.Int64 // of them, served by the cache
}

// neighbors is v's cached list, if there is a cache and v is in it.
func (c *cachedIndices) neighbors(v int64) ([]int64, bool) {
	if c.nc == nil {
		return nil, false
	}
	return c.nc.Neighbors(v)
}

var _ sample.IndexSource = (*cachedIndices)(nil)

// Gather implements sample.IndexSource: positions come grouped by their
// node's list.
func (c *cachedIndices) Gather(pos []int64, out []int64) error {
	if c.account != nil {
		// page faults on the mapping happen on this thread: its device
		// reads in the call are the topology's (DESIGN §5)
		m := metrics.StartThreadMeter()
		defer func() {
			read, _, _ := m.StopMapped()
			c.account.Add(c.kind, read.Bytes, 0)
			c.account.AddFaults(read)
		}()
	}
	n := int64(len(c.indptr) - 1)
	var lists, hits int64
	for i := 0; i < len(pos); {
		p := pos[i]
		v := int64(sort.Search(int(n), func(v int) bool { return c.indptr[v+1] > p }))
		if v >= n || p < 0 {
			return fmt.Errorf("ali+pg: index position %d outside the graph", p)
		}
		lo, hi := c.indptr[v], c.indptr[v+1]
		j := i + 1
		for j < len(pos) && pos[j] >= lo && pos[j] < hi {
			j++
		}
		lists++
		if nb, ok := c.neighbors(v); ok {
			hits++
			for k := i; k < j; k++ {
				out[k] = nb[pos[k]-lo]
			}
		} else {
			for k := i; k < j; k++ {
				out[k] = c.mapped[pos[k]]
			}
		}
		i = j
	}
	c.lists.Add(lists)
	c.hits.Add(hits)
	return nil
}
