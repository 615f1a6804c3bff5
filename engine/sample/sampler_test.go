package sample

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"outcore/engine/graph"
)

// randomGraph builds a CSC graph of n nodes whose in-degrees vary from 0 to
// maxDeg, with distinct in-neighbours per node.
func randomGraph(n, maxDeg int, seed uint64) Topology {
	r := rand.New(rand.NewPCG(seed, 7))
	indptr := make([]int64, n+1)
	var idx []int64
	set := map[int64]bool{}
	for v := 0; v < n; v++ {
		d := min(r.IntN(maxDeg+1), n)
		clear(set)
		for len(set) < d {
			set[int64(r.IntN(n))] = true
		}
		start := len(idx)
		for u := range set {
			idx = append(idx, u)
		}
		slices.Sort(idx[start:])
		indptr[v+1] = int64(len(idx))
	}
	return Topology{Indptr: indptr, Indices: MemIndices(idx)}
}

// checkBatch asserts the structural invariants of a sampled mini-batch.
func checkBatch(t *testing.T, topo Topology, fanouts []int, seeds []int64, mb *graph.MiniBatch) {
	t.Helper()
	L := len(fanouts)
	if len(mb.Blocks) != L {
		t.Fatalf("%d blocks, want %d", len(mb.Blocks), L)
	}
	if !slices.Equal(mb.InputNodes[:len(seeds)], seeds) {
		t.Fatal("seeds are not the prefix of the input nodes")
	}
	seen := map[int64]bool{}
	for _, v := range mb.InputNodes {
		if seen[v] {
			t.Fatalf("input node %d appears twice", v)
		}
		seen[v] = true
	}
	if mb.Blocks[L-1].NumDst != len(seeds) {
		t.Fatalf("output block has %d dst, want %d seeds", mb.Blocks[L-1].NumDst, len(seeds))
	}
	if mb.Blocks[0].NumSrc != len(mb.InputNodes) {
		t.Fatalf("input block has %d src, %d input nodes", mb.Blocks[0].NumSrc, len(mb.InputNodes))
	}
	idx := topo.Indices.(MemIndices)
	for l := 0; l < L; l++ {
		b := mb.Blocks[l]
		hop := L - 1 - l
		if l+1 < L && mb.Blocks[l+1].NumSrc != b.NumDst {
			t.Fatalf("block %d dst %d != block %d src %d", l, b.NumDst, l+1, mb.Blocks[l+1].NumSrc)
		}
		if b.NumDst > b.NumSrc || len(b.Indptr) != b.NumDst+1 || int(b.Indptr[b.NumDst]) != len(b.Indices) {
			t.Fatalf("block %d shape: dst %d src %d indptr %d indices %d", l, b.NumDst, b.NumSrc, len(b.Indptr), len(b.Indices))
		}
		if len(b.SrcDeg) != b.NumSrc || len(b.DstDeg) != b.NumDst {
			t.Fatalf("block %d degree lengths %d/%d", l, len(b.SrcDeg), len(b.DstDeg))
		}
		for i := 0; i < b.NumDst; i++ {
			v := mb.InputNodes[i]
			full := idx[topo.Indptr[v]:topo.Indptr[v+1]]
			if int(b.DstDeg[i]) != len(full) {
				t.Fatalf("DstDeg[%d] = %d, degree %d", i, b.DstDeg[i], len(full))
			}
			nb := b.Indices[b.Indptr[i]:b.Indptr[i+1]]
			want := len(full)
			if fanouts[hop] != All {
				want = min(want, fanouts[hop])
			}
			if len(nb) != want {
				t.Fatalf("block %d dst %d (node %d, deg %d, fanout %d): %d neighbours, want %d", l, i, v, len(full), fanouts[hop], len(nb), want)
			}
			got := map[int64]bool{}
			for _, loc := range nb {
				if int(loc) >= b.NumSrc || loc < 0 {
					t.Fatalf("local id %d outside src %d", loc, b.NumSrc)
				}
				u := mb.InputNodes[loc]
				if got[u] {
					t.Fatalf("node %d sampled neighbour %d twice (replacement)", v, u)
				}
				got[u] = true
				if !slices.Contains(full, u) {
					t.Fatalf("node %d got %d, not an in-neighbour", v, u)
				}
			}
		}
		for i := 0; i < b.NumSrc; i++ {
			v := mb.InputNodes[i]
			if int64(b.SrcDeg[i]) != topo.Degree(v) {
				t.Fatalf("SrcDeg wrong")
			}
		}
	}
}

func TestSampleInvariants(t *testing.T) {
	tests := []struct {
		name    string
		n, deg  int
		fanouts []int
		batch   int
	}{
		{"3 hops 10", 500, 40, []int{10, 10, 10}, 64},
		{"all neighbours", 300, 12, []int{All, All}, 32},
		{"mixed", 400, 30, []int{5, All, 3}, 50},
		{"large fanout uses hash set", 300, 200, []int{100, 70}, 8},
		{"fanout above degree", 200, 5, []int{20}, 100},
		{"single seed", 100, 10, []int{4, 4}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo := randomGraph(tc.n, tc.deg, 1)
			s, err := New(topo, tc.fanouts, 42)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]int64, tc.n)
			for i := range ids {
				ids[i] = int64(i)
			}
			var mb graph.MiniBatch
			bs := EpochBatches(ids, tc.batch, 3, 0)
			for bi, seeds := range bs[:min(3, len(bs))] {
				if err := s.SampleInto(&mb, 0, bi, seeds); err != nil {
					t.Fatal(err)
				}
				checkBatch(t, topo, tc.fanouts, seeds, &mb)
			}
		})
	}
}

func TestAllTakesEveryNeighbour(t *testing.T) {
	topo := randomGraph(200, 30, 2)
	s, _ := New(topo, []int{All}, 1)
	mb, err := s.Sample(0, 0, []int64{5, 17, 99})
	if err != nil {
		t.Fatal(err)
	}
	idx := topo.Indices.(MemIndices)
	b := mb.Blocks[0]
	for i, v := range mb.Seeds {
		var got []int64
		for _, loc := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
			got = append(got, mb.InputNodes[loc])
		}
		if !slices.Equal(got, idx[topo.Indptr[v]:topo.Indptr[v+1]]) {
			t.Fatalf("node %d: got %v want full list", v, got)
		}
	}
}

func TestDeterministicAnyOrderAnyWorker(t *testing.T) {
	topo := randomGraph(2000, 50, 3)
	ids := make([]int64, 2000)
	for i := range ids {
		ids[i] = int64(i)
	}
	batches := EpochBatches(ids, 100, 9, 4)
	s, _ := New(topo, []int{10, 10, 10}, 9)
	ref := make([]*graph.MiniBatch, len(batches))
	for i, seeds := range batches {
		mb, err := s.Sample(4, i, seeds)
		if err != nil {
			t.Fatal(err)
		}
		ref[i] = mb
	}
	// Reverse order, four workers with cloned samplers.
	got := make([]*graph.MiniBatch, len(batches))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int, s *Sampler) {
			defer wg.Done()
			for i := len(batches) - 1 - w; i >= 0; i -= 4 {
				mb, err := s.Sample(4, i, batches[i])
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = mb
			}
		}(w, s.Clone())
	}
	wg.Wait()
	for i := range ref {
		if !sameBatch(ref[i], got[i]) {
			t.Fatalf("batch %d differs between sequential and parallel reverse-order sampling", i)
		}
	}
	// A different epoch or seed changes the sample.
	other, _ := s.Sample(5, 0, batches[0])
	if sameBatch(ref[0], other) {
		t.Fatal("epoch 5 batch 0 equals epoch 4 batch 0")
	}
	s2, _ := New(topo, []int{10, 10, 10}, 10)
	other, _ = s2.Sample(4, 0, batches[0])
	if sameBatch(ref[0], other) {
		t.Fatal("seed 10 equals seed 9")
	}
	if !slices.Equal(EpochBatches(ids, 100, 9, 4)[3], batches[3]) {
		t.Fatal("EpochBatches not deterministic")
	}
	if slices.Equal(EpochBatches(ids, 100, 9, 5)[0], batches[0]) {
		t.Fatal("EpochBatches same order in two epochs")
	}
}

func sameBatch(a, b *graph.MiniBatch) bool {
	if !slices.Equal(a.InputNodes, b.InputNodes) || len(a.Blocks) != len(b.Blocks) {
		return false
	}
	for i := range a.Blocks {
		x, y := a.Blocks[i], b.Blocks[i]
		if x.NumSrc != y.NumSrc || x.NumDst != y.NumDst || !slices.Equal(x.Indptr, y.Indptr) || !slices.Equal(x.Indices, y.Indices) {
			return false
		}
	}
	return true
}

// TestUniformity samples 3 of one node's 12 neighbours many times: each
// neighbour must appear with probability 3/12 (chi-square), and each of the
// C(12,3)=220 subsets about equally often.
func TestUniformity(t *testing.T) {
	const d, k, trials = 12, 3, 44000
	indptr := []int64{0, d}
	idx := make([]int64, d)
	for i := range idx {
		idx[i] = int64(i) // node 0's neighbours are 0..11; pad nodes below
	}
	indptr = append(make([]int64, 0, d+1), 0)
	indptr = append(indptr, d)
	for i := 1; i < d; i++ {
		indptr = append(indptr, d)
	}
	topo := Topology{Indptr: indptr, Indices: MemIndices(idx)}
	s, err := New(topo, []int{k}, 123)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, d)
	subsets := map[[k]int64]int{}
	for b := 0; b < trials; b++ {
		mb, err := s.Sample(0, b, []int64{0})
		if err != nil {
			t.Fatal(err)
		}
		blk := mb.Blocks[0]
		var key [k]int64
		for j, loc := range blk.Indices {
			u := mb.InputNodes[loc]
			counts[u]++
			key[j] = u
		}
		slices.Sort(key[:])
		subsets[key]++
	}
	// Per-neighbour chi-square, 11 degrees of freedom: 99.9% quantile 31.3.
	exp := float64(trials) * k / d
	chi := 0.0
	for _, c := range counts {
		chi += (c - exp) * (c - exp) / exp
	}
	if chi > 31.3 {
		t.Fatalf("neighbour frequencies not uniform: chi2=%.1f counts=%v", chi, counts)
	}
	// Subset chi-square, 219 degrees of freedom: 99.9% quantile about 294.
	if len(subsets) != 220 {
		t.Fatalf("%d distinct subsets, want 220", len(subsets))
	}
	e := float64(trials) / 220
	chi = 0
	for _, c := range subsets {
		chi += (float64(c) - e) * (float64(c) - e) / e
	}
	if chi > 294 {
		t.Fatalf("subset frequencies not uniform: chi2=%.1f", chi)
	}
}

func TestUniformityLargeFanout(t *testing.T) {
	// Floyd with the hash set (k > 64): 100 of 300.
	const d, k, trials = 300, 100, 3000
	indptr := make([]int64, d+1)
	for i := 1; i <= d; i++ {
		indptr[i] = d
	}
	idx := make([]int64, d)
	for i := range idx {
		idx[i] = int64(i)
	}
	s, _ := New(Topology{Indptr: indptr, Indices: MemIndices(idx)}, []int{k}, 5)
	counts := make([]float64, d)
	for b := 0; b < trials; b++ {
		mb, _ := s.Sample(1, b, []int64{0})
		for _, loc := range mb.Blocks[0].Indices {
			counts[mb.InputNodes[loc]]++
		}
	}
	exp := float64(trials) * k / d
	chi := 0.0
	for _, c := range counts {
		chi += (c - exp) * (c - exp) / exp
	}
	// 299 degrees of freedom; the 99.9% quantile is about 386. Without
	// replacement the variance is smaller than binomial, so this is loose.
	if chi > 386 {
		t.Fatalf("chi2=%.1f", chi)
	}
}

func TestBadInput(t *testing.T) {
	topo := randomGraph(50, 5, 4)
	if _, err := New(topo, nil, 0); err == nil {
		t.Fatal("no fanouts accepted")
	}
	if _, err := New(topo, []int{10, 0}, 0); err == nil {
		t.Fatal("fanout 0 accepted")
	}
	if _, err := New(topo, []int{-2}, 0); err == nil {
		t.Fatal("fanout -2 accepted")
	}
	bad := Topology{Indptr: []int64{0, 3, 2}, Indices: MemIndices{0, 1, 2}}
	if _, err := New(bad, []int{1}, 0); err == nil {
		t.Fatal("decreasing indptr accepted")
	}
	s, _ := New(topo, []int{3}, 0)
	if _, err := s.Sample(0, 0, []int64{1, 2, 1}); !errors.Is(err, ErrDuplicateSeed) {
		t.Fatalf("duplicate seeds: %v", err)
	}
	if _, err := s.Sample(0, 0, []int64{50}); err == nil {
		t.Fatal("out-of-range seed accepted")
	}
}

// gatherOnly hides InMemory so the sampler goes through Gather.
type gatherOnly struct{ m MemIndices }

func (g gatherOnly) Gather(pos, out []int64) error { return g.m.Gather(pos, out) }

func TestGatherPathMatchesDirect(t *testing.T) {
	topo := randomGraph(1000, 40, 5)
	ind := Topology{Indptr: topo.Indptr, Indices: gatherOnly{topo.Indices.(MemIndices)}}
	a, _ := New(topo, []int{8, 8}, 1)
	b, _ := New(ind, []int{8, 8}, 1)
	seeds := []int64{1, 500, 999, 3}
	x, _ := a.Sample(2, 7, seeds)
	y, err := b.Sample(2, 7, seeds)
	if err != nil {
		t.Fatal(err)
	}
	if !sameBatch(x, y) {
		t.Fatal("gather path differs from direct path")
	}
}

func TestHashModeMatchesDense(t *testing.T) {
	topo := randomGraph(800, 30, 6)
	a, _ := New(topo, []int{6, 6, 6}, 2)
	b, _ := New(topo, []int{6, 6, 6}, 2)
	b.ids = idMap{h: newHashMap(16)} // force hash mode, tiny so it grows
	for bi := 0; bi < 5; bi++ {
		seeds := []int64{int64(bi), int64(100 + bi), int64(700 - bi)}
		x, _ := a.Sample(0, bi, seeds)
		y, _ := b.Sample(0, bi, seeds)
		if !sameBatch(x, y) {
			t.Fatalf("batch %d: hash map differs from dense map", bi)
		}
	}
}

func BenchmarkSample3x10(b *testing.B) {
	topo := randomGraph(100000, 30, 8)
	s, _ := New(topo, []int{10, 10, 10}, 1)
	ids := make([]int64, 100000)
	for i := range ids {
		ids[i] = int64(i)
	}
	batches := EpochBatches(ids, 1000, 1, 0)
	var mb graph.MiniBatch
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.SampleInto(&mb, 0, i, batches[i%len(batches)]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSampleHopsReportsEachHop checks that SampleHops draws the batch
// SampleInto draws and reports every input node exactly once, hop by hop,
// before the next hop is sampled.
func TestSampleHopsReportsEachHop(t *testing.T) {
	topo := randomGraph(3000, 40, 5)
	ids := make([]int64, 3000)
	for i := range ids {
		ids[i] = int64(i)
	}
	fanouts := []int{4, 3, 5}
	s, _ := New(topo, fanouts, 2)
	for i, seeds := range EpochBatches(ids, 64, 2, 1)[:5] {
		want, err := s.Sample(1, i, seeds)
		if err != nil {
			t.Fatal(err)
		}
		var got graph.MiniBatch
		var seen []int64
		hops := 0
		err = s.SampleHops(&got, 1, i, seeds, func(hop, first int, nodes []int64) error {
			if hop != hops || first != len(seen) {
				t.Fatalf("hop %d at %d after %d hops and %d nodes", hop, first, hops, len(seen))
			}
			// the next hop's block is not sampled yet (got starts empty)
			if hop == 0 && got.Blocks != nil || hop > 0 && hop < len(fanouts) && got.Blocks[len(fanouts)-1-hop].NumDst != 0 {
				t.Fatalf("hop %d reported after the next hop was sampled", hop)
			}
			seen = append(seen, nodes...)
			hops++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if hops != len(fanouts)+1 || !slices.Equal(seen, want.InputNodes) || !sameBatch(&got, want) {
			t.Fatalf("batch %d: %d hops, %d nodes reported of %d; same batch %v", i, hops, len(seen), len(want.InputNodes), sameBatch(&got, want))
		}
	}
	stop := errors.New("stop")
	var mb graph.MiniBatch
	if err := s.SampleHops(&mb, 0, 0, []int64{1, 2}, func(hop, _ int, _ []int64) error {
		if hop == 1 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) {
		t.Fatalf("hook error not returned: %v", err)
	}
}
