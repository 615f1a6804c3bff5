package cache

// A static cache that holds the highest-scoring nodes for the whole run, the
// PaGraph policy (nodes by descending out-degree) that Ginex compares its
// Belady cache against (Ginex §2.3, Fig. 5 and Fig. 15 "Ginex-PG").

import (
	"cmp"
	"fmt"
	"slices"
)

// TopByScore returns the k node ids (indices into score) with the highest
// score, highest first; ties go to the smaller id and k is clamped to
// [0, len(score)]. It picks what a static cache pins: PaGraph's nodes by
// out-degree (Ginex's baseline), GIDS's CPU buffer by reverse PageRank.
func TopByScore[T cmp.Ordered](score []T, k int) []int64 {
	k = min(max(k, 0), len(score))
	order := make([]int64, len(score))
	for i := range order {
		order[i] = int64(i)
	}
	slices.SortFunc(order, func(a, b int64) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return cmp.Compare(a, b)
	})
	return order[:k:k]
}

// StaticCache is a fixed set of nodes with direct addressing: slot[v] is the
// node's row among the cached ones, or -1.
type StaticCache struct {
	slot  []int32
	nodes []int64
}

// NewStaticCache caches the given nodes of a graph of numNodes nodes.
func NewStaticCache(numNodes int64, nodes []int64) (*StaticCache, error) {
	c := &StaticCache{slot: make([]int32, numNodes), nodes: slices.Clone(nodes)}
	for i := range c.slot {
		c.slot[i] = -1
	}
	for i, v := range nodes {
		if v < 0 || v >= numNodes {
			return nil, fmt.Errorf("cache: static cache: node %d out of range [0,%d)", v, numNodes)
		}
		if c.slot[v] >= 0 {
			return nil, fmt.Errorf("cache: static cache: node %d listed twice", v)
		}
		c.slot[v] = int32(i)
	}
	return c, nil
}

// Slot returns v's row, or -1.
func (c *StaticCache) Slot(v int64) int32 { return c.slot[v] }

// Nodes are the cached nodes in row order.
func (c *StaticCache) Nodes() []int64 { return c.nodes }

// SimulateStatic replays a trace through a static cache: its rows are
// loaded once before the first iteration, every other lookup reads storage.
func SimulateStatic(tr Trace, c *StaticCache) (SimStats, error) {
	st := SimStats{InitLoads: int64(len(c.nodes))}
	for i := 0; i < tr.Len(); i++ {
		ids, err := tr.IDs(i)
		if err != nil {
			return st, err
		}
		for _, v := range ids {
			st.Accesses++
			if c.slot[v] < 0 {
				st.Misses++
			}
		}
	}
	return st, nil
}
