package diskgnn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomSamples draws n samples of distinct node ids from a skewed
// distribution over nodes nodes.
func randomSamples(r *rand.Rand, n, nodes, maxLen int) [][]int32 {
	out := make([][]int32, n)
	for i := range out {
		seen := map[int32]bool{}
		k := 1 + r.IntN(maxLen)
		for j := 0; j < k; j++ {
			// squaring a uniform skews towards low ids
			u := r.Float64()
			v := int32(u * u * float64(nodes))
			if !seen[v] {
				seen[v] = true
				out[i] = append(out[i], v)
			}
		}
	}
	return out
}

// exhaustiveSegmentSize evaluates every segment size from scratch: the
// disk space of a segment of the first s samples (its distinct nodes: each
// stored once, in the disk cache when shared, packed when not) scaled to
// all samples, and returns the smallest s that fits.
func exhaustiveSegmentSize(samples [][]int32, budgetRows int64) (int, int64, bool) {
	n := len(samples)
	for s := 1; s <= n; s++ {
		count := map[int32]int{}
		for _, b := range samples[:s] {
			for _, v := range b {
				count[v]++
			}
		}
		var shared int64
		for _, c := range count {
			if c > 1 {
				shared++
			}
		}
		est := int64(math.Ceil(float64(len(count)) * float64(n) / float64(s)))
		if budgetRows == math.MaxInt64 || est <= budgetRows {
			return s, shared, true
		}
	}
	return n, -1, false
}

// TestSegmentSearchEqualsExhaustive: Algorithm 2's one-pass incremental
// search finds the same segment size (and m) as evaluating every segment
// size from scratch, on random inputs and budgets.
func TestSegmentSearchEqualsExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 300; trial++ {
		nodes := 5 + r.IntN(200)
		n := 1 + r.IntN(40)
		samples := randomSamples(r, n, nodes, 30)
		var budget int64
		switch r.IntN(4) {
		case 0:
			budget = math.MaxInt64
		case 1:
			budget = int64(r.IntN(10))
		default:
			budget = int64(r.IntN(nodes * n))
		}
		reads := 0
		p, err := searchSegmentSize(n, nodes, budget, func(i int) ([]int32, error) {
			if i != reads {
				t.Fatalf("sample %d read out of order (expected %d)", i, reads)
			}
			reads++
			return samples[i], nil
		})
		if err != nil {
			t.Fatal(err)
		}
		s, m, fits := exhaustiveSegmentSize(samples, budget)
		if p.Fits != fits || p.Size != s || (fits && p.DiskEntries != m) {
			t.Fatalf("trial %d (n %d, budget %d): search s=%d m=%d fits=%v, exhaustive s=%d m=%d fits=%v",
				trial, n, budget, p.Size, p.DiskEntries, p.Fits, s, m, fits)
		}
		if reads != p.Size {
			t.Fatalf("trial %d: read %d samples for segment size %d (each sample once, only until found)", trial, reads, p.Size)
		}
	}
}

// TestSegmentSearchPeriodic: when every segment of s samples looks alike,
// the scaled estimate is the true disk space, and the search returns the
// segment size a search over the true cost would.
func TestSegmentSearchPeriodic(t *testing.T) {
	// 12 samples in 3 identical groups of 4; each group shares nodes 0..9
	// (two samples each) and has 5 private nodes per sample.
	var samples [][]int32
	for g := 0; g < 3; g++ {
		for j := 0; j < 4; j++ {
			var b []int32
			for v := int32(0); v < 10; v++ {
				if int(v)%2 == j%2 {
					b = append(b, int32(g*100)+v)
				}
			}
			for k := int32(0); k < 5; k++ {
				b = append(b, int32(g*100+20+j*5)+k)
			}
			samples = append(samples, b)
		}
	}
	// true rows for segment size 4 = 3 × (10 shared + 20 private) = 90
	p, err := searchSegmentSize(len(samples), 400, 90, func(i int) ([]int32, error) { return samples[i], nil })
	if err != nil {
		t.Fatal(err)
	}
	if !p.Fits || p.Size != 4 || p.DiskEntries != 10 || p.EstimatedRows != 90 {
		t.Fatalf("plan %+v, want size 4, m 10, 90 rows", p)
	}
	// one row less than that needs larger segments; none is smaller than 90
	p, _ = searchSegmentSize(len(samples), 400, 89, func(i int) ([]int32, error) { return samples[i], nil })
	if p.Fits {
		t.Fatalf("budget 89 rows fits with %+v", p)
	}
}

func TestSegmentSearchBadInput(t *testing.T) {
	if _, err := newSegmentSearcher(0, 10, 5); err == nil {
		t.Fatal("zero samples accepted")
	}
	if _, err := newSegmentSearcher(1, 10, -1); err == nil {
		t.Fatal("negative budget accepted")
	}
	s, _ := newSegmentSearcher(1, 10, 5)
	if _, err := s.Add([]int32{10}); err == nil {
		t.Fatal("node outside the graph accepted")
	}
}

// TestFixedSegmentPlan: a segment size given (option segment_size) takes
// Algorithm 2's m and estimate for that size, whatever the budget, and
// reads only that segment's samples; a size over the samples and
// segment_size=all are one segment of every sample.
func TestFixedSegmentPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	samples := randomSamples(r, 20, 150, 25)
	n := len(samples)
	for _, c := range []struct{ size, want int }{{1, 1}, {4, 4}, {20, 20}, {50, 20}, {segmentGlobal, 20}} {
		reads := 0
		p, err := fixedSegmentPlan(n, 150, c.size, func(i int) ([]int32, error) { reads++; return samples[i], nil })
		if err != nil {
			t.Fatal(err)
		}
		// the exhaustive evaluation of exactly that size: a budget of its
		// estimate makes it the first that fits unless a smaller one does,
		// so evaluate the size alone
		count := map[int32]int{}
		for _, b := range samples[:c.want] {
			for _, v := range b {
				count[v]++
			}
		}
		var shared int64
		for _, k := range count {
			if k > 1 {
				shared++
			}
		}
		est := int64(math.Ceil(float64(len(count)) * float64(n) / float64(c.want)))
		if !p.Fits || p.Size != c.want || p.DiskEntries != shared || p.EstimatedRows != est || reads != c.want {
			t.Errorf("size %d: plan %+v after %d reads, want size %d, m %d, %d rows, %d reads", c.size, p, reads, c.want, shared, est, c.want)
		}
	}
	if _, err := fixedSegmentPlan(n, 150, 0, func(i int) ([]int32, error) { return samples[i], nil }); err == nil {
		t.Error("segment size 0 accepted")
	}
}
