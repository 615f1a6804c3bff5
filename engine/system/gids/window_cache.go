package gids

// The GPU software cache with window buffering (GIDS §3.1, §3.4, Fig. 6;
// artifact GIDS.py window_buffering / fill_wb and BaM's page cache).
//
// BaM's application-defined software cache holds cache lines of the
// feature file (4 KiB by default: BaM reads whole lines) in GPU memory and
// evicts at random. Window buffering samples a configurable number of
// iterations ahead and keeps, per line, a counter of the accesses the
// sampled-but-not-yet-aggregated iterations will make (①–④ of Fig. 6).
// A line whose counter is positive is in the "USE" state and is not
// evicted; each access during aggregation decrements it, and at zero the
// line is "Safe to Evict" again.
//
// Stand-in: the cache lives in host memory that the variant holds outside
// the host budget, as the GPU memory it is in GIDS; its lookups run on one
// goroutine (the GPU runs them in parallel warps).
//
// A lookup of a line that is not cached takes a free slot, or evicts a
// random evictable slot: not pinned by the window and not busy (a line
// being loaded, or one whose data a pending copy still needs). When every
// slot is pinned or busy the access bypasses the cache (read into a
// scratch line, not kept): the GPU would stall on a free line instead.

import (
	"fmt"
	"math/rand/v2"

	"outcore/engine/graph"
)

// Outcome is how the cache served one access.
type Outcome uint8

const (
	// Hit: the line was valid in the cache.
	Hit Outcome = iota
	// Shared: the line was being loaded for an earlier access of the same
	// pass; the access waits for that load (Release after copying).
	Shared
	// Miss: the line now loads into the returned slot (Filled when the
	// read completed).
	Miss
	// Bypass: no slot could be freed; read the line elsewhere.
	Bypass
)

func (o Outcome) String() string {
	switch o {
	case Hit:
		return "hit"
	case Shared:
		return "shared"
	case Miss:
		return "miss"
	case Bypass:
		return "bypass"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// CacheStats counts accesses by outcome.
type CacheStats struct {
	Hits, Shared, Misses, Bypasses int64
	// Evictions counts valid lines dropped to make room.
	Evictions int64
}

// Add returns s + o.
func (s CacheStats) Add(o CacheStats) CacheStats {
	return CacheStats{s.Hits + o.Hits, s.Shared + o.Shared, s.Misses + o.Misses, s.Bypasses + o.Bypasses, s.Evictions + o.Evictions}
}

// Sub returns s − o.
func (s CacheStats) Sub(o CacheStats) CacheStats {
	return CacheStats{s.Hits - o.Hits, s.Shared - o.Shared, s.Misses - o.Misses, s.Bypasses - o.Bypasses, s.Evictions - o.Evictions}
}

// Accesses is the number of lookups counted.
func (s CacheStats) Accesses() int64 { return s.Hits + s.Shared + s.Misses + s.Bypasses }

// maxProbes is how many random slots a miss tries before scanning.
const maxProbes = 64

// WindowCache is the software cache. It is not safe for concurrent use:
// one goroutine enters windows, looks up, and reports fills and releases;
// other goroutines may write and read the data of slots it handed out
// (Miss: write until Filled; Shared and Miss: read until Release/Filled).
type WindowCache struct {
	lineBytes int64
	slotOf    []int32 // per line: its slot, or -1
	lineOf    []int64 // per slot: its line, or -1
	loading   []bool  // per slot: the load is in flight
	busy      []int32 // per slot: references of the current pass
	future    []int32 // per line: accesses pending in the window
	pinned    int     // occupied slots that are busy or pinned by the window
	free      []int32
	data      []byte
	rng       *rand.Rand
	st        CacheStats
}

// NewWindowCache returns a cache of len(data)/lineBytes slots over a file
// of lines lines. data is the cache memory (device memory in GIDS).
func NewWindowCache(lines int64, lineBytes int64, data []byte, seed uint64) (*WindowCache, error) {
	if lineBytes <= 0 || lines < 1 {
		return nil, fmt.Errorf("gids: window cache: %d lines of %d bytes", lines, lineBytes)
	}
	slots := int64(len(data)) / lineBytes
	if slots < 1 {
		return nil, fmt.Errorf("gids: window cache: %d bytes hold no %d-byte line", len(data), lineBytes)
	}
	if slots > 1<<31-1 {
		return nil, fmt.Errorf("gids: window cache: %d slots, at most 2^31-1", slots)
	}
	c := &WindowCache{
		lineBytes: lineBytes,
		slotOf:    make([]int32, lines),
		lineOf:    make([]int64, slots),
		loading:   make([]bool, slots),
		busy:      make([]int32, slots),
		future:    make([]int32, lines),
		free:      make([]int32, 0, slots),
		data:      data[:slots*lineBytes],
		rng:       rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
	}
	for i := range c.slotOf {
		c.slotOf[i] = -1
	}
	for s := slots - 1; s >= 0; s-- {
		c.lineOf[s] = -1
		c.free = append(c.free, int32(s))
	}
	return c, nil
}

// Slots is the number of lines the cache holds.
func (c *WindowCache) Slots() int { return len(c.lineOf) }

// LineBytes is the size of one line.
func (c *WindowCache) LineBytes() int64 { return c.lineBytes }

// Line returns the data of slot s.
func (c *WindowCache) Line(s int32) []byte {
	off := int64(s) * c.lineBytes
	return c.data[off : off+c.lineBytes : off+c.lineBytes]
}

// Stats returns the counts so far.
func (c *WindowCache) Stats() CacheStats { return c.st }

// Pending is the number of accesses to line the window still holds.
func (c *WindowCache) Pending(line int64) int32 { return c.future[line] }

// Loading reports whether slot s's load is still in flight.
func (c *WindowCache) Loading(s int32) bool { return c.loading[s] }

// Cached reports line's slot, or -1.
func (c *WindowCache) Cached(line int64) int32 { return c.slotOf[line] }

// isPinned reports whether occupied slot s may not be evicted.
func (c *WindowCache) isPinned(s int32) bool {
	return c.busy[s] > 0 || c.future[c.lineOf[s]] > 0
}

// Enter adds one iteration to the window: every access it will make
// (one line per access, repeats counted) pins its line until looked up.
func (c *WindowCache) Enter(lines []int64) {
	for _, l := range lines {
		c.future[l]++
		if c.future[l] == 1 {
			if s := c.slotOf[l]; s >= 0 && c.busy[s] == 0 {
				c.pinned++
			}
		}
	}
}

// ClearWindow forgets every pending access (an epoch that ended early).
func (c *WindowCache) ClearWindow() {
	clear(c.future)
	c.pinned = 0
	for s, l := range c.lineOf {
		if l >= 0 && c.busy[s] > 0 {
			c.pinned++
		}
	}
}

// Lookup serves one access to line. windowed says the access was entered
// into the window (its pending count drops by one). It returns the slot
// that holds (Hit), will hold (Shared, Miss) the line, or -1 (Bypass), and
// for a Miss that evicted a valid line that line (else -1).
func (c *WindowCache) Lookup(line int64, windowed bool) (slot int32, o Outcome, evicted int64) {
	if windowed {
		if c.future[line] <= 0 {
			panic(fmt.Sprintf("gids: window cache: line %d looked up as windowed without a pending access", line))
		}
		c.future[line]--
		if c.future[line] == 0 {
			if s := c.slotOf[line]; s >= 0 && c.busy[s] == 0 {
				c.pinned--
			}
		}
	}
	if s := c.slotOf[line]; s >= 0 {
		if !c.loading[s] {
			c.st.Hits++
			return s, Hit, -1
		}
		c.hold(s)
		c.st.Shared++
		return s, Shared, -1
	}
	evicted = -1
	var s int32
	switch {
	case len(c.free) > 0:
		s = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	case c.pinned >= len(c.lineOf):
		c.st.Bypasses++
		return -1, Bypass, -1
	default:
		s = c.victim()
		evicted = c.lineOf[s]
		c.slotOf[evicted] = -1
		c.st.Evictions++
	}
	c.lineOf[s] = line
	c.slotOf[line] = s
	c.loading[s] = true
	if c.future[line] > 0 {
		c.pinned++ // pinned by the window from now on
	}
	c.hold(s) // the loader's reference, dropped by Filled
	c.st.Misses++
	return s, Miss, evicted
}

// victim picks a random evictable slot: random probes, then a scan from a
// random start. The caller has checked that one exists.
func (c *WindowCache) victim() int32 {
	n := len(c.lineOf)
	for i := 0; i < maxProbes; i++ {
		s := int32(c.rng.IntN(n))
		if !c.isPinned(s) {
			return s
		}
	}
	start := c.rng.IntN(n)
	for i := 0; i < n; i++ {
		s := int32((start + i) % n)
		if !c.isPinned(s) {
			return s
		}
	}
	panic("gids: window cache: no evictable slot although the pinned count says there is one")
}

// hold takes a reference on occupied slot s.
func (c *WindowCache) hold(s int32) {
	if !c.isPinned(s) {
		c.pinned++
	}
	c.busy[s]++
}

// unhold drops a reference on slot s.
func (c *WindowCache) unhold(s int32) {
	if c.busy[s] <= 0 {
		panic(fmt.Sprintf("gids: window cache: slot %d released more often than held", s))
	}
	c.busy[s]--
	if !c.isPinned(s) {
		c.pinned--
	}
}

// Filled reports that the load into slot s (a Miss) completed: the line
// is valid from now on. ok false drops the line instead (the read failed).
func (c *WindowCache) Filled(s int32, ok bool) {
	if !c.loading[s] {
		panic(fmt.Sprintf("gids: window cache: slot %d filled but not loading", s))
	}
	c.loading[s] = false
	c.unhold(s)
	if !ok && c.busy[s] == 0 {
		c.drop(s)
	}
}

// Release drops the reference a Shared access took on slot s.
func (c *WindowCache) Release(s int32) { c.unhold(s) }

// drop empties unreferenced slot s.
func (c *WindowCache) drop(s int32) {
	l := c.lineOf[s]
	if c.future[l] > 0 {
		c.pinned--
	}
	c.slotOf[l] = -1
	c.lineOf[s] = -1
	c.free = append(c.free, s)
}

// windowed is one sampled mini-batch in the window buffer.
type windowed struct {
	mb    *graph.MiniBatch
	lines []int64 // the cache lines its accesses touch (entered)
}
