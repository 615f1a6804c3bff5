package gids

// The weighted reverse PageRank that chooses the nodes of the constant CPU
// buffer (GIDS §3.3, after Data Tiering [25]; artifact
// page_rank_node_list_gen.py, damping 0.85, 20 iterations, top-k of the
// scores pinned in the buffer).
//
// Neighbour sampling reaches a node u from every node v whose neighbour
// list holds u, so u's access frequency is the sum, over those v, of v's
// own frequency times the chance that v's sample picks u. The score
// therefore flows against the sampling direction ("reverse"): from v to
// each node of v's list, weighted by that chance ("weighted"),
//
//	w(v) = min(1, f / deg(v))   (f: the fanout; a fanout of 0 gives
//	                            w(v) = 1/deg(v), plain reverse PageRank),
//
// and with PageRank's damping d and uniform teleport:
//
//	r'(u) = (1 − d)/N + d · Σ_{v : u ∈ list(v)} w(v) · r(v),  then r' /= Σ r'.
//
// The normalisation keeps the scores a distribution when the weights do
// not conserve mass (w(v)·deg(v) = min(deg(v), f) ≠ 1; nodes with empty
// lists pass nothing on). The artifact ran plain PageRank over DGL's edge
// direction on graphs stored with both directions, where the two agree up
// to the weights.

import (
	"fmt"
	"math"
)

// PageRankConfig configures ReversePageRank.
type PageRankConfig struct {
	// Damping is d (default 0.85).
	Damping float64
	// Iterations of the power method (default 20).
	Iterations int
	// Fanout f weighs each list by the chance that a sample of f
	// neighbours picks a given entry; 0 weighs by 1/deg.
	Fanout int
}

func (c *PageRankConfig) defaults() error {
	if c.Damping == 0 {
		c.Damping = 0.85
	}
	if c.Iterations == 0 {
		c.Iterations = 20
	}
	switch {
	case !(c.Damping > 0 && c.Damping < 1):
		return fmt.Errorf("gids: reverse PageRank: damping %v, want 0 < d < 1", c.Damping)
	case c.Iterations < 1:
		return fmt.Errorf("gids: reverse PageRank: %d iterations, want >= 1", c.Iterations)
	case c.Fanout < 0:
		return fmt.Errorf("gids: reverse PageRank: fanout %d, want >= 0", c.Fanout)
	}
	return nil
}

// Weight is w(v) for a node whose list has deg entries.
func (c PageRankConfig) Weight(deg int64) float64 {
	if deg <= 0 {
		return 0
	}
	if c.Fanout == 0 {
		return 1 / float64(deg)
	}
	return math.Min(1, float64(c.Fanout)/float64(deg))
}

// ReversePageRank returns the weighted reverse PageRank score of every
// node of the graph whose node v has the neighbour list
// indices[indptr[v]:indptr[v+1]] (the lists the sampler draws from).
func ReversePageRank(indptr, indices []int64, cfg PageRankConfig) ([]float64, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if len(indptr) < 1 || indptr[0] != 0 || indptr[len(indptr)-1] != int64(len(indices)) {
		return nil, fmt.Errorf("gids: reverse PageRank: indptr does not span the %d indices", len(indices))
	}
	n := len(indptr) - 1
	if n == 0 {
		return nil, nil
	}
	for v := 0; v < n; v++ {
		if indptr[v+1] < indptr[v] {
			return nil, fmt.Errorf("gids: reverse PageRank: indptr decreases at node %d", v)
		}
	}
	for i, u := range indices {
		if u < 0 || u >= int64(n) {
			return nil, fmt.Errorf("gids: reverse PageRank: neighbour %d (entry %d) out of range [0,%d)", u, i, n)
		}
	}
	r := make([]float64, n)
	next := make([]float64, n)
	for i := range r {
		r[i] = 1 / float64(n)
	}
	teleport := (1 - cfg.Damping) / float64(n)
	for it := 0; it < cfg.Iterations; it++ {
		clear(next)
		for v := 0; v < n; v++ {
			lo, hi := indptr[v], indptr[v+1]
			if lo == hi {
				continue
			}
			c := cfg.Weight(hi-lo) * r[v]
			for _, u := range indices[lo:hi] {
				next[u] += c
			}
		}
		var sum float64
		for u := range next {
			next[u] = teleport + cfg.Damping*next[u]
			sum += next[u]
		}
		for u := range next {
			next[u] /= sum
		}
		r, next = next, r
	}
	return r, nil
}
