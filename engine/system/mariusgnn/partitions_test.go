package mariusgnn

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"outcore/engine/system/systest"
)

// testGraph is a random CSC graph with features written to files.
type testGraph struct {
	nodes            int64
	indptr, indices  []int64
	dim              int
	feats            []float32
	featPath, idxPth string
	train            []int64
}

func newTestGraph(t testing.TB, nodes int64, avgDeg, dim int, seed uint64) *testGraph {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	g := &testGraph{nodes: nodes, dim: dim, indptr: make([]int64, nodes+1)}
	for v := int64(0); v < nodes; v++ {
		d := r.IntN(2*avgDeg + 1)
		set := map[int64]bool{}
		for len(set) < d && int64(len(set)) < nodes-1 {
			u := r.Int64N(nodes)
			if u != v {
				set[u] = true
			}
		}
		var list []int64
		for u := range set {
			list = append(list, u)
		}
		slices.Sort(list)
		g.indices = append(g.indices, list...)
		g.indptr[v+1] = int64(len(g.indices))
		if r.IntN(5) == 0 {
			g.train = append(g.train, v)
		}
	}
	g.feats = make([]float32, nodes*int64(dim))
	for i := range g.feats {
		g.feats[i] = float32(i) // row v holds v*dim .. v*dim+dim-1
	}
	g.featPath = systest.TableFile(t, "features.bin", g.feats)
	g.idxPth = systest.TableFile(t, "indices.bin", g.indices)
	return g
}

func TestLayoutIsABijectionWithTrainingFirst(t *testing.T) {
	g := newTestGraph(t, 1000, 3, 4, 1)
	for _, p := range []int{1, 3, 7, 16, 1000} {
		for _, first := range []bool{true, false} {
			l, err := NewLayout(g.nodes, g.train, p, first, 9)
			if err != nil {
				t.Fatal(err)
			}
			seen := make([]bool, g.nodes)
			for v := int64(0); v < g.nodes; v++ {
				n := l.New(v)
				if n < 0 || n >= g.nodes || seen[n] || l.Old(n) != v {
					t.Fatalf("p=%d: node %d -> %d is not a bijection", p, v, n)
				}
				seen[n] = true
			}
			// inside a partition, original order is kept
			for q := 0; q < l.P; q++ {
				lo, hi := l.Range(q)
				if hi <= lo {
					t.Fatalf("p=%d: partition %d empty", p, q)
				}
				for n := lo + 1; n < hi; n++ {
					if l.Old(n) <= l.Old(n-1) {
						t.Fatalf("p=%d: partition %d not in original order", p, q)
					}
				}
			}
			if first {
				want := int((int64(len(g.train)) + l.PartSize - 1) / l.PartSize)
				if l.TrainParts != want {
					t.Fatalf("p=%d: training nodes span %d partitions, want %d", p, l.TrainParts, want)
				}
			}
		}
	}
	if _, err := NewLayout(10, nil, 11, false, 1); err == nil {
		t.Fatal("more partitions than nodes accepted")
	}
	if _, err := NewLayout(10, []int64{3, 3}, 2, true, 1); err == nil {
		t.Fatal("duplicate training node accepted")
	}
}

func TestPartitionedFilesHoldEveryRowAndEdge(t *testing.T) {
	g := newTestGraph(t, 3000, 5, 8, 2)
	l, err := NewLayout(g.nodes, g.train, 7, true, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rowBytes := int64(4 * g.dim)
	fp := filepath.Join(dir, "features.part")
	// a tiny buffer budget forces many flushes
	if err := WritePartitionedFeatures(context.Background(), l, g.featPath, fp, rowBytes, 7*rowBytes*3); err != nil {
		t.Fatal(err)
	}
	parts := systest.ReadTable[float32](t, fp)
	for n := int64(0); n < g.nodes; n++ {
		old := l.Old(n)
		row, want := parts[n*rowBytes/4:][:g.dim], g.feats[old*int64(g.dim):][:g.dim]
		if !slices.Equal(row, want) {
			t.Fatalf("partitioned row %d (node %d): %v, want %v", n, old, row, want)
		}
	}
	ep := filepath.Join(dir, "edges.part")
	b, err := WriteEdgeBuckets(context.Background(), l, g.indptr, g.idxPth, ep, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if b.Edges() != int64(len(g.indices)) {
		t.Fatalf("%d edges in buckets, graph has %d", b.Edges(), len(g.indices))
	}
	edges := systest.ReadTable[int32](t, ep)
	want := map[[2]int64]bool{}
	for v := int64(0); v < g.nodes; v++ {
		for _, u := range g.indices[g.indptr[v]:g.indptr[v+1]] {
			want[[2]int64{l.New(u), l.New(v)}] = true
		}
	}
	var all int64
	for i := 0; i < l.P; i++ {
		for j := 0; j < l.P; j++ {
			k := b.Index(i, j)
			prev := int64(-1)
			if b.FileOff[k]%BucketAlign != 0 || b.FileOff[k+1]-b.FileOff[k] < b.Count(i, j)*EdgeBytes {
				t.Fatalf("bucket (%d,%d) at byte %d, next at %d, %d edges", i, j, b.FileOff[k], b.FileOff[k+1], b.Count(i, j))
			}
			for e := int64(0); e < b.Count(i, j); e++ {
				at := b.FileOff[k] + 8*e
				u, v := int64(edges[at/4]), int64(edges[at/4+1])
				if l.Part(u) != i || l.Part(v) != j {
					t.Fatalf("edge %d->%d in bucket (%d,%d)", u, v, i, j)
				}
				if v < prev {
					t.Fatalf("bucket (%d,%d) not sorted by destination", i, j)
				}
				prev = v
				if !want[[2]int64{u, v}] {
					t.Fatalf("edge %d->%d not in the graph (or twice)", u, v)
				}
				delete(want, [2]int64{u, v})
				all++
			}
		}
	}
	if len(want) != 0 {
		t.Fatalf("%d edges missing from the buckets", len(want))
	}
	if got := b.StateEdges([]int{0, 1, 2, 3, 4, 5, 6}); got != all {
		t.Fatalf("state of every partition has %d edges, want %d", got, all)
	}
}

func TestPartitionedFeaturesRejectsWrongSize(t *testing.T) {
	g := newTestGraph(t, 100, 2, 4, 3)
	l, err := NewLayout(g.nodes, g.train, 4, true, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := WritePartitionedFeatures(context.Background(), l, g.featPath, filepath.Join(t.TempDir(), "x"), 12, 1<<20); err == nil {
		t.Fatal("row size that does not match the file accepted")
	}
}
