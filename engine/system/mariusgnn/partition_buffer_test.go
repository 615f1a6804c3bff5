package mariusgnn

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"outcore/engine/storage"
	"outcore/internal/osutil"
)

// fixture is a test graph partitioned on disk with its storage files open.
type fixture struct {
	g            *testGraph
	l            *Layout
	b            Buckets
	feats, edges *storage.File
	rowBytes     int64
}

func newFixture(t *testing.T, nodes int64, p int, trainFirst bool) *fixture {
	t.Helper()
	g := newTestGraph(t, nodes, 6, 4, 5)
	l, err := NewLayout(nodes, g.train, p, trainFirst, 11)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &fixture{g: g, l: l, rowBytes: int64(4 * g.dim)}
	fp, ep := filepath.Join(dir, "features.part"), filepath.Join(dir, "edges.part")
	if err := WritePartitionedFeatures(context.Background(), l, g.featPath, fp, f.rowBytes, 1<<16); err != nil {
		t.Fatal(err)
	}
	if f.b, err = WriteEdgeBuckets(context.Background(), l, g.indptr, g.idxPth, ep, 1<<16); err != nil {
		t.Fatal(err)
	}
	opt := storage.Options{AllowBuffered: true, QueueDepth: 4, MaxMergeBytes: 8192, Logger: func(string) {}}
	if f.feats, err = storage.OpenFile(fp, opt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.feats.Close() })
	if f.edges, err = storage.OpenFile(ep, opt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.edges.Close() })
	return f
}

// checkState verifies every resident row against the original features and
// the subgraph against the graph restricted to resident partitions.
func (f *fixture) checkState(t *testing.T, pb *PartitionBuffer, state []int) *Subgraph {
	t.Helper()
	if !slices.Equal(pb.State(), state) {
		t.Fatalf("state %v, want %v", pb.State(), state)
	}
	var sg Subgraph
	if err := sg.Build(pb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sg.Free() })
	resident := map[int]bool{}
	for _, q := range state {
		resident[q] = true
	}
	var edges int64
	for _, q := range state {
		lo, hi := f.l.Range(q)
		for v := lo; v < hi; v++ {
			local, ok := sg.Local(v)
			if !ok || sg.Partitioned(local) != v {
				t.Fatalf("node %d of resident partition %d has no local id", v, q)
			}
			old := f.l.Old(v)
			row := pb.Row(local)
			got := osutil.View[float32](row)[:f.g.dim]
			for k := range got {
				if math.Float32bits(got[k]) != math.Float32bits(f.g.feats[old*int64(f.g.dim)+int64(k)]) {
					t.Fatalf("buffer row of node %d (original %d) entry %d wrong", v, old, k)
				}
			}
			var want []int64
			for _, u := range f.g.indices[f.g.indptr[old]:f.g.indptr[old+1]] {
				if resident[f.l.Part(f.l.New(u))] {
					want = append(want, f.l.New(u))
				}
			}
			var have []int64
			for p := sg.Indptr[local]; p < sg.Indptr[local+1]; p++ {
				have = append(have, sg.Partitioned(int64(sg.Indices[p])))
			}
			slices.Sort(want)
			slices.Sort(have)
			if !slices.Equal(want, have) {
				t.Fatalf("node %d: in-buffer neighbours %v, want %v", v, have, want)
			}
			edges += int64(len(want))
		}
	}
	if edges != sg.Edges || edges != f.b.StateEdges(state) {
		t.Fatalf("subgraph has %d edges, buckets say %d, graph %d", sg.Edges, f.b.StateEdges(state), edges)
	}
	if _, ok := sg.Local(int64(f.l.Nodes - 1)); ok != resident[f.l.Part(f.l.Nodes-1)] {
		t.Fatal("Local answers for a partition that is not resident")
	}
	return &sg
}

func TestPartitionBufferDispersedWithPrefetch(t *testing.T) {
	f := newFixture(t, 2500, 7, false)
	ctx := context.Background()
	pb, err := NewPartitionBuffer(f.l, f.b, f.feats, f.edges, f.rowBytes, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	slotsOnly := pb.MappedBytes()
	states, err := DispersedStates(f.l.P, 3, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for s, st := range states {
		sw, err := pb.Load(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		if s > 0 && (len(sw.Admit) != 1 || len(sw.Keep) != 2) {
			t.Fatalf("state %d: swap %+v", s, sw)
		}
		f.checkState(t, pb, st)
		if s+1 < len(states) {
			if err := pb.StartPrefetch(ctx, states[s+1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := pb.Stats()
	if st.PartitionLoads != int64(f.l.P) {
		t.Fatalf("%d partition loads, want one per partition (%d)", st.PartitionLoads, f.l.P)
	}
	if st.PrefetchedLoads != int64(len(states)-1) {
		t.Fatalf("%d prefetched loads, want %d (every swap read ahead)", st.PrefetchedLoads, len(states)-1)
	}
	if st.PartitionHits != int64(2*(len(states)-1)) {
		t.Fatalf("%d partition hits, want %d", st.PartitionHits, 2*(len(states)-1))
	}
	if st.FeatureBytesRead != f.l.Nodes*f.rowBytes {
		t.Fatalf("%d feature bytes read, want every row once (%d)", st.FeatureBytesRead, f.l.Nodes*f.rowBytes)
	}
	// Buckets: each is read when its second partition arrives, at most once.
	if st.EdgeBytesRead > f.b.Edges()*EdgeBytes || st.BucketLoads > int64(f.l.P*f.l.P) {
		t.Fatalf("%d bucket loads, %d edge bytes: more than every bucket once", st.BucketLoads, st.EdgeBytesRead)
	}
	if err := pb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if pb.MappedBytes() != slotsOnly {
		t.Fatalf("after release %d bytes mapped, the slots alone are %d", pb.MappedBytes(), slotsOnly)
	}
}

func TestPartitionBufferSequentialReload(t *testing.T) {
	f := newFixture(t, 2000, 5, true)
	ctx := context.Background()
	pb, err := NewPartitionBuffer(f.l, f.b, f.feats, f.edges, f.rowBytes, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	for epoch := 0; epoch < 2; epoch++ {
		states, err := SequentialStates(f.l.TrainParts, f.l.P, 3, rand.New(rand.NewPCG(uint64(epoch), 3)))
		if err != nil {
			t.Fatal(err)
		}
		sw, err := pb.Load(ctx, states[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(sw.Admit) != 3 {
			t.Fatalf("epoch %d: %+v, want every partition admitted after the release", epoch, sw)
		}
		f.checkState(t, pb, states[0])
		if err := pb.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st := pb.Stats(); st.PartitionLoads != 6 || st.PartitionHits != 0 || st.BucketLoads != 18 {
		t.Fatalf("stats %+v, want 6 loads, 18 buckets, no hits", st)
	}
	if _, err := pb.Load(ctx, []int{0, 1}); err == nil {
		t.Fatal("a state smaller than the capacity was accepted")
	}
	if _, err := NewPartitionBuffer(f.l, f.b, f.feats, f.edges, f.rowBytes, 9, false); err == nil {
		t.Fatal("capacity above p accepted")
	}
}
