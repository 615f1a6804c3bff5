package mariusgnn

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"outcore/engine/graph"
)

func checkBlocks(t *testing.T, mb *graph.MiniBatch, nseeds int) {
	t.Helper()
	L := len(mb.Blocks)
	if mb.Blocks[L-1].NumDst != nseeds {
		t.Fatalf("output block has %d destinations, want %d seeds", mb.Blocks[L-1].NumDst, nseeds)
	}
	if mb.Blocks[0].NumSrc != len(mb.InputNodes) {
		t.Fatalf("input block has %d sources, %d input nodes", mb.Blocks[0].NumSrc, len(mb.InputNodes))
	}
	for l := 0; l < L; l++ {
		b := &mb.Blocks[l]
		if len(b.Indptr) != b.NumDst+1 || int(b.Indptr[b.NumDst]) != len(b.Indices) || b.NumDst > b.NumSrc {
			t.Fatalf("block %d malformed: %d dst, %d src, indptr %d, indices %d", l, b.NumDst, b.NumSrc, len(b.Indptr), len(b.Indices))
		}
		for _, j := range b.Indices {
			if j < 0 || int(j) >= b.NumSrc {
				t.Fatalf("block %d: source %d of %d", l, j, b.NumSrc)
			}
		}
		if l > 0 && b.NumSrc != mb.Blocks[l-1].NumDst {
			t.Fatalf("block %d consumes %d nodes, block %d produces %d", l, b.NumSrc, l-1, mb.Blocks[l-1].NumDst)
		}
	}
}

// TestDenseSamplerFullNeighbourhoods: with every partition resident and
// fanout −1, the DENSE sample is the full multi-hop neighbourhood, each
// node's list drawn once and shared by every layer.
func TestDenseSamplerFullNeighbourhoods(t *testing.T) {
	f := newFixture(t, 1500, 5, false)
	pb, err := NewPartitionBuffer(f.l, f.b, f.feats, f.edges, f.rowBytes, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	if _, err := pb.Load(context.Background(), []int{4, 2, 0, 1, 3}); err != nil {
		t.Fatal(err)
	}
	sg := f.checkState(t, pb, []int{4, 2, 0, 1, 3})
	s, err := NewDenseSampler([]int{-1, -1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.FullDegree = func(local int64) int64 {
		old := f.l.Old(sg.Partitioned(local))
		return f.g.indptr[old+1] - f.g.indptr[old]
	}
	seeds := []int64{}
	for _, v := range []int64{3, 77, 900} {
		lv, _ := sg.Local(v)
		seeds = append(seeds, lv)
	}
	var mb graph.MiniBatch
	st, err := s.Sample(sg, 0, 0, seeds, &mb)
	if err != nil {
		t.Fatal(err)
	}
	checkBlocks(t, &mb, len(seeds))
	if st.DroppedEdges != 0 || st.Isolated != 0 {
		t.Fatalf("every partition resident but %d edges dropped", st.DroppedEdges)
	}
	// The output block lists each seed's full in-neighbourhood.
	out := &mb.Blocks[1]
	for i, v := range seeds {
		var got, want []int64
		for p := out.Indptr[i]; p < out.Indptr[i+1]; p++ {
			got = append(got, mb.InputNodes[out.Indices[p]])
		}
		for p := sg.Indptr[v]; p < sg.Indptr[v+1]; p++ {
			want = append(want, int64(sg.Indices[p]))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: neighbours %v, want %v", v, got, want)
		}
	}
	// DENSE: the seeds' lists in the inner block are the same draws.
	in := &mb.Blocks[0]
	if !slices.Equal(in.Indptr[:len(seeds)+1], out.Indptr) || !slices.Equal(in.Indices[:len(out.Indices)], out.Indices) {
		t.Fatal("the seeds' neighbour lists differ between layers: not one draw per node")
	}
	if int(st.Sampled) != in.NumDst {
		t.Fatalf("%d nodes sampled, inner block has %d destinations", st.Sampled, in.NumDst)
	}
}

// TestDenseSamplerInBufferOnly: with part of the partitions resident, the
// sample holds resident nodes only, fanouts draw with replacement, and the
// dropped-edge count equals what the full graph has beyond the buffer.
func TestDenseSamplerInBufferOnly(t *testing.T) {
	f := newFixture(t, 3000, 8, false)
	state := []int{1, 4, 6}
	pb, err := NewPartitionBuffer(f.l, f.b, f.feats, f.edges, f.rowBytes, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	if _, err := pb.Load(context.Background(), state); err != nil {
		t.Fatal(err)
	}
	sg := f.checkState(t, pb, state)
	s, err := NewDenseSampler([]int{3, 2, 2}, 7)
	if err != nil {
		t.Fatal(err)
	}
	fullDeg := func(local int64) int64 {
		old := f.l.Old(sg.Partitioned(local))
		return f.g.indptr[old+1] - f.g.indptr[old]
	}
	s.FullDegree = fullDeg
	r := rand.New(rand.NewPCG(5, 5))
	lo, hi := f.l.Range(4)
	var seeds []int64
	for len(seeds) < 40 {
		v := lo + r.Int64N(hi-lo)
		lv, _ := sg.Local(v)
		if !slices.Contains(seeds, lv) {
			seeds = append(seeds, lv)
		}
	}
	var mb graph.MiniBatch
	st, err := s.Sample(sg, 2, 9, seeds, &mb)
	if err != nil {
		t.Fatal(err)
	}
	checkBlocks(t, &mb, len(seeds))
	for _, v := range mb.InputNodes {
		if !slices.Contains(state, f.l.Part(sg.Partitioned(v))) {
			t.Fatalf("input node %d is in a partition on disk", v)
		}
	}
	// Each sampled node has min(in-buffer degree, fanout) draws.
	inner := &mb.Blocks[0]
	var dropped, bufEdges int64
	fan := []int{3, 2, 2}
	hop := func(i int) int {
		for h := 2; h >= 0; h-- {
			if i >= mb.Blocks[2-h].NumDst {
				return h + 1
			}
		}
		return 0
	}
	for i := 0; i < inner.NumDst; i++ {
		v := mb.InputNodes[i]
		deg := sg.Degree(v)
		want := min(deg, int64(fan[hop(i)]))
		if got := int64(inner.Indptr[i+1] - inner.Indptr[i]); got != want {
			t.Fatalf("node %d (hop %d, degree %d): %d draws, want %d", v, hop(i), deg, got, want)
		}
		dropped += fullDeg(v) - deg
		bufEdges += deg
	}
	if dropped == 0 || st.DroppedEdges != dropped || st.BufferEdges != bufEdges {
		t.Fatalf("stats %+v, want %d dropped, %d in-buffer edges", st, dropped, bufEdges)
	}
	// Same (epoch, batch): same sample; another batch: another.
	var again, other graph.MiniBatch
	if _, err := s.Clone().Sample(sg, 2, 9, seeds, &again); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.InputNodes, mb.InputNodes) || !slices.Equal(again.Blocks[0].Indices, mb.Blocks[0].Indices) {
		t.Fatal("the same batch sampled twice differs")
	}
	if _, err := s.Sample(sg, 2, 10, seeds, &other); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.Blocks[0].Indices, mb.Blocks[0].Indices) {
		t.Fatal("two batches drew the same neighbours")
	}
	if _, err := s.Sample(sg, 0, 0, []int64{seeds[0], seeds[0]}, &other); err == nil {
		t.Fatal("duplicate seed accepted")
	}
}
