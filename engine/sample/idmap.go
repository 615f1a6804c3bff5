package sample

// idMap assigns local ids to global node ids within one batch. Small graphs
// use a dense array stamped with a generation number (reset is O(1)); large
// graphs use an open-addressing hash table whose slots are stamped the same
// way, so its memory follows the batch size, not the graph size.
type idMap struct {
	gen uint32
	// dense mode: stamp[v] == gen means v has local id local[v].
	stamp []uint32
	local []int32
	// hash mode.
	h hashMap
}

// denseLimit is the largest node count for which a sampler keeps dense
// per-node arrays (8 bytes per node per sampler). Above it the hash table
// (16 bytes per slot, at most half full) is smaller for mini-batches of up
// to a sixth of the graph, and memory budgets are counted per sampler.
const denseLimit = 1 << 20

// IDMapBytes is the memory one sampler's id map holds on a graph of nodes
// nodes for mini-batches of up to batchNodes distinct nodes.
func IDMapBytes(nodes int64, batchNodes int) int64 {
	if nodes <= denseLimit {
		return nodes * 8
	}
	c := int64(16)
	for c < 2*int64(batchNodes) {
		c <<= 1
	}
	return c * 16
}

func newIDMap(nodes int64) idMap {
	if nodes <= denseLimit {
		return idMap{stamp: make([]uint32, nodes), local: make([]int32, nodes)}
	}
	return idMap{h: newHashMap(1 << 12)}
}

// reset forgets every mapping.
func (m *idMap) reset() {
	if m.stamp == nil {
		m.h.reset()
		return
	}
	m.gen++
	if m.gen == 0 { // wrapped: stale stamps could collide
		clear(m.stamp)
		m.gen = 1
	}
}

// getOrAdd returns v's local id, assigning next when v is new (added=true).
func (m *idMap) getOrAdd(v int64, next int32) (id int32, added bool) {
	if m.stamp == nil {
		return m.h.getOrAdd(v, next)
	}
	if m.stamp[v] == m.gen {
		return m.local[v], false
	}
	m.stamp[v] = m.gen
	m.local[v] = next
	return next, true
}

// hashMap is an open-addressing (linear probing) int64 → int32 table with
// generation-stamped slots.
type hashMap struct {
	gen   uint32
	n     int
	mask  uint64
	keys  []int64
	vals  []int32
	stamp []uint32
}

func newHashMap(size int) hashMap {
	c := 16
	for c < size {
		c <<= 1
	}
	return hashMap{gen: 1, mask: uint64(c - 1), keys: make([]int64, c), vals: make([]int32, c), stamp: make([]uint32, c)}
}

func (h *hashMap) reset() {
	h.n = 0
	h.gen++
	if h.gen == 0 {
		clear(h.stamp)
		h.gen = 1
	}
}

func hash64(v int64) uint64 {
	x := uint64(v) * 0x9e3779b97f4a7c15
	return x ^ (x >> 29)
}

func (h *hashMap) getOrAdd(v int64, next int32) (int32, bool) {
	if 2*(h.n+1) > len(h.keys) {
		h.grow()
	}
	i := hash64(v) & h.mask
	for {
		if h.stamp[i] != h.gen {
			h.stamp[i] = h.gen
			h.keys[i] = v
			h.vals[i] = next
			h.n++
			return next, true
		}
		if h.keys[i] == v {
			return h.vals[i], false
		}
		i = (i + 1) & h.mask
	}
}

func (h *hashMap) grow() {
	old := *h
	*h = newHashMap(2 * len(old.keys))
	for i, s := range old.stamp {
		if s == old.gen {
			h.getOrAdd(old.keys[i], old.vals[i])
		}
	}
}
