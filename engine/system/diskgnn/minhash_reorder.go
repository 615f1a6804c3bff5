package diskgnn

// DiskGNN §5.1 "Reordering for global disk cache", Algorithm 1 (Fig. 4):
// the nodes of a disk cache and the graph samples that read them form a
// bipartite graph; nodes required by similar sets of samples should sit in
// the same disk pages, so that one page read serves several of a batch's
// rows. HashOrder-style MinHash finds those sets: draw k random
// permutations H_j of the sample indices; a node's signature is, for each
// j, the smallest H_j(i) over the samples i that contain it; sorting the
// nodes by signature groups nodes with the same (or similar) sample sets.
// Two hash functions are enough ("empirically using 2 hash functions
// provides good reordering quality"), the default here.
//
// Algorithm 1's line 11 writes one running minimum over all k hash
// functions; the artifact (feat_packing.py, _CAPI_SegmentedMinHash) keeps
// one minimum per function and sorts by (h1, h2), i.e. lexicographically,
// which is what a k-function MinHash signature is. minHashOrder follows the
// artifact. Nodes with equal signatures keep their incoming order (the
// caller passes them most accessed first).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// minHasher computes the signatures of Algorithm 1 one sample at a time,
// so a segment's samples can be streamed from disk instead of held.
type minHasher struct {
	k     int
	perms [][]uint32 // perms[j][i] = H_j(i)
	sig   []uint32   // entries × k
}

// newMinHasher prepares signatures for entries cache entries over n
// samples with k hash functions (random permutations of the samples drawn
// from seed).
func newMinHasher(entries, n, k int, seed uint64) (*minHasher, error) {
	if k < 1 {
		return nil, fmt.Errorf("diskgnn: minhash with %d hash functions", k)
	}
	if entries < 0 || entries > math.MaxInt32 || n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("diskgnn: minhash over %d entries and %d samples", entries, n)
	}
	r := rand.New(rand.NewPCG(seed, 0x6d696e68617368)) // "minhash"
	h := &minHasher{k: k, perms: make([][]uint32, k), sig: make([]uint32, entries*k)}
	for j := range h.perms {
		p := make([]uint32, n)
		for i := range p {
			p[i] = uint32(i)
		}
		r.Shuffle(n, func(a, b int) { p[a], p[b] = p[b], p[a] })
		h.perms[j] = p
	}
	for i := range h.sig {
		h.sig[i] = math.MaxUint32
	}
	return h, nil
}

// Add updates the signatures of the entries that sample i reads (lines
// 7–11).
func (h *minHasher) Add(i int, entries []int32) error {
	if len(h.perms[0]) <= i || i < 0 {
		return fmt.Errorf("diskgnn: minhash: sample %d of %d", i, len(h.perms[0]))
	}
	n := int32(len(h.sig) / h.k)
	for _, e := range entries {
		if e < 0 || e >= n {
			return fmt.Errorf("diskgnn: minhash: sample %d reads entry %d of %d", i, e, n)
		}
		row := h.sig[int(e)*h.k : int(e)*h.k+h.k]
		for j := range row {
			row[j] = min(row[j], h.perms[j][i])
		}
	}
	return nil
}

// Order sorts the entries by signature (line 12): order[p] is the entry to
// store at position p. Entries with equal signatures keep their order.
func (h *minHasher) Order() []int32 {
	k := h.k
	order := make([]int32, len(h.sig)/k)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		return slices.Compare(h.sig[int(a)*k:int(a)*k+k], h.sig[int(b)*k:int(b)*k+k])
	})
	return order
}

// minHashOrder reorders the entries of a disk cache. entries is the number
// of cache entries (in their current order); samples[i] lists the entries
// (indices < entries) that sample i of the segment reads. It returns the
// new order: order[p] is the entry stored at position p. k is the number of
// hash functions, seed fixes the permutations.
func minHashOrder(entries int, samples [][]int32, k int, seed uint64) ([]int32, error) {
	h, err := newMinHasher(entries, len(samples), k, seed)
	if err != nil {
		return nil, err
	}
	for i, s := range samples {
		if err := h.Add(i, s); err != nil {
			return nil, err
		}
	}
	return h.Order(), nil
}

// pagesTouched counts, summed over the samples, the distinct pages of
// rowsPerPage rows that each sample reads when entry e is stored at
// position pos[e]: the disk-cache reads of a segment after page merging.
func pagesTouched(samples [][]int32, pos []int32, rowsPerPage int) int64 {
	var total int64
	seen := map[int32]struct{}{}
	for _, s := range samples {
		clear(seen)
		for _, e := range s {
			seen[pos[e]/int32(rowsPerPage)] = struct{}{}
		}
		total += int64(len(seen))
	}
	return total
}

// positions inverts an order: pos[order[p]] = p.
func positions(order []int32) []int32 {
	pos := make([]int32, len(order))
	for p, e := range order {
		pos[e] = int32(p)
	}
	return pos
}
