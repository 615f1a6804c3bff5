package cache

import (
	"math/rand/v2"
	"testing"
)

// csc is a small in-memory graph in CSC form: the in-neighbours of v are
// indices[indptr[v]:indptr[v+1]].
type csc struct {
	indptr  []int64
	indices []int64
	outDeg  []int64
}

// powerLawGraph builds a graph whose in-neighbour choices follow preferential
// attachment, so a few nodes are sampled very often (as in real graphs).
func powerLawGraph(n, avgDeg int, seed uint64) csc {
	r := rand.New(rand.NewPCG(seed, 1))
	targets := make([]int64, 0, n*avgDeg)
	g := csc{indptr: make([]int64, n+1), outDeg: make([]int64, n)}
	for v := 0; v < n; v++ {
		deg := 1 + r.IntN(2*avgDeg)
		for k := 0; k < deg; k++ {
			var u int64
			if len(targets) > 0 && r.IntN(4) != 0 {
				u = targets[r.IntN(len(targets))]
			} else {
				u = int64(r.IntN(n))
			}
			g.indices = append(g.indices, u)
			g.outDeg[u]++
			targets = append(targets, u)
		}
		g.indptr[v+1] = int64(len(g.indices))
	}
	return g
}

// sampleTrace records, for a shuffled training set split into batches, the
// input nodes of GraphSAGE-style neighbour sampling with the given fanouts:
// the ids a gather stage reads, targets first, deduplicated.
func sampleTrace(g csc, train []int64, batch int, fanouts []int, seed uint64) SliceTrace {
	r := rand.New(rand.NewPCG(seed, 2))
	order := append([]int64(nil), train...)
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var tr SliceTrace
	for b := 0; b < len(order); b += batch {
		seeds := order[b:min(b+batch, len(order))]
		seen := map[int64]bool{}
		var ids []int64
		for _, v := range seeds {
			seen[v] = true
			ids = append(ids, v)
		}
		frontier := seeds
		for _, f := range fanouts {
			var next []int64
			for _, v := range frontier {
				nb := g.indices[g.indptr[v]:g.indptr[v+1]]
				for k := 0; k < f && len(nb) > 0; k++ {
					u := nb[r.IntN(len(nb))]
					if !seen[u] {
						seen[u] = true
						ids = append(ids, u)
						next = append(next, u)
					}
				}
			}
			frontier = next
		}
		tr = append(tr, ids)
	}
	return tr
}

// TestBeladyBeatsLRUAndStatic compares, at equal capacity, the storage reads
// of Ginex's changeset policy with an LRU cache and a static cache of the
// highest out-degree nodes (PaGraph) on sampled traces.
func TestBeladyBeatsLRUAndStatic(t *testing.T) {
	g := powerLawGraph(20000, 10, 5)
	n := int64(len(g.outDeg))
	var train []int64
	for v := int64(0); v < n; v += 10 {
		train = append(train, v)
	}
	tr := sampleTrace(g, train, 100, []int{10, 10}, 9)
	score := make([]float64, n)
	for v, d := range g.outDeg {
		score[v] = float64(d)
	}
	for _, frac := range []float64{0.01, 0.05, 0.2, 0.5} {
		capacity := int(frac * float64(n))
		_, bel, err := PrecomputeChangesets(n, capacity, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		lru, err := SimulateLRU(tr, capacity)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := NewStaticCache(n, TopByScore(score, capacity))
		if err != nil {
			t.Fatal(err)
		}
		st, err := SimulateStatic(tr, sc)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("capacity %5d (%.0f%%): accesses %d; misses belady %d (+%d init), lru %d, static %d (+%d init)",
			capacity, 100*frac, bel.Accesses, bel.Misses, bel.InitLoads, lru.Misses, st.Misses, st.InitLoads)
		if bel.Accesses != lru.Accesses || bel.Accesses != st.Accesses {
			t.Fatalf("policies saw different traces")
		}
		if bel.Misses > lru.Misses || bel.Misses+bel.InitLoads > lru.Loads() {
			t.Errorf("capacity %d: belady misses %d (+%d init) > lru %d", capacity, bel.Misses, bel.InitLoads, lru.Misses)
		}
		if bel.Misses > st.Misses || bel.Misses+bel.InitLoads > st.Loads() {
			t.Errorf("capacity %d: belady misses %d (+%d init) > static %d (+%d init)", capacity, bel.Misses, bel.InitLoads, st.Misses, st.InitLoads)
		}
	}
}
