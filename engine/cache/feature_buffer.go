package cache

// GNNDrive §4.2–4.3 and Algorithm 1: the feature buffer shared by the
// extractors, the trainer and the releaser. It holds Slots rows of Dim
// float32s; the mapping table maps nodes to slots with a reference count and
// a valid bit, the reverse mapping maps slots back to nodes, the standby list
// keeps released slots in LRU order, and wait lists let an extractor share a
// node another extractor is loading instead of reading it twice.
//
// One extraction goes:
//
//	x.Reset(ids)
//	buf.Acquire(&x)        // Algorithm 1 lines 5–30: reuse, share, allocate
//	for each l in x.Loads: read node l.Node into buf.Row(l.Slot) (phase 1 and 2)
//	buf.MarkValid(loaded)  // line 36, as loads complete
//	buf.Await(&x)          // line 37: wait-list nodes turn valid
//	... x.Aliases index the rows for training ...
//	buf.Release(ids)       // the releaser, after training
//
// A slot is reused only when its node's reference count is zero: slots enter
// the standby list only on the last release, and leave it when a lookup pins
// their node again or an extractor takes the LRU one for a new node
// (invalidating the node it held). At least N_e × M_b slots are reserved
// (NewFeatureBuffer refuses fewer) so that N_e extractors each holding a
// mini-batch of up to M_b nodes can always finish. Admission makes the
// guarantee hold even for a batch larger than the M_b the buffer was sized
// with: an extraction starts only while the batches being extracted fit in
// the buffer together, which never delays anything when every batch is at
// most M_b nodes.

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Sentinel errors of the feature buffer.
var (
	ErrBufferTooSmall = errors.New("cache: feature buffer smaller than the N_e × M_b reservation")
	ErrBatchTooLarge  = errors.New("cache: mini-batch has more nodes than the feature buffer has slots")
	ErrBufferClosed   = errors.New("cache: feature buffer failed or closed")
)

// Alias values of an Extraction before Await resolves them.
const (
	aliasLoad = -1 // to be loaded by this extraction
	aliasWait = -2 // loaded by another extraction; resolved by Await
)

// Load is one node an extraction must read from storage into Slot; Pos is
// its index in the mini-batch's id list.
type Load struct {
	Node int64
	Slot int32
	Pos  int32
}

// Extraction is one extractor's work on one mini-batch. Reuse it across
// mini-batches to avoid allocation.
type Extraction struct {
	IDs     []int64
	Aliases []int32 // slot of each id, valid after Await
	Loads   []Load  // reads this extraction issues
	Wait    WaitList
	Hits    int // ids found valid (Algorithm 1 line 7)
	Shared  int // ids being loaded by another extractor (line 13)

	admitted int
	acquired bool
}

// Reset prepares x for a new mini-batch of the given ids.
func (x *Extraction) Reset(ids []int64) {
	x.IDs = ids
	if cap(x.Aliases) < len(ids) {
		x.Aliases = make([]int32, len(ids))
	}
	x.Aliases = x.Aliases[:len(ids)]
	x.Loads = x.Loads[:0]
	x.Wait.Reset()
	x.Hits, x.Shared, x.admitted, x.acquired = 0, 0, 0, false
}

// FeatureBufferConfig sizes a feature buffer.
type FeatureBufferConfig struct {
	Nodes      int64 // nodes in the graph (mapping-table entries)
	Dim        int   // float32s per row
	Slots      int   // rows of the buffer
	Extractors int   // N_e
	MaxBatch   int   // M_b: most nodes in one mini-batch
	// Rows, when set, is the memory of the buffer's rows (at least
	// Slots×Dim float32s, e.g. allocated outside the Go heap); nil allocates.
	Rows []float32
}

// FeatureBufferBytes is the memory a buffer of this configuration holds:
// rows, mapping table, reverse mapping and standby list.
func FeatureBufferBytes(c FeatureBufferConfig) int64 {
	return int64(c.Slots)*int64(c.Dim)*4 + c.Nodes*8 + int64(c.Slots)*(8+9)
}

// BufferStats counts what the buffer did.
type BufferStats struct {
	Lookups      int64         // ids acquired
	Hits         int64         // found valid in the buffer
	Shared       int64         // found in flight, waited for instead of read again
	Loads        int64         // read from storage
	Evictions    int64         // valid nodes invalidated to reuse their slot
	SlotWaits    int64         // times an extractor found the standby list empty
	SlotWaitTime time.Duration // time extractors spent waiting for a slot
	AdmitWaits   int64         // extractions delayed by admission
}

// FeatureBuffer is GNNDrive's feature buffer. All methods are safe for
// concurrent use.
type FeatureBuffer struct {
	mu      sync.Mutex
	cond    *sync.Cond
	cfg     FeatureBufferConfig
	table   MappingTable
	reverse []int64 // slot -> node, -1 when empty
	standby StandbyList
	data    []float32
	refs    int64 // sum of reference counts
	// admitted is the number of ids of the mini-batches being extracted.
	admitted int
	err      error
	stats    BufferStats

	// trace, when set (tests), is called under the lock at every state change.
	trace func(ev bufferEvent)
}

type bufferEventKind int

const (
	evAssign     bufferEventKind = iota // node gets slot, load issued
	evInvalidate                        // node loses slot
	evValid                             // node's data is ready
	evPin                               // node pinned (ref 0 -> 1 while valid)
	evStandby                           // node's slot enters the standby list
)

type bufferEvent struct {
	kind bufferEventKind
	node int64
	slot int32
}

// NewFeatureBuffer allocates a buffer. It refuses fewer slots than
// Extractors × MaxBatch, the reservation that prevents deadlock.
func NewFeatureBuffer(c FeatureBufferConfig) (*FeatureBuffer, error) {
	if c.Nodes <= 0 || c.Dim <= 0 || c.Slots <= 0 || c.Extractors <= 0 || c.MaxBatch <= 0 {
		return nil, fmt.Errorf("cache: feature buffer: bad configuration %+v", c)
	}
	if c.Slots > 1<<31-1 {
		return nil, fmt.Errorf("cache: feature buffer: %d slots do not fit an int32 alias", c.Slots)
	}
	if int64(c.Slots) < int64(c.Extractors)*int64(c.MaxBatch) {
		return nil, fmt.Errorf("cache: %d slots < %d extractors × %d nodes: %w", c.Slots, c.Extractors, c.MaxBatch, ErrBufferTooSmall)
	}
	b := &FeatureBuffer{
		cfg:     c,
		table:   NewMappingTable(c.Nodes),
		reverse: make([]int64, c.Slots),
		standby: NewStandbyList(c.Slots),
		data:    c.Rows,
	}
	if b.data == nil {
		b.data = make([]float32, c.Slots*c.Dim)
	} else if len(b.data) < c.Slots*c.Dim {
		return nil, fmt.Errorf("cache: feature buffer: %d floats of row memory for %d slots × %d", len(b.data), c.Slots, c.Dim)
	}
	b.data = b.data[:c.Slots*c.Dim]
	b.cfg.Rows = nil
	b.cond = sync.NewCond(&b.mu)
	for s := range b.reverse {
		b.reverse[s] = -1
		b.standby.PushBack(int32(s))
	}
	return b, nil
}

// Config returns the buffer's configuration.
func (b *FeatureBuffer) Config() FeatureBufferConfig { return b.cfg }

// Bytes is the memory the buffer holds.
func (b *FeatureBuffer) Bytes() int64 { return FeatureBufferBytes(b.cfg) }

// Rows returns the rows of every slot (slot s is Rows()[s*Dim:(s+1)*Dim]),
// for a reader that indexes them through an extraction's aliases, with
// Row's rules.
func (b *FeatureBuffer) Rows() []float32 { return b.data }

// Row returns slot s's row. Write it only for a Load of the caller's own
// extraction before MarkValid; read it only through an alias of an
// extraction that Await returned, before its Release.
func (b *FeatureBuffer) Row(s int32) []float32 {
	o := int(s) * b.cfg.Dim
	return b.data[o : o+b.cfg.Dim : o+b.cfg.Dim]
}

// Acquire runs the first part of Algorithm 1 for x.IDs (distinct node ids):
// every id's reference count is incremented; valid ids are aliased to their
// slot (taken out of the standby list when unreferenced); ids another
// extraction is loading go to the wait list; the rest get the LRU standby
// slot (invalidating the node it held) and are returned in x.Loads for the
// caller to read. Acquire blocks while admission or the standby list makes
// it wait; it fails only when the buffer failed or the batch can never fit.
func (b *FeatureBuffer) Acquire(x *Extraction) error {
	n := len(x.IDs)
	if n > b.cfg.Slots {
		return fmt.Errorf("cache: acquire %d ids into %d slots: %w", n, b.cfg.Slots, ErrBatchTooLarge)
	}
	if len(x.Aliases) != n {
		x.Reset(x.IDs)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Admission: the batches being extracted must fit together.
	waited := false
	for b.err == nil && b.admitted > 0 && b.admitted+n > b.cfg.Slots {
		waited = true
		b.cond.Wait()
	}
	if b.err != nil {
		return b.err
	}
	if waited {
		b.stats.AdmitWaits++
	}
	b.admitted += n
	x.admitted = n
	x.acquired = true
	// Lines 5–19: reuse valid data, share in-flight data, count references.
	for i, v := range x.IDs {
		if v < 0 || v >= b.cfg.Nodes {
			b.undoLocked(x, i)
			return fmt.Errorf("cache: acquire: node %d out of range [0,%d)", v, b.cfg.Nodes)
		}
		switch {
		case b.table.valid(v):
			s := b.table.slot(v)
			if b.table.ref(v) == 0 {
				b.standby.Remove(s)
				b.emit(evPin, v, s)
			}
			x.Aliases[i] = s
			x.Hits++
		case b.table.ref(v) > 0:
			x.Aliases[i] = aliasWait
			x.Wait.Add(int32(i), v)
			x.Shared++
		default:
			x.Aliases[i] = aliasLoad
		}
		b.table.incRef(v)
		b.refs++
	}
	b.stats.Lookups += int64(n)
	b.stats.Hits += int64(x.Hits)
	b.stats.Shared += int64(x.Shared)
	// Lines 20–30: a slot for every node to load.
	for i, v := range x.IDs {
		if x.Aliases[i] != aliasLoad {
			continue
		}
		s, err := b.takeSlotLocked()
		if err != nil {
			return err
		}
		if old := b.reverse[s]; old >= 0 {
			b.table.setValid(old, false)
			b.table.setSlot(old, -1)
			b.stats.Evictions++
			b.emit(evInvalidate, old, s)
		}
		b.table.setSlot(v, s)
		b.reverse[s] = v
		x.Aliases[i] = s
		x.Loads = append(x.Loads, Load{Node: v, Slot: s, Pos: int32(i)})
		b.emit(evAssign, v, s)
	}
	b.stats.Loads += int64(len(x.Loads))
	if len(x.Wait.nodes) > 0 {
		// Nodes this extraction claimed are now assigned: wake waiters
		// that resolve their aliases (none can be valid yet).
		b.cond.Broadcast()
	}
	return nil
}

// takeSlotLocked pops the LRU standby slot, waiting for the releaser when
// the list is empty.
func (b *FeatureBuffer) takeSlotLocked() (int32, error) {
	if s, ok := b.standby.PopLRU(); ok {
		return s, nil
	}
	b.stats.SlotWaits++
	start := time.Now()
	defer func() { b.stats.SlotWaitTime += time.Since(start) }()
	for {
		if b.err != nil {
			return -1, b.err
		}
		if s, ok := b.standby.PopLRU(); ok {
			return s, nil
		}
		b.cond.Wait()
	}
}

// undoLocked drops the references x took on its first i ids (bad input).
func (b *FeatureBuffer) undoLocked(x *Extraction, i int) {
	for _, v := range x.IDs[:i] {
		b.releaseOneLocked(v)
	}
	b.admitted -= x.admitted
	x.admitted, x.acquired = 0, false
	b.cond.Broadcast()
}

// MarkValid sets the valid bit of loaded nodes (their rows are written):
// Algorithm 1 line 36. Waiting extractions see them.
func (b *FeatureBuffer) MarkValid(loads []Load) {
	if len(loads) == 0 {
		return
	}
	b.mu.Lock()
	for _, l := range loads {
		b.table.setValid(l.Node, true)
		b.emit(evValid, l.Node, l.Slot)
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

// Await waits until every node of x's wait list is valid and resolves its
// alias (Algorithm 1 line 37), then ends x's admission. After Await,
// x.Aliases index the rows of every id.
func (b *FeatureBuffer) Await(x *Extraction) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, v := range x.Wait.nodes {
		for b.err == nil && !b.table.valid(v) {
			b.cond.Wait()
		}
		if b.err != nil {
			return b.err
		}
		x.Aliases[x.Wait.pos[k]] = b.table.slot(v)
	}
	if x.acquired {
		b.admitted -= x.admitted
		x.admitted, x.acquired = 0, false
		b.cond.Broadcast()
	}
	return nil
}

// Release drops one reference on each id (the releaser, after training). A
// node whose count reaches zero has its slot appended to the standby list;
// its mapping stays valid until the slot is reused, so a later mini-batch
// can still hit it.
func (b *FeatureBuffer) Release(ids []int64) {
	b.mu.Lock()
	for _, v := range ids {
		b.releaseOneLocked(v)
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

func (b *FeatureBuffer) releaseOneLocked(v int64) {
	if b.table.ref(v) <= 0 {
		if b.err == nil {
			b.err = fmt.Errorf("cache: release of node %d with no reference: %w", v, ErrBufferClosed)
		}
		return
	}
	b.refs--
	if b.table.decRef(v) > 0 {
		return
	}
	s := b.table.slot(v)
	switch {
	case s < 0:
		// claimed but never assigned (undo before allocation)
	case b.table.valid(v):
		b.standby.PushBack(s)
		b.emit(evStandby, v, s)
	default:
		// assigned but never loaded (failed extraction): free the slot
		b.table.setSlot(v, -1)
		b.reverse[s] = -1
		b.standby.PushFront(s)
	}
}

// Fail poisons the buffer: every blocked and later call returns err. An
// extractor calls it when a read fails, since extractions waiting for the
// failed nodes could otherwise never finish.
func (b *FeatureBuffer) Fail(err error) {
	if err == nil {
		err = ErrBufferClosed
	}
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

// Err returns the error the buffer failed with, if any.
func (b *FeatureBuffer) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// References is the sum of all reference counts: zero once every acquired
// mini-batch has been released (checked at the end of an epoch).
func (b *FeatureBuffer) References() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refs
}

// CheckQuiescent verifies the state at the end of an epoch: no references,
// nothing admitted, every slot in the standby list, and the mapping table
// and reverse mapping agreeing. It is O(nodes + slots).
func (b *FeatureBuffer) CheckQuiescent() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.refs != 0 || b.admitted != 0 {
		return fmt.Errorf("cache: feature buffer holds %d references and %d admitted ids at rest", b.refs, b.admitted)
	}
	if b.standby.Len() != b.cfg.Slots {
		return fmt.Errorf("cache: %d of %d slots in the standby list at rest", b.standby.Len(), b.cfg.Slots)
	}
	return b.checkMappingLocked()
}

func (b *FeatureBuffer) checkMappingLocked() error {
	for v := int64(0); v < b.cfg.Nodes; v++ {
		e := b.table.Get(v)
		if e.Slot < 0 {
			if e.Valid {
				return fmt.Errorf("cache: node %d valid without a slot", v)
			}
			continue
		}
		if b.reverse[e.Slot] != v {
			return fmt.Errorf("cache: node %d maps to slot %d which maps back to %d", v, e.Slot, b.reverse[e.Slot])
		}
		if e.Ref == 0 && e.Valid && !b.standby.Contains(e.Slot) {
			return fmt.Errorf("cache: unreferenced node %d's slot %d is not in the standby list", v, e.Slot)
		}
		if e.Ref > 0 && b.standby.Contains(e.Slot) {
			return fmt.Errorf("cache: referenced node %d's slot %d is in the standby list", v, e.Slot)
		}
	}
	return nil
}

// Stats returns the counters so far.
func (b *FeatureBuffer) Stats() BufferStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

func (b *FeatureBuffer) emit(k bufferEventKind, v int64, s int32) {
	if b.trace != nil {
		b.trace(bufferEvent{kind: k, node: v, slot: s})
	}
}
