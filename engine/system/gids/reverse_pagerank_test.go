package gids

import (
	"math"
	"math/rand/v2"
	"testing"
)

// denseReversePageRank is the same computation written the textbook way:
// a dense N×N matrix M with M[u][v] = w(v) for each entry u of v's list,
// and the power method r ← normalise((1−d)/N + d·M·r).
func denseReversePageRank(lists [][]int64, d float64, iters, fanout int) []float64 {
	n := len(lists)
	m := make([][]float64, n)
	for u := range m {
		m[u] = make([]float64, n)
	}
	for v, l := range lists {
		var w float64
		switch {
		case len(l) == 0:
		case fanout == 0:
			w = 1 / float64(len(l))
		default:
			w = math.Min(1, float64(fanout)/float64(len(l)))
		}
		for _, u := range l {
			m[u][v] += w
		}
	}
	r := make([]float64, n)
	for i := range r {
		r[i] = 1 / float64(n)
	}
	for it := 0; it < iters; it++ {
		next := make([]float64, n)
		var sum float64
		for u := 0; u < n; u++ {
			var s float64
			for v := 0; v < n; v++ {
				s += m[u][v] * r[v]
			}
			next[u] = (1-d)/float64(n) + d*s
			sum += next[u]
		}
		for u := range next {
			next[u] /= sum
		}
		r = next
	}
	return r
}

func csr(lists [][]int64) (indptr, indices []int64) {
	indptr = []int64{0}
	for _, l := range lists {
		indices = append(indices, l...)
		indptr = append(indptr, int64(len(indices)))
	}
	return
}

func TestReversePageRankMatchesDense(t *testing.T) {
	// node 0's list holds 1, 2, 3: sampling node 0 reaches them.
	small := [][]int64{{1, 2, 3}, {2}, {0, 3}, {}, {0, 1, 2, 3}, {4, 4}}
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([][]int64, 40)
	for v := range random {
		for k := rng.IntN(12); k > 0; k-- {
			random[v] = append(random[v], int64(rng.IntN(len(random))))
		}
	}
	for _, g := range []struct {
		name  string
		lists [][]int64
	}{{"small", small}, {"random", random}} {
		for _, fanout := range []int{0, 1, 2, 5} {
			for _, iters := range []int{1, 3, 20} {
				want := denseReversePageRank(g.lists, 0.85, iters, fanout)
				ip, idx := csr(g.lists)
				got, err := ReversePageRank(ip, idx, PageRankConfig{Iterations: iters, Fanout: fanout})
				if err != nil {
					t.Fatal(err)
				}
				for u := range want {
					if math.Abs(got[u]-want[u]) > 1e-12 {
						t.Fatalf("%s fanout %d, %d iterations: r[%d] = %v, dense %v", g.name, fanout, iters, u, got[u], want[u])
					}
				}
			}
		}
	}
}

func TestReversePageRankFavoursSampledNodes(t *testing.T) {
	// a star: every leaf's list holds the hub, so the hub is reached from
	// every sampled leaf and must rank first.
	lists := make([][]int64, 50)
	for v := 1; v < len(lists); v++ {
		lists[v] = []int64{0}
	}
	ip, idx := csr(lists)
	r, err := ReversePageRank(ip, idx, PageRankConfig{Fanout: 10})
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for u, s := range r {
		sum += s
		if u > 0 && s >= r[0] {
			t.Fatalf("leaf %d scores %v, hub %v", u, s, r[0])
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Fatalf("scores sum to %v", sum)
	}
	// a directed cycle passes everything on: uniform
	cyc := make([][]int64, 7)
	for v := range cyc {
		cyc[v] = []int64{int64((v + 1) % len(cyc))}
	}
	ip, idx = csr(cyc)
	r, _ = ReversePageRank(ip, idx, PageRankConfig{})
	for u, s := range r {
		if math.Abs(s-1.0/7) > 1e-12 {
			t.Fatalf("cycle: r[%d] = %v", u, s)
		}
	}
}

func TestReversePageRankBadInput(t *testing.T) {
	cases := []struct {
		name            string
		indptr, indices []int64
		cfg             PageRankConfig
	}{
		{"short indptr", []int64{0, 2}, []int64{0}, PageRankConfig{}},
		{"decreasing", []int64{0, 2, 1, 2}, []int64{0, 1}, PageRankConfig{}},
		{"neighbour out of range", []int64{0, 1}, []int64{5}, PageRankConfig{}},
		{"damping", []int64{0, 0}, nil, PageRankConfig{Damping: 1.5}},
		{"fanout", []int64{0, 0}, nil, PageRankConfig{Fanout: -1}},
		{"iterations", []int64{0, 0}, nil, PageRankConfig{Iterations: -2}},
	}
	for _, c := range cases {
		if _, err := ReversePageRank(c.indptr, c.indices, c.cfg); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
