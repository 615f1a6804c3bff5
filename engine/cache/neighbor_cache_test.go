package cache

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestNeighborCache(t *testing.T) {
	g := powerLawGraph(3000, 8, 2)
	n := int64(len(g.outDeg))
	read := func(start int64, dst []int64) error { copy(dst, g.indices[start:]); return nil }
	for _, budget := range []int64{0, 8 * n, 8*n + 8*500, 8*n + 8*int64(len(g.indices))/2, 1 << 30} {
		nc, err := BuildNeighborCache(g.indptr, g.outDeg, budget, read)
		if err != nil {
			t.Fatal(err)
		}
		if budget >= 8*n && nc.Bytes() > budget {
			t.Fatalf("budget %d: cache holds %d bytes", budget, nc.Bytes())
		}
		minCached, maxUncached := 1e18, -1.0
		for v := int64(0); v < n; v++ {
			deg := g.indptr[v+1] - g.indptr[v]
			s := NeighborScore(g.outDeg[v], deg)
			nb, ok := nc.Neighbors(v)
			if ok {
				if !slices.Equal(nb, g.indices[g.indptr[v]:g.indptr[v+1]]) {
					t.Fatalf("node %d: cached neighbours %v differ", v, nb)
				}
				minCached = min(minCached, s)
			} else if deg > 0 {
				maxUncached = max(maxUncached, s)
			}
		}
		// The cache is a prefix of the score order.
		if nc.Cached() > 0 && maxUncached > minCached {
			t.Fatalf("budget %d: uncached score %.3f above cached %.3f", budget, maxUncached, minCached)
		}
		if budget == 1<<30 {
			for v := int64(0); v < n; v++ {
				if _, ok := nc.Neighbors(v); !ok && g.indptr[v+1] > g.indptr[v] {
					t.Fatalf("ample budget: node %d not cached", v)
				}
			}
		}
		p := filepath.Join(t.TempDir(), "nc.bin")
		if err := nc.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		back, err := ReadNeighborCacheFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if back.Cached() != nc.Cached() || !slices.Equal(back.address, nc.address) || !slices.Equal(back.array, nc.array) {
			t.Fatal("neighbour cache changed in a file round trip")
		}
	}
}

func TestNeighborCacheBadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "junk")
	if err := os.WriteFile(p, []byte("not a cache at all, definitely not"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNeighborCacheFile(p); !errors.Is(err, ErrBadNeighborCacheFile) {
		t.Fatalf("junk file: err = %v", err)
	}
	g := powerLawGraph(100, 3, 1)
	nc, err := BuildNeighborCache(g.indptr, g.outDeg, 1<<20, func(s int64, d []int64) error { copy(d, g.indices[s:]); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, b[:len(b)-8], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNeighborCacheFile(p); !errors.Is(err, ErrBadNeighborCacheFile) {
		t.Fatalf("truncated file: err = %v", err)
	}
	if _, err := BuildNeighborCache(g.indptr, g.outDeg[:5], 1<<20, nil); err == nil {
		t.Fatal("mismatched out-degrees accepted")
	}
}

func TestLRU(t *testing.T) {
	l := NewLRU(2)
	steps := []struct {
		v       int64
		hit     bool
		victim  int64
		evicted bool
	}{
		{1, false, 0, false}, {2, false, 0, false}, {1, true, 0, false},
		{3, false, 2, true}, {1, true, 0, false}, {2, false, 3, true},
	}
	for i, s := range steps {
		hit, victim, ev := l.Access(s.v)
		if hit != s.hit || victim != s.victim || ev != s.evicted {
			t.Fatalf("step %d access %d: hit=%v victim=%d evicted=%v", i, s.v, hit, victim, ev)
		}
	}
	if l.Len() != 2 || !l.Contains(1) || !l.Contains(2) || l.Contains(3) {
		t.Fatal("wrong LRU contents")
	}
	if hit, _, _ := NewLRU(0).Access(1); hit {
		t.Fatal("zero-capacity LRU hit")
	}
}

func TestStaticCacheAndFeatureCacheErrors(t *testing.T) {
	top := TopByScore([]float64{1, 5, 3, 5}, 3)
	if !slices.Equal(top, []int64{1, 3, 2}) {
		t.Fatalf("TopByScore = %v", top)
	}
	if _, err := NewStaticCache(3, []int64{0, 0}); err == nil {
		t.Fatal("duplicate static node accepted")
	}
	fc, err := NewFeatureCache(4, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := fc.Insert(0, []float32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := fc.Insert(1, []float32{1, 2}); !errors.Is(err, ErrCacheFull) {
		t.Fatalf("insert into a full cache: %v", err)
	}
	if err := fc.Apply(Changeset{OutIDs: []int64{3}}, nil); err == nil {
		t.Fatal("evicting an uncached node accepted")
	}
	if got := FeatureCacheEntries(4*10+4*2*5, 10, 2); got != 5 {
		t.Fatalf("FeatureCacheEntries = %d, want 5", got)
	}
}

func TestNeighborCacheFileIntoAndRowMemory(t *testing.T) {
	g := powerLawGraph(500, 4, 3)
	nc, err := BuildNeighborCache(g.indptr, g.outDeg, 1<<20, func(s int64, d []int64) error { copy(d, g.indices[s:]); return nil })
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "nc.bin")
	if err := nc.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	var handed int
	back, err := ReadNeighborCacheFileInto(p, func(n int) ([]int64, error) { handed += n; return make([]int64, n), nil })
	if err != nil {
		t.Fatal(err)
	}
	if handed != len(nc.address)+len(nc.array) || !slices.Equal(back.array, nc.array) {
		t.Fatalf("allocator handed %d cells for %d+%d", handed, len(nc.address), len(nc.array))
	}
	boom := errors.New("no memory")
	if _, err := ReadNeighborCacheFileInto(p, func(int) ([]int64, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("allocator failure: %v", err)
	}
	rows := make([]float32, 3*2)
	fc, err := NewFeatureCacheOn(10, 2, 3, rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := fc.Insert(4, []float32{7, 8}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rows, 7) {
		t.Fatal("feature cache did not use the given row memory")
	}
	if _, err := NewFeatureCacheOn(10, 2, 3, rows[:5]); err == nil {
		t.Fatal("short row memory accepted")
	}
	if _, err := NewFeatureBuffer(FeatureBufferConfig{Nodes: 10, Dim: 2, Slots: 4, Extractors: 1, MaxBatch: 4, Rows: make([]float32, 7)}); err == nil {
		t.Fatal("short buffer row memory accepted")
	}
}
