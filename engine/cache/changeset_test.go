package cache

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomTrace draws s iterations of distinct ids from [0,n), skewed towards
// small ids so that reuse happens.
func randomTrace(r *rand.Rand, n, s, maxLen int) SliceTrace {
	tr := make(SliceTrace, s)
	for i := range tr {
		k := r.IntN(maxLen + 1)
		seen := map[int64]bool{}
		for len(tr[i]) < k && len(seen) < n {
			var v int64
			if r.IntN(2) == 0 {
				v = int64(r.IntN(n))
			} else {
				v = int64(r.IntN(n/3 + 1))
			}
			if !seen[v] {
				seen[v] = true
				tr[i] = append(tr[i], v)
			}
		}
	}
	return tr
}

// bruteBelady simulates Belady's policy by definition: after each iteration
// the cache keeps the capacity nodes of cache ∪ ids whose next access,
// found by scanning the future trace, is soonest. It returns the misses.
func bruteBelady(tr SliceTrace, capacity int, init []int64) int64 {
	cached := map[int64]bool{}
	for _, v := range init {
		cached[v] = true
	}
	var misses int64
	for i, ids := range tr {
		for _, v := range ids {
			if !cached[v] {
				misses++
			}
		}
		for _, v := range ids {
			cached[v] = true
		}
		next := func(v int64) int {
			for j := i + 1; j < len(tr); j++ {
				if slices.Contains(tr[j], v) {
					return j
				}
			}
			return len(tr) + 1
		}
		var union []int64
		for v := range cached {
			union = append(union, v)
		}
		slices.Sort(union)
		slices.SortStableFunc(union, func(a, b int64) int { return next(a) - next(b) })
		if len(union) > capacity {
			union = union[:capacity]
		}
		cached = map[int64]bool{}
		for _, v := range union {
			cached[v] = true
		}
	}
	return misses
}

// exhaustiveOPT is the true optimum over every possible sequence of cache
// states C_{i+1} ⊆ C_i ∪ ids_i, |C| ≤ capacity, by dynamic programming over
// bitmask states (n ≤ 16).
func exhaustiveOPT(tr SliceTrace, capacity int, init []int64) int64 {
	var start uint32
	for _, v := range init {
		start |= 1 << v
	}
	dp := map[uint32]int64{start: 0}
	for _, ids := range tr {
		var need uint32
		for _, v := range ids {
			need |= 1 << v
		}
		nd := map[uint32]int64{}
		for c, cost := range dp {
			cost += int64(bits.OnesCount32(need &^ c))
			u := c | need
			// every subset of u of size <= capacity
			for sub := u; ; sub = (sub - 1) & u {
				if bits.OnesCount32(sub) <= capacity {
					if old, ok := nd[sub]; !ok || cost < old {
						nd[sub] = cost
					}
				}
				if sub == 0 {
					break
				}
			}
		}
		dp = nd
	}
	best := int64(-1)
	for _, c := range dp {
		if best < 0 || c < best {
			best = c
		}
	}
	return best
}

func TestChangesetEqualsBruteForceBelady(t *testing.T) {
	for seed := uint64(0); seed < 400; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		n := 5 + r.IntN(60)
		s := 1 + r.IntN(30)
		tr := randomTrace(r, n, s, 1+r.IntN(n))
		capacity := r.IntN(n + 1)
		init, st, err := PrecomputeChangesets(int64(n), capacity, tr, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want := bruteBelady(tr, capacity, init)
		if st.Misses != want {
			t.Fatalf("seed %d (n=%d s=%d cap=%d): changeset misses %d, brute-force Belady %d", seed, n, s, capacity, st.Misses, want)
		}
	}
}

func TestChangesetIsOptimal(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		n := 3 + r.IntN(8)
		s := 1 + r.IntN(8)
		tr := randomTrace(r, n, s, 1+r.IntN(n))
		capacity := r.IntN(4)
		init, st, err := PrecomputeChangesets(int64(n), capacity, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		if opt := exhaustiveOPT(tr, capacity, init); st.Misses != opt {
			t.Fatalf("seed %d: misses %d, exhaustive optimum from the same initial state %d", seed, st.Misses, opt)
		}
		// Prefetching the first distinct nodes never costs more reads than
		// the best policy starting from an empty cache.
		if opt := exhaustiveOPT(tr, capacity, nil); st.Misses+st.InitLoads > opt {
			t.Fatalf("seed %d: init %d + misses %d exceed the empty-start optimum %d", seed, st.InitLoads, st.Misses, opt)
		}
	}
}

// TestChangesetReplay applies every changeset to a FeatureCache and checks
// that the cache state after each iteration is exactly what the next
// iteration's hit count expects, and that gathered rows are correct.
func TestChangesetReplay(t *testing.T) {
	const dim = 3
	for seed := uint64(0); seed < 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		n := 10 + r.IntN(200)
		tr := randomTrace(r, n, 1+r.IntN(40), 1+r.IntN(n/2))
		capacity := r.IntN(n)
		row := func(v int64) []float32 { return []float32{float32(v), float32(v) + 0.5, -float32(v)} }
		var changes []Changeset
		init, st, err := PrecomputeChangesets(int64(n), capacity, tr, func(cs Changeset) error {
			changes = append(changes, Changeset{
				Iteration: cs.Iteration, InIDs: slices.Clone(cs.InIDs),
				InPositions: slices.Clone(cs.InPositions), OutIDs: slices.Clone(cs.OutIDs),
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		fc, err := NewFeatureCache(int64(n), dim, capacity)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range init {
			if err := fc.Insert(v, row(v)); err != nil {
				t.Fatal(err)
			}
		}
		var misses int64
		var miss []int
		for i, ids := range tr {
			batch := make([]float32, len(ids)*dim)
			miss = fc.Gather(ids, batch, miss)
			misses += int64(len(miss))
			for _, j := range miss {
				copy(batch[j*dim:], row(ids[j]))
			}
			for j, v := range ids {
				if !slices.Equal(batch[j*dim:(j+1)*dim], row(v)) {
					t.Fatalf("seed %d it %d: row of node %d is %v", seed, i, v, batch[j*dim:(j+1)*dim])
				}
			}
			if changes[i].Iteration != i {
				t.Fatalf("changeset %d carries iteration %d", i, changes[i].Iteration)
			}
			if err := fc.Apply(changes[i], batch); err != nil {
				t.Fatalf("seed %d it %d: %v", seed, i, err)
			}
			if fc.Len() > capacity {
				t.Fatalf("cache holds %d > %d", fc.Len(), capacity)
			}
		}
		if misses != st.Misses {
			t.Fatalf("seed %d: replay missed %d, simulation %d", seed, misses, st.Misses)
		}
	}
}

func TestChangesetStats(t *testing.T) {
	tr := SliceTrace{{3, 4}, {1, 2}, {3, 0}, {2, 4}, {3, 1}}
	init, st, err := PrecomputeChangesets(5, 2, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(init, []int64{3, 4}) {
		t.Fatalf("init = %v, want the first two distinct nodes [3 4]", init)
	}
	if st.Accesses != 10 || st.Distinct != 5 || st.InitLoads != 2 || st.Iterations != 5 {
		t.Fatalf("stats %+v", st)
	}
	if want := bruteBelady(tr, 2, init); st.Misses != want {
		t.Fatalf("misses %d want %d", st.Misses, want)
	}
}

type changingTrace struct {
	SliceTrace
	calls int
}

func (c *changingTrace) IDs(i int) ([]int64, error) {
	c.calls++
	if c.calls > len(c.SliceTrace) { // second pass sees other ids
		return []int64{0, 1, 2}, nil
	}
	return c.SliceTrace[i], nil
}

func TestChangesetBadInput(t *testing.T) {
	if _, _, err := PrecomputeChangesets(4, 1, SliceTrace{{5}}, nil); err == nil {
		t.Fatal("node outside the graph accepted")
	}
	if _, _, err := PrecomputeChangesets(0, 1, SliceTrace{}, nil); err == nil {
		t.Fatal("empty graph accepted")
	}
	tr := &changingTrace{SliceTrace: SliceTrace{{0}, {1}}}
	if _, _, err := PrecomputeChangesets(4, 1, tr, nil); !errors.Is(err, ErrTraceChanged) {
		t.Fatalf("trace changed between passes: err = %v", err)
	}
}
