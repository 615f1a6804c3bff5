package cache

// GNNDrive §4.2 (Fig. 6): the mapping table of the feature buffer. One entry
// per graph node holds the slot the node is mapped to (-1: not applicable),
// a reference count (how many mini-batches in flight use the node) and a
// valid bit (the node's data is in the slot). Slot ≠ -1 with valid = 0 means
// the data is being extracted into the slot; slot = -1 with valid = 1 never
// happens. Entries are packed in 8 bytes: the slot, and refcount<<1 | valid.

// MappingEntry is a decoded mapping-table entry.
type MappingEntry struct {
	Slot  int32 // -1 when the node is not in the buffer
	Ref   int32 // mini-batches holding the node
	Valid bool  // the node's data is ready in Slot
}

type mapEntry struct {
	slot  int32
	state uint32 // ref<<1 | valid
}

// MappingTable is the per-node mapping table. It is not synchronised: the
// FeatureBuffer guards it with its lock.
type MappingTable struct {
	e []mapEntry
}

// NewMappingTable returns a table for numNodes nodes, all unmapped.
func NewMappingTable(numNodes int64) MappingTable {
	t := MappingTable{e: make([]mapEntry, numNodes)}
	for i := range t.e {
		t.e[i].slot = -1
	}
	return t
}

// Len is the number of nodes.
func (t *MappingTable) Len() int64 { return int64(len(t.e)) }

// Get decodes node v's entry.
func (t *MappingTable) Get(v int64) MappingEntry {
	e := t.e[v]
	return MappingEntry{Slot: e.slot, Ref: int32(e.state >> 1), Valid: e.state&1 == 1}
}

func (t *MappingTable) slot(v int64) int32       { return t.e[v].slot }
func (t *MappingTable) ref(v int64) int32        { return int32(t.e[v].state >> 1) }
func (t *MappingTable) valid(v int64) bool       { return t.e[v].state&1 == 1 }
func (t *MappingTable) setSlot(v int64, s int32) { t.e[v].slot = s }
func (t *MappingTable) incRef(v int64)           { t.e[v].state += 2 }
func (t *MappingTable) decRef(v int64) int32     { t.e[v].state -= 2; return int32(t.e[v].state >> 1) }

func (t *MappingTable) setValid(v int64, ok bool) {
	if ok {
		t.e[v].state |= 1
	} else {
		t.e[v].state &^= 1
	}
}

// Bytes is the memory the table holds.
func (t *MappingTable) Bytes() int64 { return int64(len(t.e)) * 8 }
