package diskgnn

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMinHashFig4 is Fig. 4's example: pages of two rows; batches that
// read {0,2}, {4,6}, {1,3}, {5,7}. In id order each batch touches two
// pages; after reordering, nodes read by the same batch share a page.
func TestMinHashFig4(t *testing.T) {
	samples := [][]int32{{0, 2}, {4, 6}, {1, 3}, {5, 7}}
	identity := positions([]int32{0, 1, 2, 3, 4, 5, 6, 7})
	if got := pagesTouched(samples, identity, 2); got != 8 {
		t.Fatalf("identity order touches %d pages, want 8", got)
	}
	for seed := uint64(0); seed < 20; seed++ {
		order, err := minHashOrder(8, samples, 2, seed)
		if err != nil {
			t.Fatal(err)
		}
		if got := pagesTouched(samples, positions(order), 2); got != 4 {
			t.Fatalf("seed %d: order %v touches %d pages, want 4", seed, order, got)
		}
	}
}

func isPermutation(order []int32) bool {
	s := slices.Clone(order)
	slices.Sort(s)
	for i, v := range s {
		if v != int32(i) {
			return false
		}
	}
	return true
}

// TestMinHashLowersPagesTouched is the property behind §5.1: on random
// segments whose batches draw mostly from a few communities (nodes of a
// community scattered over the id space), MinHash reordering lowers the
// number of pages the batches touch against the identity order.
func TestMinHashLowersPagesTouched(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for trial := 0; trial < 40; trial++ {
		entries := 200 + r.IntN(800)
		communities := 4 + r.IntN(12)
		// community of each entry, ids scattered at random
		comm := make([]int, entries)
		members := make([][]int32, communities)
		for e := range comm {
			comm[e] = r.IntN(communities)
			members[comm[e]] = append(members[comm[e]], int32(e))
		}
		n := 10 + r.IntN(40)
		samples := make([][]int32, n)
		for i := range samples {
			c := r.IntN(communities)
			seen := map[int32]bool{}
			for j := 0; j < 20+r.IntN(40); j++ {
				var e int32
				if r.IntN(10) < 8 && len(members[c]) > 0 {
					e = members[c][r.IntN(len(members[c]))]
				} else {
					e = int32(r.IntN(entries))
				}
				if !seen[e] {
					seen[e] = true
					samples[i] = append(samples[i], e)
				}
			}
		}
		identity := make([]int32, entries)
		for i := range identity {
			identity[i] = int32(i)
		}
		order, err := minHashOrder(entries, samples, 2, uint64(trial))
		if err != nil {
			t.Fatal(err)
		}
		if len(order) != entries || !isPermutation(order) {
			t.Fatalf("trial %d: not a permutation of %d entries", trial, entries)
		}
		before := pagesTouched(samples, positions(identity), 8)
		after := pagesTouched(samples, positions(order), 8)
		if after >= before {
			t.Fatalf("trial %d: %d pages after reordering, %d before", trial, after, before)
		}
	}
}

func TestMinHashBadInput(t *testing.T) {
	if _, err := minHashOrder(3, [][]int32{{3}}, 2, 1); err == nil {
		t.Fatal("entry out of range accepted")
	}
	if _, err := minHashOrder(3, nil, 0, 1); err == nil {
		t.Fatal("zero hash functions accepted")
	}
	order, err := minHashOrder(3, nil, 2, 1)
	if err != nil || !slices.Equal(order, []int32{0, 1, 2}) {
		t.Fatalf("no samples: %v %v, want the incoming order", order, err)
	}
}

// TestSegmentBuilderWithoutReordering: with no hash functions (option
// reorder=none) a segment's disk cache keeps its entries in node order;
// with MinHash the same entries are stored, in signature order.
func TestSegmentBuilderWithoutReordering(t *testing.T) {
	samples := [][]int64{{9, 1, 5, 7}, {5, 9, 3}, {7, 3, 1, 8}, {8, 1, 9}}
	plan, err := planTiers(make([]int32, 10), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	build := func(hashes int) []int32 {
		b := newSegmentBuilder(&plan, 100, hashes, 1)
		for _, s := range samples {
			b.Count(s)
		}
		if err := b.Choose(len(samples), 0); err != nil {
			t.Fatal(err)
		}
		if b.Reorders() != (hashes > 0) {
			t.Fatalf("%d hash functions: Reorders %v", hashes, b.Reorders())
		}
		for i, s := range samples {
			if err := b.Hash(i, s); err != nil {
				t.Fatal(err)
			}
		}
		return slices.Clone(b.Reorder())
	}
	none, mh := build(0), build(2)
	// nodes read by two samples or more, in node order
	if want := []int32{1, 3, 5, 7, 8, 9}; !slices.Equal(none, want) {
		t.Fatalf("reorder=none: entries %v, want node order %v", none, want)
	}
	if s := slices.Sorted(slices.Values(mh)); !slices.Equal(s, none) {
		t.Fatalf("minhash stores entries %v, without reordering %v: not the same set", mh, none)
	}
}
