package sample

import (
	"errors"
	"fmt"

	"outcore/engine/metrics"
)

// IndexSource reads entries of a graph's CSC indices array (the concatenated
// in-neighbour lists). Implementations must be safe for concurrent use by
// several samplers.
type IndexSource interface {
	// Gather sets out[i] = indices[pos[i]] for every i (len(out) == len(pos)).
	// Positions come grouped by destination node and ascending within a node.
	Gather(pos []int64, out []int64) error
}

// InMemory is implemented by index sources whose whole array is addressable
// (a heap slice or a memory map); the sampler then reads it directly.
type InMemory interface {
	All() []int64
}

// Metered is implemented by memory-mapped index sources whose page faults
// go to a run's read account: a sampler that reads the array directly
// measures its thread over each batch (metrics.ThreadMeter) and adds the
// device reads under the returned kind (DESIGN §5). A nil account counts
// nothing.
type Metered interface {
	ReadAccount() (*metrics.ReadAccount, string)
}

// Topology is what the sampler reads of a graph: indptr in memory (node v's
// in-neighbours are indices[Indptr[v]:Indptr[v+1]]) and the indices through
// an IndexSource.
type Topology struct {
	Indptr  []int64
	Indices IndexSource
}

// NumNodes is the number of nodes.
func (t Topology) NumNodes() int64 { return int64(len(t.Indptr)) - 1 }

// Degree is node v's in-degree.
func (t Topology) Degree(v int64) int64 { return t.Indptr[v+1] - t.Indptr[v] }

// Check validates indptr (monotone, starting at 0); it does not read indices.
func (t Topology) Check() error {
	if len(t.Indptr) == 0 {
		return errors.New("topology: empty indptr")
	}
	if t.Indices == nil {
		return errors.New("topology: no index source")
	}
	if t.Indptr[0] != 0 {
		return fmt.Errorf("topology: indptr[0] = %d, want 0", t.Indptr[0])
	}
	for i := 1; i < len(t.Indptr); i++ {
		if t.Indptr[i] < t.Indptr[i-1] {
			return fmt.Errorf("topology: indptr decreases at %d (%d < %d)", i, t.Indptr[i], t.Indptr[i-1])
		}
	}
	if m, ok := t.Indices.(InMemory); ok {
		if n := int64(len(m.All())); n != t.Indptr[len(t.Indptr)-1] {
			return fmt.Errorf("topology: %d indices, indptr ends at %d", n, t.Indptr[len(t.Indptr)-1])
		}
	}
	return nil
}

// MemIndices is an indices array held on the Go heap.
type MemIndices []int64

// Gather implements IndexSource.
func (m MemIndices) Gather(pos []int64, out []int64) error {
	for i, p := range pos {
		if p < 0 || p >= int64(len(m)) {
			return fmt.Errorf("indices position %d out of range [0,%d)", p, len(m))
		}
		out[i] = m[p]
	}
	return nil
}

// All implements InMemory.
func (m MemIndices) All() []int64 { return m }
