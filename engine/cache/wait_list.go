package cache

// GNNDrive §4.2 and Algorithm 1 (lines 4, 13–16, 37): the wait list. When an
// extractor finds a node that another extractor is loading (valid bit 0,
// reference count > 0) it does not load it again: it records the node here
// and, after its own loads, waits until the node turns valid, then takes the
// node's slot as the alias. This is the in-flight sharing that keeps every
// node read at most once while it is in the buffer.

// WaitList holds the nodes of one extraction that other extractors load.
type WaitList struct {
	pos   []int32 // index of the node in the mini-batch's id list
	nodes []int64
}

// Add records that ids[pos] = v is being loaded by another extractor.
func (w *WaitList) Add(pos int32, v int64) {
	w.pos = append(w.pos, pos)
	w.nodes = append(w.nodes, v)
}

// Len is the number of nodes waited for.
func (w *WaitList) Len() int { return len(w.nodes) }

// Reset empties the list, keeping its memory.
func (w *WaitList) Reset() { w.pos, w.nodes = w.pos[:0], w.nodes[:0] }
