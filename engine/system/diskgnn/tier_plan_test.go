package diskgnn

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func TestPlanTiersTable(t *testing.T) {
	cases := []struct {
		name     string
		counts   []int32
		gpu, cpu int64
		wantGPU  []int32
		wantCPU  []int32
	}{
		{"by count", []int32{1, 5, 3, 0, 4}, 1, 2, []int32{1}, []int32{4, 2}},
		{"ties by id", []int32{2, 2, 2, 2}, 2, 1, []int32{0, 1}, []int32{2}},
		{"never accessed is never cached", []int32{0, 3, 0, 1}, 3, 3, []int32{1, 3}, []int32{}},
		{"no gpu", []int32{1, 2}, 0, 1, []int32{}, []int32{1}},
		{"nothing", []int32{0, 0}, 4, 4, []int32{}, []int32{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := planTiers(c.counts, c.gpu, c.cpu)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.GPU, c.wantGPU) || !slices.Equal(p.CPU, c.wantCPU) {
				t.Fatalf("gpu %v cpu %v, want %v %v", p.GPU, p.CPU, c.wantGPU, c.wantCPU)
			}
			for v := range c.counts {
				s := p.Slot[v]
				switch {
				case s < 0:
					if slices.Contains(p.GPU, int32(v)) || slices.Contains(p.CPU, int32(v)) {
						t.Fatalf("node %d cached but slot -1", v)
					}
				case p.InGPU(s):
					if p.GPU[s] != int32(v) {
						t.Fatalf("node %d: gpu slot %d holds %d", v, s, p.GPU[s])
					}
				default:
					if p.CPU[int(s)-len(p.GPU)] != int32(v) {
						t.Fatalf("node %d: cpu slot %d holds %d", v, s, p.CPU[int(s)-len(p.GPU)])
					}
				}
			}
		})
	}
	if _, err := planTiers([]int32{1}, -1, 0); err == nil {
		t.Fatal("negative rows accepted")
	}
}

// TestPopularityOrderMatchesSort checks the counting sort against a
// comparison sort on random counts.
func TestPopularityOrderMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		counts := make([]int32, 1+r.IntN(300))
		for i := range counts {
			if r.IntN(3) > 0 {
				counts[i] = int32(r.IntN(20))
			}
		}
		var want []int32
		for v, c := range counts {
			if c > 0 {
				want = append(want, int32(v))
			}
		}
		sort.SliceStable(want, func(a, b int) bool { return counts[want[a]] > counts[want[b]] })
		if got := popularityOrder(counts); !slices.Equal(got, want) {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
	}
}
