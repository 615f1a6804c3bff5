package cache

// Ginex §3.3–3.4 (Fig. 11–13): the changeset precomputation. Given the
// superbatch's access trace (the node ids each iteration gathers), simulate
// Belady's optimal replacement exactly and emit, per iteration, the nodes
// that enter the cache (in_ids), their positions in that iteration's batch
// input (in_positions), and the nodes that leave it (out_ids).
//
// The next accessed iteration of every node is tracked with the two arrays of
// Fig. 12: iters lists each node's accessed iterations (node-major, sorted,
// the first entry of each node marked by its most significant bit, a dummy
// entry holding S appended), and ptr points at each node's next access.
// Passes 1 and 2 build them; pass 3 advances ptr iteration by iteration and
// keeps the cache state as the num_entries candidates with the smallest next
// accessed iteration (Fig. 13, line 16). Instead of re-scanning all
// candidates each iteration (the GPU formulation), the cache state is kept in
// a max-heap keyed by next accessed iteration: only the nodes of the current
// iteration change keys, so an iteration costs O(|ids| log C).

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrTraceChanged means a trace returned different ids in a later pass than
// in an earlier one (for example a run file rewritten between passes).
var ErrTraceChanged = errors.New("cache: trace changed between passes")

// Trace is one superbatch's access trace: IDs(i) are the node ids whose
// feature rows iteration i gathers, in batch-input order and without
// duplicates. The changeset precomputation reads it three times.
type Trace interface {
	Len() int
	IDs(i int) ([]int64, error)
}

// SliceTrace is a Trace held in memory.
type SliceTrace [][]int64

// Len returns the number of iterations.
func (t SliceTrace) Len() int { return len(t) }

// IDs returns iteration i's ids.
func (t SliceTrace) IDs(i int) ([]int64, error) { return t[i], nil }

// Changeset is one iteration's cache update (Ginex Fig. 11): after iteration
// Iteration's gather, the rows of InIDs, found at InPositions of that
// iteration's batch input, replace the rows of OutIDs. len(InIDs) may exceed
// len(OutIDs) while the cache is filling.
type Changeset struct {
	Iteration   int
	InIDs       []int64
	InPositions []int32
	OutIDs      []int64
}

// ChangesetStats summarises a simulated superbatch.
type ChangesetStats struct {
	Iterations int
	Accesses   int64 // Σ|ids_i|: feature lookups of the main loop
	Misses     int64 // lookups not in the cache state of their iteration: read from storage
	InitLoads  int64 // rows prefetched at feature-cache initialisation (the init file)
	Inserts    int64
	Evictions  int64
	Distinct   int64 // distinct nodes in the trace
}

// HitRatio is 1 - Misses/Accesses (0 for an empty trace).
func (s ChangesetStats) HitRatio() float64 {
	if s.Accesses == 0 {
		return 0
	}
	return 1 - float64(s.Misses)/float64(s.Accesses)
}

const iterMark = uint32(1) << 31

// NextAccessTracker is Fig. 12's structure: ptr and iters.
type NextAccessTracker struct {
	numNodes int64
	s        uint32   // superbatch size: the "never again" value
	ptr      []uint32 // per node: index in iters of its next access
	iters    []uint32 // accessed iterations, node-major; MSB marks each node's first entry
	dummy    uint32   // index of the dummy entry (value S)
}

// BuildNextAccessTracker runs passes 1 and 2 over the trace: it counts each
// node's accesses, builds ptr by a cumulative sum and fills iters (Fig.
// 12(b)). It also returns the initial cache state: the first capacity
// distinct nodes in access order, prefetched to avoid cold misses (§3.3).
func BuildNextAccessTracker(numNodes int64, capacity int, tr Trace) (*NextAccessTracker, []int64, error) {
	if numNodes <= 0 || numNodes > math.MaxInt32 {
		return nil, nil, fmt.Errorf("cache: changeset tracker: node count %d out of range (1..%d)", numNodes, math.MaxInt32)
	}
	if capacity < 0 {
		return nil, nil, fmt.Errorf("cache: changeset tracker: negative capacity %d", capacity)
	}
	s := tr.Len()
	if s >= int(iterMark) {
		return nil, nil, fmt.Errorf("cache: changeset tracker: superbatch of %d iterations is too long", s)
	}
	t := &NextAccessTracker{numNodes: numNodes, s: uint32(s), ptr: make([]uint32, numNodes)}
	// Pass 1: frequencies (held in ptr for now) and the initial cache state.
	var init []int64
	var total uint64
	for i := 0; i < s; i++ {
		ids, err := tr.IDs(i)
		if err != nil {
			return nil, nil, fmt.Errorf("cache: changeset pass 1, iteration %d: %w", i, err)
		}
		for _, v := range ids {
			if v < 0 || v >= numNodes {
				return nil, nil, fmt.Errorf("cache: changeset pass 1, iteration %d: node %d out of range [0,%d)", i, v, numNodes)
			}
			if t.ptr[v] == 0 && len(init) < capacity {
				init = append(init, v)
			}
			t.ptr[v]++
		}
		total += uint64(len(ids))
		if total >= math.MaxUint32-1 {
			return nil, nil, fmt.Errorf("cache: changeset tracker: more than %d accesses in one superbatch", uint32(math.MaxUint32-2))
		}
	}
	// ptr = exclusive cumulative sum of the counts.
	var sum uint32
	for v, c := range t.ptr {
		t.ptr[v] = sum
		sum += c
	}
	t.iters = make([]uint32, total+1)
	t.dummy = uint32(total)
	t.iters[t.dummy] = t.s
	// Pass 2: write each access's iteration at ptr[v], advancing ptr[v].
	for i := 0; i < s; i++ {
		ids, err := tr.IDs(i)
		if err != nil {
			return nil, nil, fmt.Errorf("cache: changeset pass 2, iteration %d: %w", i, err)
		}
		for _, v := range ids {
			if v < 0 || v >= numNodes {
				return nil, nil, fmt.Errorf("cache: changeset pass 2, iteration %d: node %d: %w", i, v, ErrTraceChanged)
			}
			p := t.ptr[v]
			if p >= t.dummy {
				return nil, nil, fmt.Errorf("cache: changeset pass 2, iteration %d: %w", i, ErrTraceChanged)
			}
			t.iters[p] = uint32(i)
			t.ptr[v] = p + 1
		}
	}
	// Restore ptr by a shift (ptr[v] now holds the end of v's run = start of
	// v+1's) and mark each node's first entry (and the dummy) with the MSB.
	prevEnd := uint32(0)
	for v := range t.ptr {
		end := t.ptr[v]
		if end < prevEnd {
			return nil, nil, fmt.Errorf("cache: changeset pass 2: node %d: %w", v, ErrTraceChanged)
		}
		t.ptr[v] = prevEnd
		prevEnd = end
	}
	if prevEnd != t.dummy {
		return nil, nil, fmt.Errorf("cache: changeset pass 2: %d accesses written, %d counted: %w", prevEnd, t.dummy, ErrTraceChanged)
	}
	for v := range t.ptr {
		t.iters[t.ptr[v]] |= iterMark
	}
	t.iters[t.dummy] |= iterMark
	return t, init, nil
}

// Next returns v's next accessed iteration, or S when it is not accessed
// again in this superbatch.
func (t *NextAccessTracker) Next(v int64) uint32 { return t.iters[t.ptr[v]] &^ iterMark }

// Never is the value Next returns for a node not accessed again (S).
func (t *NextAccessTracker) Never() uint32 { return t.s }

// Advance moves the pointers of the nodes accessed in the current iteration
// to their following access (Fig. 13, lines 8–10): a pointer that lands on a
// marked entry has left its node's run and is sent to the dummy.
func (t *NextAccessTracker) Advance(ids []int64) error {
	for _, v := range ids {
		if v < 0 || v >= t.numNodes {
			return fmt.Errorf("cache: advance: node %d: %w", v, ErrTraceChanged)
		}
		p := t.ptr[v]
		if p == t.dummy {
			return fmt.Errorf("cache: advance: node %d accessed more often than counted: %w", v, ErrTraceChanged)
		}
		p++
		if t.iters[p]&iterMark != 0 {
			p = t.dummy
		}
		t.ptr[v] = p
	}
	return nil
}

// WorkspaceBytes is the memory the tracker holds.
func (t *NextAccessTracker) WorkspaceBytes() int64 {
	return int64(len(t.ptr))*4 + int64(len(t.iters))*4
}

// ChangesetWorkspaceBytes estimates the memory PrecomputeChangesets needs for
// a graph of numNodes nodes, a superbatch of accesses lookups and a cache of
// capacity entries: ptr, iters, the heap positions and the heap.
func ChangesetWorkspaceBytes(numNodes, accesses int64, capacity int) int64 {
	return numNodes*4 + (accesses+1)*4 + numNodes*4 + int64(capacity)*16
}

// beladyState is the simulated cache state of pass 3: a max-heap of cached
// nodes keyed by their next accessed iteration, with each node's heap index.
type beladyState struct {
	heap []heapEntry
	pos  []int32 // per node: index in heap, -1 when not cached
}

type heapEntry struct {
	node int64
	next uint32
}

func (h *beladyState) less(i, j int) bool { return h.heap[i].next > h.heap[j].next }

func (h *beladyState) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.pos[h.heap[i].node] = int32(i)
	h.pos[h.heap[j].node] = int32(j)
}

func (h *beladyState) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *beladyState) down(i int) bool {
	start := i
	n := len(h.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}

func (h *beladyState) push(e heapEntry) {
	h.heap = append(h.heap, e)
	h.pos[e.node] = int32(len(h.heap) - 1)
	h.up(len(h.heap) - 1)
}

func (h *beladyState) popMax() heapEntry {
	top := h.heap[0]
	last := len(h.heap) - 1
	h.swap(0, last)
	h.heap = h.heap[:last]
	h.pos[top.node] = -1
	if last > 0 {
		h.down(0)
	}
	return top
}

func (h *beladyState) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

type candidate struct {
	node int64
	at   int32
	next uint32
}

// SimulateBelady runs pass 3 (Fig. 13): starting from the initial cache
// state init, it walks the trace once, advancing the tracker, and emits each
// iteration's changeset. The slices of a Changeset are reused after emit
// returns; emit must copy what it keeps. Nodes not accessed again are never
// inserted (they would be evicted unused).
func SimulateBelady(t *NextAccessTracker, init []int64, capacity int, tr Trace, emit func(Changeset) error) (ChangesetStats, error) {
	var st ChangesetStats
	if len(init) > capacity {
		return st, fmt.Errorf("cache: belady: %d initial entries exceed capacity %d", len(init), capacity)
	}
	if tr.Len() != int(t.s) {
		return st, fmt.Errorf("cache: belady: trace has %d iterations, tracker %d: %w", tr.Len(), t.s, ErrTraceChanged)
	}
	h := &beladyState{heap: make([]heapEntry, 0, capacity), pos: make([]int32, t.numNodes)}
	for i := range h.pos {
		h.pos[i] = -1
	}
	for _, v := range init {
		if v < 0 || v >= t.numNodes {
			return st, fmt.Errorf("cache: belady: initial node %d out of range", v)
		}
		if h.pos[v] >= 0 {
			return st, fmt.Errorf("cache: belady: initial node %d listed twice", v)
		}
		h.push(heapEntry{node: v, next: t.Next(v)})
	}
	st.InitLoads = int64(len(init))
	st.Iterations = tr.Len()
	st.Distinct = t.distinct()
	var cands []candidate
	var cs Changeset
	for i := 0; i < tr.Len(); i++ {
		ids, err := tr.IDs(i)
		if err != nil {
			return st, fmt.Errorf("cache: changeset pass 3, iteration %d: %w", i, err)
		}
		if err := t.Advance(ids); err != nil {
			return st, fmt.Errorf("cache: changeset pass 3, iteration %d: %w", i, err)
		}
		st.Accesses += int64(len(ids))
		cands = cands[:0]
		for j, v := range ids {
			nx := t.Next(v)
			if p := h.pos[v]; p >= 0 {
				h.heap[p].next = nx
				h.fix(int(p))
				continue
			}
			st.Misses++
			if nx < t.s {
				cands = append(cands, candidate{node: v, at: int32(j), next: nx})
			}
		}
		slices.SortStableFunc(cands, func(a, b candidate) int { return int(a.next) - int(b.next) })
		cs.Iteration = i
		cs.InIDs, cs.InPositions, cs.OutIDs = cs.InIDs[:0], cs.InPositions[:0], cs.OutIDs[:0]
		for _, c := range cands {
			if len(h.heap) >= capacity {
				if capacity == 0 || c.next >= h.heap[0].next {
					break // every later candidate is accessed no sooner than the worst kept entry
				}
				ev := h.popMax()
				cs.OutIDs = append(cs.OutIDs, ev.node)
			}
			h.push(heapEntry{node: c.node, next: c.next})
			cs.InIDs = append(cs.InIDs, c.node)
			cs.InPositions = append(cs.InPositions, c.at)
		}
		st.Inserts += int64(len(cs.InIDs))
		st.Evictions += int64(len(cs.OutIDs))
		if emit != nil {
			if err := emit(cs); err != nil {
				return st, fmt.Errorf("cache: changeset pass 3, iteration %d: %w", i, err)
			}
		}
	}
	return st, nil
}

// distinct counts nodes with at least one access: those whose run in iters
// is non-empty.
func (t *NextAccessTracker) distinct() int64 {
	var n int64
	for v := int64(0); v < t.numNodes; v++ {
		start := t.ptr[v]
		if start == t.dummy {
			continue
		}
		// A run is non-empty when the next node's run starts later.
		var end uint32
		if v+1 < t.numNodes {
			end = t.ptr[v+1]
		} else {
			end = t.dummy
		}
		if end > start {
			n++
		}
	}
	return n
}

// PrecomputeChangesets runs all three passes over a superbatch trace with a
// cache of capacity entries. It returns the init list (rows to prefetch at
// feature-cache initialisation) and the statistics; emit receives every
// iteration's changeset.
func PrecomputeChangesets(numNodes int64, capacity int, tr Trace, emit func(Changeset) error) ([]int64, ChangesetStats, error) {
	t, init, err := BuildNextAccessTracker(numNodes, capacity, tr)
	if err != nil {
		return nil, ChangesetStats{}, err
	}
	st, err := SimulateBelady(t, init, capacity, tr, emit)
	return init, st, err
}
