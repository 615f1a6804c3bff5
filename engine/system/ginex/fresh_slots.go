package ginex

// DESIGN §5's one hit-ratio definition: a lookup is a hit only if served
// from memory without a device read in the epoch. Ginex's switch (§3.4,
// feature-cache initialisation) reads each superbatch's initial cache
// entries from features.bin; the first lookup of each such row is served
// by that device read, so it counts as the device tier, and only later
// lookups of it are cache hits. freshSlots marks, per cache slot, a row
// the switch read that no lookup has used yet.
//
// Under the Belady policy the initial entries are the first distinct rows
// the superbatch accesses, so no changeset evicts one before its first
// use; evicted() still clears an evicted slot's mark, so a slot refilled by
// a changeset is never taken for a fresh row (switch_rows_unused counts
// those and, under policy static, rows of the static set never used).

import "outcore/engine/cache"

type freshSlots struct {
	bits []uint64
	left int // marked slots
}

// newFreshSlots marks the slots of ids, just inserted into fc.
func newFreshSlots(fc *cache.FeatureCache, ids []int64) *freshSlots {
	f := &freshSlots{bits: make([]uint64, (fc.Capacity()+63)/64)}
	for _, v := range ids {
		if s := fc.Slot(v); s >= 0 {
			f.set(s)
		}
	}
	return f
}

func (f *freshSlots) set(s int32) {
	w, b := s>>6, uint64(1)<<(s&63)
	if f.bits[w]&b == 0 {
		f.bits[w] |= b
		f.left++
	}
}

// take clears slot s's mark and reports whether it was set.
func (f *freshSlots) take(s int32) bool {
	w, b := s>>6, uint64(1)<<(s&63)
	if f.bits[w]&b == 0 {
		return false
	}
	f.bits[w] &^= b
	f.left--
	return true
}

// firstUses counts, and unmarks, the rows of a gather that hit a fresh
// slot: ids are the gather's rows, miss the positions that missed (in
// increasing order, cache.FeatureCache.Gather's result).
func (f *freshSlots) firstUses(fc *cache.FeatureCache, ids []int64, miss []int) int64 {
	if f.left == 0 {
		return 0
	}
	var n int64
	k := 0
	for j, v := range ids {
		if k < len(miss) && miss[k] == j {
			k++
			continue
		}
		if s := fc.Slot(v); s >= 0 && f.take(s) {
			n++
		}
	}
	return n
}

// evicted unmarks the slots of rows a changeset is about to evict.
func (f *freshSlots) evicted(fc *cache.FeatureCache, out []int64) {
	if f.left == 0 {
		return
	}
	for _, v := range out {
		if s := fc.Slot(v); s >= 0 {
			f.take(s)
		}
	}
}
