package gids

import (
	"math/rand/v2"
	"testing"
)

// skewedTrace returns batches of line accesses drawn from a power-law
// popularity over lines lines.
func skewedTrace(seed uint64, batches, perBatch int, lines int64) [][]int64 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([][]int64, batches)
	for i := range out {
		for j := 0; j < perBatch; j++ {
			// u^3 concentrates on small ids
			u := r.Float64()
			out[i] = append(out[i], int64(u*u*u*float64(lines)))
		}
	}
	return out
}

// runPasses drives the cache the way the GIDS loader does: batches are
// entered into the window window iterations ahead, merge batches form one
// pass whose lookups all happen before its loads complete. With check it
// asserts, against an independent count of the accesses the window holds,
// that no eviction drops a line the window still needs.
func runPasses(t *testing.T, c *WindowCache, trace [][]int64, window, merge int, check bool) {
	t.Helper()
	need := map[int64]int{}
	entered := 0
	for i := 0; i < len(trace); i += merge {
		end := min(i+merge, len(trace))
		if window > 0 {
			for ; entered < min(len(trace), end+window); entered++ {
				c.Enter(trace[entered])
				for _, l := range trace[entered] {
					need[l]++
				}
			}
		}
		var loads, waits []int32
		for _, b := range trace[i:end] {
			for _, l := range b {
				if window > 0 {
					need[l]--
				}
				s, o, ev := c.Lookup(l, window > 0)
				if check && ev >= 0 && need[ev] > 0 {
					t.Fatalf("batch %d: evicted line %d that %d windowed accesses still need", i, ev, need[ev])
				}
				switch o {
				case Hit:
					if c.Cached(l) != s {
						t.Fatalf("hit on line %d in slot %d, cached in %d", l, s, c.Cached(l))
					}
				case Shared:
					waits = append(waits, s)
				case Miss:
					loads = append(loads, s)
				case Bypass:
					if s != -1 {
						t.Fatalf("bypass with slot %d", s)
					}
				}
			}
		}
		if check {
			for l, n := range need {
				if int(c.Pending(l)) != n {
					t.Fatalf("line %d: cache counts %d pending accesses, the window holds %d", l, c.Pending(l), n)
				}
			}
		}
		for _, s := range loads {
			c.Filled(s, true)
		}
		for _, s := range waits {
			c.Release(s)
		}
	}
}

func TestWindowNeverEvictsLinesTheWindowNeeds(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 2))
		lines := int64(50 + r.IntN(500))
		slots := 1 + r.IntN(int(lines/2))
		window := r.IntN(10)
		merge := 1 + r.IntN(3)
		trace := skewedTrace(seed, 30, 1+r.IntN(60), lines)
		c, err := NewWindowCache(lines, 16, make([]byte, slots*16), seed)
		if err != nil {
			t.Fatal(err)
		}
		runPasses(t, c, trace, window, merge, true)
		st := c.Stats()
		var total int64
		for _, b := range trace {
			total += int64(len(b))
		}
		if st.Accesses() != total {
			t.Fatalf("seed %d: %d accesses counted, %d made", seed, st.Accesses(), total)
		}
		if c.pinned != 0 {
			t.Fatalf("seed %d: %d slots still pinned after the last pass", seed, c.pinned)
		}
	}
}

func TestWindowKeepsTheReusedLine(t *testing.T) {
	// Two slots; line 0 is needed every other batch, the others once. With
	// a window of 2 it stays pinned and hits every time after the first;
	// with random eviction it is dropped now and then.
	var trace [][]int64
	for i := 1; i <= 200; i++ {
		trace = append(trace, []int64{0}, []int64{int64(i)})
	}
	hits := func(window int) int64 {
		c, _ := NewWindowCache(201, 8, make([]byte, 16), 7)
		runPasses(t, c, trace, window, 1, true)
		return c.Stats().Hits
	}
	if got := hits(2); got != 199 {
		t.Fatalf("window 2: %d hits, want 199 (every reuse of line 0)", got)
	}
	if got := hits(0); got >= 199 {
		t.Fatalf("random eviction kept line 0 every time (%d hits): the test shows nothing", got)
	}
}

func TestWindowCacheBypassWhenEverythingIsPinned(t *testing.T) {
	c, _ := NewWindowCache(100, 8, make([]byte, 3*8), 1)
	// one pass of 5 distinct lines through 3 slots: the 4th and 5th find
	// every slot loading
	runPasses(t, c, [][]int64{{1, 2, 3, 4, 5}}, 0, 1, false)
	st := c.Stats()
	if st.Misses != 3 || st.Bypasses != 2 || st.Evictions != 0 {
		t.Fatalf("%+v", st)
	}
	// the next pass evicts freely
	runPasses(t, c, [][]int64{{4, 5, 1}}, 0, 1, false)
	if st = c.Stats(); st.Evictions != 2 || st.Hits+st.Misses != 6 {
		t.Fatalf("%+v", st)
	}
}

func TestWindowCacheSharedWithinAPass(t *testing.T) {
	c, _ := NewWindowCache(10, 8, make([]byte, 4*8), 1)
	s1, o1, _ := c.Lookup(3, false)
	s2, o2, _ := c.Lookup(3, false)
	if o1 != Miss || o2 != Shared || s1 != s2 {
		t.Fatalf("%v %v %d %d", o1, o2, s1, s2)
	}
	copy(c.Line(s1), "abcdefgh")
	c.Filled(s1, true)
	// still referenced by the shared access: not evictable
	if !c.isPinned(s1) {
		t.Fatal("slot with a pending shared copy is evictable")
	}
	c.Release(s2)
	if s, o, _ := c.Lookup(3, false); o != Hit || string(c.Line(s)) != "abcdefgh" {
		t.Fatalf("%v %q", o, c.Line(s))
	}
	// a failed load leaves nothing behind
	s, _, _ := c.Lookup(5, false)
	c.Filled(s, false)
	if c.Cached(5) != -1 {
		t.Fatal("failed load cached")
	}
}

func TestNewWindowCacheBadInput(t *testing.T) {
	if _, err := NewWindowCache(10, 0, make([]byte, 8), 1); err == nil {
		t.Error("zero line size accepted")
	}
	if _, err := NewWindowCache(10, 16, make([]byte, 8), 1); err == nil {
		t.Error("memory for no line accepted")
	}
	if _, err := NewWindowCache(0, 16, make([]byte, 32), 1); err == nil {
		t.Error("empty file accepted")
	}
}
