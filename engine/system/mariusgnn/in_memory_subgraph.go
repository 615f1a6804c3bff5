package mariusgnn

// The in-memory subgraph of a buffer state: the graph MariusGNN samples
// from (DiskGNN §1: "Sampling of mini-batches is done on the sub-graph from
// all memory-resident partitions"), which the artifact rebuilds from the
// resident edge buckets whenever the buffer state changes
// (GraphModelStorage's in_memory_subgraph). Here it is a CSC over
// slot-local ids: the node at offset k of the partition in slot s is
// s·PartSize + k, so a node's feature row is found in the buffer without a
// lookup (PartitionBuffer.Row). In-edges come from the buckets (i, j) of
// every pair of resident partitions; an edge from a partition on disk does
// not exist here.

import (
	"fmt"

	"outcore/internal/osutil"
)

// Subgraph is the CSC of the resident state's edges over slot-local ids.
type Subgraph struct {
	PartSize int64
	Slots    int
	// Indptr[local]..Indptr[local+1] are the positions in Indices of the
	// in-neighbours of local (len Slots·PartSize+1).
	Indptr  []int64
	Indices []int32 // slot-local ids of in-neighbours
	Edges   int64

	slotPart []int
	mem      []byte // anonymous mapping holding Indptr and Indices
}

// Local is the slot-local id of partitioned id v, or false when v's
// partition is not resident.
func (g *Subgraph) Local(v int64) (int64, bool) {
	q := int(v / g.PartSize)
	for s, sq := range g.slotPart {
		if sq == q {
			return int64(s)*g.PartSize + v%g.PartSize, true
		}
	}
	return 0, false
}

// Partitioned is the partitioned id of slot-local id local.
func (g *Subgraph) Partitioned(local int64) int64 {
	s := local / g.PartSize
	return int64(g.slotPart[s])*g.PartSize + local%g.PartSize
}

// Degree is local's in-degree in the subgraph.
func (g *Subgraph) Degree(local int64) int64 { return g.Indptr[local+1] - g.Indptr[local] }

// Build rebuilds g from pb's resident state (reusing g's memory when it is
// large enough).
func (g *Subgraph) Build(pb *PartitionBuffer) error {
	l := pb.l
	g.PartSize, g.Slots = l.PartSize, pb.nslots
	g.slotPart = append(g.slotPart[:0], pb.slotPart...)
	for s, q := range g.slotPart {
		if q >= 0 && !containsInt(pb.state, q) {
			g.slotPart[s] = -1 // read ahead, not part of the state
		}
	}
	n := int64(g.Slots) * g.PartSize
	edges := pb.b.StateEdges(pb.state)
	need := 8*(n+1) + 4*edges
	if int64(len(g.mem)) < need {
		if err := g.Free(); err != nil {
			return err
		}
		m, err := osutil.AnonMap(int(need))
		if err != nil {
			return fmt.Errorf("in-memory subgraph: %w", err)
		}
		g.mem = m
	}
	g.Indptr = osutil.View[int64](g.mem[:8*(n+1)])
	g.Indices = osutil.View[int32](g.mem[8*(n+1) : 8*(n+1)+4*edges])
	clear(g.Indptr)
	g.Edges = edges
	local := func(v int32) int64 {
		p := int64(v)
		return int64(pb.partSlot[p/g.PartSize])*g.PartSize + p%g.PartSize
	}
	// Count in-degrees, prefix-sum, fill (buckets in state order, each sorted
	// by destination: the lists come out deterministic).
	for _, i := range pb.state {
		for _, j := range pb.state {
			bk := pb.Bucket(i, j)
			if int64(len(bk)/2) != pb.b.Count(i, j) {
				return fmt.Errorf("in-memory subgraph: bucket (%d,%d) holds %d edges, want %d (not resident?)", i, j, len(bk)/2, pb.b.Count(i, j))
			}
			for e := 1; e < len(bk); e += 2 {
				g.Indptr[local(bk[e])+1]++
			}
		}
	}
	for k := int64(0); k < n; k++ {
		g.Indptr[k+1] += g.Indptr[k]
	}
	// Fill with a cursor per destination, borrowing Indptr[k] and restoring it.
	for _, i := range pb.state {
		for _, j := range pb.state {
			bk := pb.Bucket(i, j)
			for e := 0; e < len(bk); e += 2 {
				d := local(bk[e+1])
				g.Indices[g.Indptr[d]] = int32(local(bk[e]))
				g.Indptr[d]++
			}
		}
	}
	for k := n; k > 0; k-- {
		g.Indptr[k] = g.Indptr[k-1]
	}
	g.Indptr[0] = 0
	return nil
}

// Bytes is the memory the subgraph holds.
func (g *Subgraph) Bytes() int64 { return int64(len(g.mem)) }

// Free returns the subgraph's memory.
func (g *Subgraph) Free() error {
	g.Indptr, g.Indices = nil, nil
	if g.mem == nil {
		return nil
	}
	err := osutil.Unmap(g.mem)
	g.mem = nil
	return err
}

// SubgraphBytes is the memory of the subgraph of a state with slots slots
// of partSize nodes and edges in-buffer edges.
func SubgraphBytes(slots int, partSize, edges int64) int64 {
	return 8*(int64(slots)*partSize+1) + 4*edges
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
