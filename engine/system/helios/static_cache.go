package helios

// The GPU-managed heterogeneous cache's placement (Helios §3.2): before
// training, one epoch of pre-sampling counts how often each node's feature
// is accessed ("hotness"); nodes sorted by hotness, descending, fill the
// GPU cache first and the CPU cache (the host memory left after the whole
// topology) next. The cache is static for the run (the pre-sampling policy
// of Legion [38] and GNNLab [46]).
//
// Stand-in: the GPU tier lives in host memory the variant holds outside
// the host budget, as the GPU memory it is in Helios; lookups run on the
// goroutine preparing the batch (Helios runs them as GPU warps, reaching
// the CPU tier over UVA).

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"outcore/engine/system/kit"
	"outcore/internal/osutil"
)

// CountAccesses adds one access per entry of nodes (a mini-batch's input
// nodes) to counts.
func CountAccesses(counts []uint32, nodes []int64) {
	for _, v := range nodes {
		if counts[v] < ^uint32(0) {
			counts[v]++
		}
	}
}

// Placement is where the static cache keeps each node.
type Placement struct {
	// GPU and CPU list the cached nodes of each tier, hottest first; a
	// node's position is its row in the tier.
	GPU, CPU []int64
}

// Place ranks nodes by counts (descending, ties by smaller id) and fills
// gpuRows rows of the GPU tier, then cpuRows rows of the CPU tier. Nodes
// never accessed in pre-sampling are not cached.
func Place(counts []uint32, gpuRows, cpuRows int64) (Placement, error) {
	if gpuRows < 0 || cpuRows < 0 {
		return Placement{}, fmt.Errorf("helios: static cache: negative tier size (GPU %d, CPU %d rows)", gpuRows, cpuRows)
	}
	var hot []int64
	for v, c := range counts {
		if c > 0 {
			hot = append(hot, int64(v))
		}
	}
	slices.SortFunc(hot, func(a, b int64) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	g := min(gpuRows, int64(len(hot)))
	c := min(cpuRows, int64(len(hot))-g)
	return Placement{GPU: hot[:g:g], CPU: hot[g : g+c : g+c]}, nil
}

// Tier names a level of the cache.
type Tier uint8

const (
	// None: read from storage.
	None Tier = iota
	// GPU: the GPU tier (device memory).
	GPU
	// CPU: the CPU tier (host memory after the topology).
	CPU
)

// Tiers is the lookup table of a Placement: for each node its tier and row.
type Tiers struct {
	// code[v] >= 0: GPU row; <= -2: CPU row -code-2; -1: not cached.
	code     []int32
	gpu, cpu int
}

// NewTiers builds the lookup table of p for a graph of nodes nodes. A node
// listed twice, in one tier or across both, is an error.
func NewTiers(nodes int64, p Placement) (*Tiers, error) {
	if int64(len(p.GPU)) > 1<<31-2 || int64(len(p.CPU)) > 1<<31-2 {
		return nil, fmt.Errorf("helios: static cache: tiers of %d and %d rows exceed 2^31-2", len(p.GPU), len(p.CPU))
	}
	t := &Tiers{code: make([]int32, nodes), gpu: len(p.GPU), cpu: len(p.CPU)}
	for i := range t.code {
		t.code[i] = -1
	}
	set := func(v int64, code int32, tier string) error {
		if v < 0 || v >= nodes {
			return fmt.Errorf("helios: static cache: %s node %d out of range [0,%d)", tier, v, nodes)
		}
		if t.code[v] != -1 {
			return fmt.Errorf("helios: static cache: node %d placed twice", v)
		}
		t.code[v] = code
		return nil
	}
	for i, v := range p.GPU {
		if err := set(v, int32(i), "GPU"); err != nil {
			return nil, err
		}
	}
	for i, v := range p.CPU {
		if err := set(v, -int32(i)-2, "CPU"); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Lookup returns v's tier and its row in that tier.
func (t *Tiers) Lookup(v int64) (Tier, int) {
	c := t.code[v]
	switch {
	case c >= 0:
		return GPU, int(c)
	case c == -1:
		return None, -1
	}
	return CPU, int(-c - 2)
}

// Rows returns the number of rows of the GPU and CPU tiers.
func (t *Tiers) Rows() (gpu, cpu int) { return t.gpu, t.cpu }

// loadTier reads the rows of nodes (in tier order) into memory from mem.
func (h *helios) loadTier(ctx context.Context, mem *kit.OffHeap, nodes []int64) ([]float32, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	rows, err := mem.Float32s(len(nodes) * h.dim)
	if err != nil {
		return nil, fmt.Errorf("helios: cache tier: %w", err)
	}
	// read in file order, place in tier order
	order := make([]int32, len(nodes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch {
		case nodes[a] < nodes[b]:
			return -1
		case nodes[a] > nodes[b]:
			return 1
		}
		return 0
	})
	r, err := h.feats.NewReader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	const chunk = 4096
	ids := make([]int64, 0, chunk)
	buf := make([]float32, chunk*h.dim)
	for lo := 0; lo < len(order); lo += chunk {
		hi := min(lo+chunk, len(order))
		ids = ids[:0]
		for _, i := range order[lo:hi] {
			ids = append(ids, nodes[i])
		}
		if err := r.ReadRows(ctx, ids, osutil.Bytes(buf[:len(ids)*h.dim])); err != nil {
			return nil, fmt.Errorf("helios: fill the cache: %w", err)
		}
		for k, i := range order[lo:hi] {
			copy(rows[int(i)*h.dim:(int(i)+1)*h.dim], buf[k*h.dim:(k+1)*h.dim])
		}
	}
	return rows, nil
}
