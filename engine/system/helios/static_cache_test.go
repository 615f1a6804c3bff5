package helios

import (
	"math/rand/v2"
	"testing"
)

func TestPlaceTiersAreDisjointAndOrdered(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		nodes := 1 + r.IntN(400)
		counts := make([]uint32, nodes)
		// pre-sampling: a few batches of skewed accesses
		for b := r.IntN(20); b >= 0; b-- {
			var in []int64
			for k := r.IntN(80); k > 0; k-- {
				u := r.Float64()
				in = append(in, int64(u*u*float64(nodes)))
			}
			CountAccesses(counts, in)
		}
		gpuRows, cpuRows := int64(r.IntN(nodes+5)), int64(r.IntN(nodes+5))
		p, err := Place(counts, gpuRows, cpuRows)
		if err != nil {
			t.Fatal(err)
		}
		tiers, err := NewTiers(int64(nodes), p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if int64(len(p.GPU)) > gpuRows || int64(len(p.CPU)) > cpuRows {
			t.Fatalf("seed %d: tiers of %d, %d rows exceed %d, %d", seed, len(p.GPU), len(p.CPU), gpuRows, cpuRows)
		}
		seen := map[int64]Tier{}
		for i, v := range p.GPU {
			seen[v] = GPU
			if tr, row := tiers.Lookup(v); tr != GPU || row != i {
				t.Fatalf("GPU node %d: lookup %v row %d", v, tr, row)
			}
		}
		for i, v := range p.CPU {
			if _, dup := seen[v]; dup {
				t.Fatalf("seed %d: node %d in both tiers", seed, v)
			}
			seen[v] = CPU
			if tr, row := tiers.Lookup(v); tr != CPU || row != i {
				t.Fatalf("CPU node %d: lookup %v row %d", v, tr, row)
			}
		}
		if len(seen) != len(p.GPU)+len(p.CPU) {
			t.Fatalf("seed %d: a node appears twice within a tier", seed)
		}
		// hotness order: every GPU node is at least as hot as every CPU
		// node, which is at least as hot as every uncached node; nodes never
		// accessed stay out; the tiers fill as far as hot nodes go.
		minOf := func(vs []int64) uint32 {
			m := ^uint32(0)
			for _, v := range vs {
				m = min(m, counts[v])
			}
			return m
		}
		var hot int64
		var maxUncached uint32
		for v, c := range counts {
			if c > 0 {
				hot++
			}
			if _, ok := seen[int64(v)]; !ok {
				maxUncached = max(maxUncached, c)
			} else if c == 0 {
				t.Fatalf("seed %d: node %d cached without an access", seed, v)
			}
		}
		if len(p.CPU) > 0 && minOf(p.GPU) < counts[p.CPU[0]] {
			t.Fatalf("seed %d: a CPU node is hotter than a GPU node", seed)
		}
		if len(p.GPU)+len(p.CPU) > 0 && min(minOf(p.GPU), minOf(p.CPU)) < maxUncached {
			t.Fatalf("seed %d: an uncached node is hotter than a cached one", seed)
		}
		if want := min(hot, gpuRows+cpuRows); int64(len(p.GPU)+len(p.CPU)) != want {
			t.Fatalf("seed %d: %d nodes cached, want %d", seed, len(p.GPU)+len(p.CPU), want)
		}
	}
}

func TestNewTiersRejectsDuplicates(t *testing.T) {
	for _, p := range []Placement{
		{GPU: []int64{1, 2}, CPU: []int64{3, 1}},
		{GPU: []int64{4, 4}},
		{CPU: []int64{0, 5, 5}},
		{GPU: []int64{9}},
		{CPU: []int64{-1}},
	} {
		if _, err := NewTiers(6, p); err == nil {
			t.Errorf("placement %+v accepted", p)
		}
	}
	if _, err := Place([]uint32{1}, -1, 0); err == nil {
		t.Error("negative tier size accepted")
	}
}
