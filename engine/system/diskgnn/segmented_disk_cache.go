package diskgnn

// DiskGNN §5.1 "Local reordering for segmented disk cache": the graph
// samples are cut into segments of s consecutive samples (s from Algorithm
// 2, segment_search.go); each segment has its own disk cache holding, once,
// the cold features that several of its samples read, reordered by MinHash
// over the segment's samples (Algorithm 1, minhash_reorder.go). Everything
// else a sample needs from disk is packed into its own chunk. The disk
// cache of a segment holds at most m entries (Algorithm 2's m): the nodes
// its samples access more than once, the most accessed first when there
// are more than m (the artifact: argsort of the segment's popularity,
// min(m, |count > 1|) entries).
//
// A segmentBuilder builds one segment at a time in three passes over the
// segment's samples, reading each sample's input nodes again each time
// rather than keeping them in memory:
//
//  1. Count the cold inputs (not in the GPU or CPU cache) of each sample.
//  2. Choose the entries and feed each sample's entries to MinHash.
//  3. Classify each sample's inputs into the chunk header's four lists
//     (cache slot, disk-cache row, packed) — the interpreted addresses.
//
// With no hash functions (option reorder=none, Fig. 5a's "No-reorder"
// baseline) pass 2 is skipped: the disk cache keeps its entries in node
// order, the feature table's, as the disk features are "before
// reordering" in Fig. 4.

import (
	"fmt"
	"slices"
)

// segmentBuilder holds the node-sized scratch of the segment passes.
type segmentBuilder struct {
	slot    []int32 // tierPlan.Slot
	slots   int32   // cached nodes (slots in use)
	m       int64
	hashes  int
	seed    uint64
	count   []int32 // per node: accesses in this segment (cold inputs only)
	loc     []int32 // per node: row in this segment's disk cache, or -1
	touched []int32
	entries []int32 // this segment's disk cache, file order
	mh      *minHasher
	scratch []int32
	pairs   []posPair
}

type posPair struct{ key, pos int32 }

// newSegmentBuilder prepares segment passes for the tier plan's slot table,
// at most m disk-cache entries per segment, MinHash with hashes functions
// and seed (0 functions: no reordering, the entries in node order).
func newSegmentBuilder(plan *tierPlan, m int64, hashes int, seed uint64) *segmentBuilder {
	b := &segmentBuilder{slot: plan.Slot, slots: int32(plan.Cached()), m: m, hashes: hashes, seed: seed,
		count: make([]int32, len(plan.Slot)), loc: make([]int32, len(plan.Slot))}
	for i := range b.loc {
		b.loc[i] = -1
	}
	return b
}

// Count is pass 1 for one sample of the segment.
func (b *segmentBuilder) Count(inputs []int64) {
	for _, v := range inputs {
		if b.slot[v] >= 0 {
			continue
		}
		if b.count[v] == 0 {
			b.touched = append(b.touched, int32(v))
		}
		b.count[v]++
	}
}

// Choose ends pass 1: it selects the segment's disk-cache entries (nodes
// accessed more than once, at most m, most accessed first, ties by id) and
// starts MinHash over the segment's samples (n of them).
func (b *segmentBuilder) Choose(n int, segment int) error {
	b.entries = b.entries[:0]
	for _, v := range b.touched {
		if b.count[v] > 1 {
			b.entries = append(b.entries, v)
		}
	}
	slices.SortFunc(b.entries, func(x, y int32) int {
		if c := b.count[y] - b.count[x]; c != 0 {
			return int(c)
		}
		return int(x - y)
	})
	if int64(len(b.entries)) > b.m {
		b.entries = b.entries[:b.m]
	}
	for i, v := range b.entries {
		b.loc[v] = int32(i) // entry index until Reorder
	}
	if b.hashes == 0 {
		return nil
	}
	var err error
	b.mh, err = newMinHasher(len(b.entries), n, b.hashes, b.seed+uint64(segment)*0x9e3779b97f4a7c15)
	return err
}

// Reorders reports whether pass 2 runs (MinHash reordering is on).
func (b *segmentBuilder) Reorders() bool { return b.hashes > 0 }

// Hash is pass 2 for sample i (0-based within the segment); a no-op
// without reordering.
func (b *segmentBuilder) Hash(i int, inputs []int64) error {
	if b.mh == nil {
		return nil
	}
	b.scratch = b.scratch[:0]
	for _, v := range inputs {
		if e := b.loc[v]; e >= 0 {
			b.scratch = append(b.scratch, e)
		}
	}
	return b.mh.Add(i, b.scratch)
}

// Reorder ends pass 2: it sorts the entries by MinHash signature (without
// reordering: by node id) and returns them in disk-cache file order (valid
// until Done).
func (b *segmentBuilder) Reorder() []int32 {
	if b.mh == nil {
		slices.Sort(b.entries)
		for p, v := range b.entries {
			b.loc[v] = int32(p)
		}
		return b.entries
	}
	order := b.mh.Order()
	sorted := make([]int32, len(order))
	for p, e := range order {
		sorted[p] = b.entries[e]
	}
	copy(b.entries, sorted)
	for p, v := range b.entries {
		b.loc[v] = int32(p)
	}
	b.mh = nil
	return b.entries
}

// Classify is pass 3 for one sample: it fills h's lists (h.Batch and
// h.Segment are the caller's) and appends the packed node ids, ascending,
// to packed[:0].
func (b *segmentBuilder) Classify(inputs []int64, h *chunkHeader, packed []int32) ([]int32, error) {
	if len(inputs) > 1<<31-1 {
		return packed, fmt.Errorf("diskgnn: %d inputs in one sample", len(inputs))
	}
	h.Inputs = int32(len(inputs))
	h.CacheSlot, h.CachePos = h.CacheSlot[:0], h.CachePos[:0]
	disk := b.pairs[:0]
	var pk []posPair
	for p, v := range inputs {
		switch {
		case b.slot[v] >= 0:
			h.CacheSlot = append(h.CacheSlot, b.slot[v])
			h.CachePos = append(h.CachePos, int32(p))
		case b.loc[v] >= 0:
			disk = append(disk, posPair{b.loc[v], int32(p)})
		default:
			pk = append(pk, posPair{int32(v), int32(p)})
		}
	}
	cmp := func(x, y posPair) int { return int(x.key - y.key) }
	slices.SortFunc(disk, cmp)
	slices.SortFunc(pk, cmp)
	h.DiskLoc, h.DiskPos = h.DiskLoc[:0], h.DiskPos[:0]
	for _, d := range disk {
		h.DiskLoc = append(h.DiskLoc, d.key)
		h.DiskPos = append(h.DiskPos, d.pos)
	}
	h.PackedPos = h.PackedPos[:0]
	packed = packed[:0]
	for _, d := range pk {
		packed = append(packed, d.key)
		h.PackedPos = append(h.PackedPos, d.pos)
	}
	b.pairs = disk[:0]
	return packed, nil
}

// Done clears the segment's state for the next one.
func (b *segmentBuilder) Done() {
	for _, v := range b.touched {
		b.count[v] = 0
		b.loc[v] = -1
	}
	b.touched = b.touched[:0]
	b.entries = b.entries[:0]
}

// Slots is the number of memory-tier slots (for chunk validation).
func (b *segmentBuilder) Slots() int32 { return b.slots }
