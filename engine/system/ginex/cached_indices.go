package ginex

// Ginex §3.2 and §4: sampling through the neighbour cache. The sampler asks
// for index entries by position (grouped by destination node); a group whose
// node's in-neighbour list is in the neighbour cache is served from it, the
// others are read from indices.bin with O_DIRECT preads (Ginex §4: "pread
// syscall with O_DIRECT flag to bypass OS page cache").

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"outcore/engine/cache"
	"outcore/engine/sample"
)

// cachedIndices is a sample.IndexSource: neighbour cache first, then disk.
type cachedIndices struct {
	indptr []int64
	nc     *cache.NeighborCache // nil: everything from disk
	disk   sample.IndexSource

	lookups, hits atomic.Int64 // neighbour lists asked for / served by the cache
	scratch       sync.Pool
}

type gatherScratch struct {
	pos []int64
	out []int64
	at  []int
}

// cachedGatherBytes is what one Gather of up to entries index entries keeps
// in its pooled scratch: the positions it sends to disk, their places and
// the values read (8 B each per entry).
func cachedGatherBytes(entries int) int64 { return 24 * int64(entries) }

// ownerOf returns the node whose in-neighbour list holds index position p.
func ownerOf(indptr []int64, p int64) int64 {
	n := len(indptr) - 1
	return int64(sort.Search(n, func(v int) bool { return indptr[v+1] > p }))
}

// Gather implements sample.IndexSource.
func (c *cachedIndices) Gather(pos []int64, out []int64) error {
	if c.nc == nil {
		lists, err := c.eachList(pos, func(int64, int64, int, int) {})
		if err != nil {
			return err
		}
		c.lookups.Add(lists)
		return c.disk.Gather(pos, out)
	}
	s, _ := c.scratch.Get().(*gatherScratch)
	if s == nil {
		s = &gatherScratch{}
	}
	defer c.scratch.Put(s)
	s.pos, s.at = s.pos[:0], s.at[:0]
	var hits int64
	lists, err := c.eachList(pos, func(v, lo int64, i, j int) {
		if nb, ok := c.nc.Neighbors(v); ok {
			hits++
			for k := i; k < j; k++ {
				out[k] = nb[pos[k]-lo]
			}
			return
		}
		for k := i; k < j; k++ {
			s.pos = append(s.pos, pos[k])
			s.at = append(s.at, k)
		}
	})
	if err != nil {
		return err
	}
	c.lookups.Add(lists)
	c.hits.Add(hits)
	if len(s.pos) == 0 {
		return nil
	}
	if cap(s.out) < len(s.pos) {
		s.out = make([]int64, len(s.pos))
	}
	s.out = s.out[:len(s.pos)]
	if err := c.disk.Gather(s.pos, s.out); err != nil {
		return err
	}
	for k, at := range s.at {
		out[at] = s.out[k]
	}
	return nil
}

// eachList calls fn for each run pos[i:j] of positions in one node's
// in-neighbour list (node v, whose list starts at index position lo) and
// returns how many lists pos asks for.
func (c *cachedIndices) eachList(pos []int64, fn func(v, lo int64, i, j int)) (int64, error) {
	var lists int64
	for i := 0; i < len(pos); {
		v := ownerOf(c.indptr, pos[i])
		if v >= int64(len(c.indptr)-1) {
			return lists, fmt.Errorf("ginex: index position %d outside the graph", pos[i])
		}
		lo, hi := c.indptr[v], c.indptr[v+1]
		j := i + 1
		for j < len(pos) && pos[j] >= lo && pos[j] < hi {
			j++
		}
		lists++
		fn(v, lo, i, j)
		i = j
	}
	return lists, nil
}
