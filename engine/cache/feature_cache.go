package cache

// Ginex §3.3 (Fig. 11): the feature cache with direct addressing. An address
// table with one int32 per node holds the row of the cache array that keeps
// the node's feature vector, or -1. The cache is initialised at the start of
// every superbatch from the init list (the "switch") and then updated after
// every iteration's gather from that iteration's changeset: the rows of
// in_ids, found at in_positions of the batch input, overwrite the rows of
// out_ids.

import (
	"errors"
	"fmt"
)

// ErrCacheFull means an insert found no free row.
var ErrCacheFull = errors.New("cache: feature cache full")

// FeatureCache is Ginex's direct-addressed feature cache.
type FeatureCache struct {
	dim     int
	address []int32   // per node: row in data, or -1
	data    []float32 // capacity × dim
	free    []int32   // unused rows, used as a stack
}

// FeatureCacheEntries is how many rows a feature cache of budget bytes
// holds, counting its address table (4 bytes per node) as Ginex's
// FeatureCache does; 0 when the table alone exceeds the budget.
func FeatureCacheEntries(budget, numNodes int64, dim int) int {
	if dim <= 0 {
		return 0
	}
	rest := budget - 4*numNodes
	if rest <= 0 {
		return 0
	}
	return int(rest / (4 * int64(dim)))
}

// NewFeatureCache returns an empty cache of capacity rows of dim float32s
// for a graph of numNodes nodes.
func NewFeatureCache(numNodes int64, dim, capacity int) (*FeatureCache, error) {
	return NewFeatureCacheOn(numNodes, dim, capacity, nil)
}

// NewFeatureCacheOn is NewFeatureCache keeping the rows in rows (at least
// capacity×dim float32s, e.g. allocated outside the Go heap); nil allocates.
func NewFeatureCacheOn(numNodes int64, dim, capacity int, rows []float32) (*FeatureCache, error) {
	if numNodes <= 0 || dim <= 0 || capacity < 0 {
		return nil, fmt.Errorf("cache: feature cache: bad shape nodes=%d dim=%d capacity=%d", numNodes, dim, capacity)
	}
	if rows == nil {
		rows = make([]float32, capacity*dim)
	}
	if len(rows) < capacity*dim {
		return nil, fmt.Errorf("cache: feature cache: %d floats of row memory for %d rows × %d", len(rows), capacity, dim)
	}
	c := &FeatureCache{
		dim:     dim,
		address: make([]int32, numNodes),
		data:    rows[:capacity*dim],
		free:    make([]int32, 0, capacity),
	}
	c.Reset()
	return c, nil
}

// Reset empties the cache: every address is -1 and every row free.
func (c *FeatureCache) Reset() {
	for i := range c.address {
		c.address[i] = -1
	}
	c.free = c.free[:0]
	n := c.Capacity()
	for r := n - 1; r >= 0; r-- {
		c.free = append(c.free, int32(r))
	}
}

// Capacity is the number of rows.
func (c *FeatureCache) Capacity() int { return len(c.data) / c.dim }

// Len is the number of cached nodes.
func (c *FeatureCache) Len() int { return c.Capacity() - len(c.free) }

// Dim is the row length in float32s.
func (c *FeatureCache) Dim() int { return c.dim }

// Bytes is the memory the cache holds: the address table and the rows.
func (c *FeatureCache) Bytes() int64 { return int64(len(c.address))*4 + int64(len(c.data))*4 }

// Slot returns the row holding node v, or -1 (Fig. 10(b)/11 ①).
func (c *FeatureCache) Slot(v int64) int32 { return c.address[v] }

// Row returns the cached vector in row slot; it aliases the cache.
func (c *FeatureCache) Row(slot int32) []float32 {
	o := int(slot) * c.dim
	return c.data[o : o+c.dim : o+c.dim]
}

// Insert copies row into a free row for node v (cache initialisation).
func (c *FeatureCache) Insert(v int64, row []float32) error {
	if len(row) != c.dim {
		return fmt.Errorf("cache: insert node %d: row of %d floats, want %d", v, len(row), c.dim)
	}
	if c.address[v] >= 0 {
		copy(c.Row(c.address[v]), row)
		return nil
	}
	if len(c.free) == 0 {
		return fmt.Errorf("cache: insert node %d: %w", v, ErrCacheFull)
	}
	r := c.free[len(c.free)-1]
	c.free = c.free[:len(c.free)-1]
	c.address[v] = r
	copy(c.Row(r), row)
	return nil
}

// Gather fills out (len(ids) × dim) with the cached rows of ids and returns
// the positions of the ids that missed, appended to miss[:0]; their rows of
// out are left untouched for the caller to read from storage (Fig. 11 ①–③).
func (c *FeatureCache) Gather(ids []int64, out []float32, miss []int) []int {
	miss = miss[:0]
	d := c.dim
	for j, v := range ids {
		r := c.address[v]
		if r < 0 {
			miss = append(miss, j)
			continue
		}
		copy(out[j*d:(j+1)*d], c.data[int(r)*d:int(r)*d+d])
	}
	return miss
}

// Apply performs one changeset (Fig. 11 ④⑤): the rows of cs.InIDs are taken
// from batchInput (the iteration's gathered rows, len(ids) × dim) at
// cs.InPositions and stored in the rows freed by cs.OutIDs, or in free rows
// while the cache fills.
func (c *FeatureCache) Apply(cs Changeset, batchInput []float32) error {
	if len(cs.InIDs) != len(cs.InPositions) {
		return fmt.Errorf("cache: changeset %d: %d in_ids but %d in_positions", cs.Iteration, len(cs.InIDs), len(cs.InPositions))
	}
	for _, v := range cs.OutIDs {
		r := c.address[v]
		if r < 0 {
			return fmt.Errorf("cache: changeset %d: evicted node %d is not cached", cs.Iteration, v)
		}
		c.address[v] = -1
		c.free = append(c.free, r)
	}
	d := c.dim
	for k, v := range cs.InIDs {
		if c.address[v] >= 0 {
			return fmt.Errorf("cache: changeset %d: inserted node %d is already cached", cs.Iteration, v)
		}
		if len(c.free) == 0 {
			return fmt.Errorf("cache: changeset %d: node %d: %w", cs.Iteration, v, ErrCacheFull)
		}
		p := int(cs.InPositions[k])
		if p < 0 || (p+1)*d > len(batchInput) {
			return fmt.Errorf("cache: changeset %d: position %d outside the batch input of %d rows", cs.Iteration, p, len(batchInput)/d)
		}
		r := c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
		c.address[v] = r
		copy(c.data[int(r)*d:int(r)*d+d], batchInput[p*d:(p+1)*d])
	}
	return nil
}
