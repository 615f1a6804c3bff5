package mariusgnn

// Sizing the partition buffer from the host memory budget. The artifact
// takes buffer_capacity from its configuration (its papers100M node
// classification config holds 3584 of 8192 partitions); outcore derives it
// from the run's budget, as the other variants size their caches: the
// largest c whose buffer, with everything else the run holds, fits. The
// functions here are pure so that the choice is tested from tables and the
// registry's MinMemory can state a floor before anything is opened.

import (
	"fmt"
	"slices"
)

// SizeInput is what the buffer capacity depends on.
type SizeInput struct {
	Budget   int64 // host memory budget in bytes; 0 = unlimited (c = p)
	Base     int64 // resident memory before the buffer (runtime, indptr, labels, layout, ...)
	Reserve  int64 // kept free for fluctuations
	PerBatch int64 // one gathered batch input plus the mini-batches in flight
	// PerSlotNode is memory per buffer node outside the feature rows and
	// the edges: the samplers' index arrays (4 B per node each) and the
	// subgraph's indptr (8 B).
	PerSlotNode int64
	RowBytes    int64
	PartSize    int64
	P           int
	// MinC is the least capacity the ordering accepts (SEQUENTIAL: the
	// training partitions).
	MinC int
	// Spare adds one slot for prefetching (DISPERSED with prefetch).
	Spare bool
	// Buckets are the p² bucket sizes in edges (for the in-buffer edges of
	// c partitions; nil: no edges).
	Buckets []int64
}

// edgeBound returns, for every k in 0..p, an upper bound of the edges among
// k resident partitions: the sum of the k² largest buckets.
func edgeBound(buckets []int64, p int) []int64 {
	s := slices.Clone(buckets)
	slices.Sort(s)
	slices.Reverse(s)
	prefix := make([]int64, len(s)+1)
	for i, v := range s {
		prefix[i+1] = prefix[i] + v
	}
	out := make([]int64, p+1)
	for k := 0; k <= p; k++ {
		out[k] = prefix[min(k*k, len(s))]
	}
	return out
}

// NeedBytes is the memory a buffer of c partitions needs in total: base,
// reserve, batch, feature slots, resident buckets (of all slots: a
// prefetch reads the next state's buckets while the current ones are held),
// the subgraph of one state and the per-node arrays.
func NeedBytes(in SizeInput, c int, bound []int64) int64 {
	slots := c
	if in.Spare && c < in.P {
		slots++
	}
	nodes := int64(slots) * in.PartSize
	return in.Base + in.Reserve + in.PerBatch +
		nodes*in.RowBytes +
		bound[slots]*EdgeBytes +
		4*bound[c] +
		nodes*in.PerSlotNode
}

// BufferCapacity returns the largest capacity c in [MinC, P] whose NeedBytes
// fits the budget (P when the budget is 0) and what it needs; an error
// names the least budget the ordering can run with.
func BufferCapacity(in SizeInput) (c int, need int64, err error) {
	if in.P < 1 || in.PartSize < 1 || in.RowBytes < 1 {
		return 0, 0, fmt.Errorf("buffer sizing: %d partitions of %d nodes, %d-byte rows", in.P, in.PartSize, in.RowBytes)
	}
	minC := max(in.MinC, 1)
	if minC > in.P {
		return 0, 0, fmt.Errorf("buffer sizing: the ordering needs %d partitions resident, there are %d", minC, in.P)
	}
	bound := edgeBound(in.Buckets, in.P+1)
	if in.Budget <= 0 {
		return in.P, NeedBytes(in, in.P, bound), nil
	}
	for c = in.P; c >= minC; c-- {
		if need = NeedBytes(in, c, bound); need <= in.Budget {
			return c, need, nil
		}
	}
	least := NeedBytes(in, minC, bound)
	return 0, least, fmt.Errorf("memory budget %d MiB below the least this run needs, %d MiB (a buffer of %d of %d partitions of %d MiB: %d MiB resident before the buffer, %d MiB reserve, %d MiB per mini-batch)",
		in.Budget>>20, (least+(1<<20)-1)>>20, minC, in.P, (in.PartSize*in.RowBytes)>>20, in.Base>>20, in.Reserve>>20, in.PerBatch>>20)
}

// MinBudget is a lower bound of the budget any run of this shape needs: the
// feature rows of MinC partitions, and base (what is known resident before
// the buffer). It leaves out reserve, batches and edges, so a budget above
// it may still be refused once those are measured.
func MinBudget(base, rowBytes, partSize int64, minC int) int64 {
	return base + int64(max(minC, 1))*partSize*rowBytes
}
