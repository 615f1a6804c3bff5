package cache

// GNNDrive §4.2: the standby list. It groups the free slots and the slots
// whose nodes were released by past mini-batches (reference count 0) but may
// be reused; an extractor needing a slot takes the least recently used one,
// and a node found valid with reference count 0 has its slot taken out of
// the list again. The paper tracks the slots with a hash table in LRU order;
// slots are dense integers here, so the "hash table" is a pair of arrays
// forming an intrusive doubly linked list with O(1) insert, remove and
// pop-LRU.

// StandbyList is an LRU list of buffer slots. It is not synchronised.
type StandbyList struct {
	prev, next []int32
	in         []bool
	head, tail int32 // head = least recently used
	n          int
}

// NewStandbyList returns an empty list over slots [0, slots).
func NewStandbyList(slots int) StandbyList {
	l := StandbyList{prev: make([]int32, slots), next: make([]int32, slots), in: make([]bool, slots), head: -1, tail: -1}
	return l
}

// Len is the number of slots in the list.
func (l *StandbyList) Len() int { return l.n }

// Contains reports whether slot s is in the list.
func (l *StandbyList) Contains(s int32) bool { return l.in[s] }

// PushBack appends s as the most recently used slot.
func (l *StandbyList) PushBack(s int32) {
	if l.in[s] {
		return
	}
	l.in[s] = true
	l.prev[s], l.next[s] = l.tail, -1
	if l.tail >= 0 {
		l.next[l.tail] = s
	} else {
		l.head = s
	}
	l.tail = s
	l.n++
}

// PushFront inserts s as the least recently used slot (a slot that holds
// nothing worth keeping).
func (l *StandbyList) PushFront(s int32) {
	if l.in[s] {
		return
	}
	l.in[s] = true
	l.prev[s], l.next[s] = -1, l.head
	if l.head >= 0 {
		l.prev[l.head] = s
	} else {
		l.tail = s
	}
	l.head = s
	l.n++
}

// Remove takes s out of the list; it reports whether s was in it.
func (l *StandbyList) Remove(s int32) bool {
	if !l.in[s] {
		return false
	}
	p, n := l.prev[s], l.next[s]
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
	l.in[s] = false
	l.n--
	return true
}

// PopLRU removes and returns the least recently used slot.
func (l *StandbyList) PopLRU() (int32, bool) {
	if l.head < 0 {
		return -1, false
	}
	s := l.head
	l.Remove(s)
	return s, true
}

// Bytes is the memory the list holds.
func (l *StandbyList) Bytes() int64 { return int64(len(l.in)) * 9 }
