package cache

// An LRU cache of node ids, the replacement policy of the OS page cache and
// of GNNDrive's standby list, used here as a comparison point for Ginex's
// Belady policy at equal capacity (Ginex §2.3, Fig. 4–5).

// LRU is a fixed-capacity least-recently-used set of node ids.
type LRU struct {
	capacity   int
	index      map[int64]int32 // node -> entry
	keys       []int64
	prev, next []int32
	head, tail int32 // head = most recent; -1 when empty
}

// NewLRU returns an empty LRU set of the given capacity.
func NewLRU(capacity int) *LRU {
	if capacity < 0 {
		capacity = 0
	}
	return &LRU{capacity: capacity, index: make(map[int64]int32, capacity), head: -1, tail: -1}
}

// Len is the number of cached nodes.
func (l *LRU) Len() int { return len(l.index) }

// Contains reports whether v is cached, without touching recency.
func (l *LRU) Contains(v int64) bool { _, ok := l.index[v]; return ok }

// Access looks v up: on a hit it becomes most recent; on a miss it is
// inserted, evicting the least recent node when full. It returns whether v
// hit, and the evicted node (evicted=false when none was).
func (l *LRU) Access(v int64) (hit bool, victim int64, evicted bool) {
	if e, ok := l.index[v]; ok {
		l.unlink(e)
		l.pushFront(e)
		return true, 0, false
	}
	if l.capacity == 0 {
		return false, 0, false
	}
	var e int32
	if len(l.index) < l.capacity {
		e = int32(len(l.keys))
		l.keys = append(l.keys, v)
		l.prev = append(l.prev, -1)
		l.next = append(l.next, -1)
	} else {
		e = l.tail
		victim, evicted = l.keys[e], true
		delete(l.index, victim)
		l.unlink(e)
		l.keys[e] = v
	}
	l.index[v] = e
	l.pushFront(e)
	return false, victim, evicted
}

func (l *LRU) unlink(e int32) {
	p, n := l.prev[e], l.next[e]
	if p >= 0 {
		l.next[p] = n
	} else {
		l.head = n
	}
	if n >= 0 {
		l.prev[n] = p
	} else {
		l.tail = p
	}
	l.prev[e], l.next[e] = -1, -1
}

func (l *LRU) pushFront(e int32) {
	l.prev[e] = -1
	l.next[e] = l.head
	if l.head >= 0 {
		l.prev[l.head] = e
	}
	l.head = e
	if l.tail < 0 {
		l.tail = e
	}
}

// SimStats counts the storage reads of a simulated cache policy over a trace.
type SimStats struct {
	Accesses  int64
	Misses    int64 // lookups that read storage during the iterations
	InitLoads int64 // rows loaded before the first iteration
}

// Loads is every row read from storage: InitLoads + Misses.
func (s SimStats) Loads() int64 { return s.InitLoads + s.Misses }

// SimulateLRU replays a trace through an initially empty LRU cache of the
// given capacity, node by node in batch-input order.
func SimulateLRU(tr Trace, capacity int) (SimStats, error) {
	var st SimStats
	l := NewLRU(capacity)
	for i := 0; i < tr.Len(); i++ {
		ids, err := tr.IDs(i)
		if err != nil {
			return st, err
		}
		for _, v := range ids {
			st.Accesses++
			if hit, _, _ := l.Access(v); !hit {
				st.Misses++
			}
		}
	}
	return st, nil
}
