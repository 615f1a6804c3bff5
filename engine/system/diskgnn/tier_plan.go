package diskgnn

// DiskGNN §4 "Four-level hierarchical feature store": during pre-processing
// DiskGNN goes over all graph samples to count how often each node's
// feature is accessed, then places the features by popularity:
//
//   - the GPU cache holds the most popular features;
//   - the CPU cache holds the next most popular ones;
//   - everything else lives on disk, either in a segment's disk cache (nodes
//     that several batches of the segment share, §5.1,
//     segmented_disk_cache.go) or in each batch's packed feature chunk.
//
// "Such a cache configuration is also optimal in that it minimizes the
// total number of node features fetched from the disk" (§3): with the
// accesses known, the static placement by count is what Belady would keep.
// planTiers is that placement; ties in count go to the lower node id so the
// plan is deterministic. The artifact keeps one address table over the
// cached nodes, GPU slots first (train_multi_thread.py init_cache); Slot is
// that table.

import (
	"fmt"
	"math"
)

// tierPlan is the placement of the memory tiers.
type tierPlan struct {
	// GPU are the node ids of the device cache, most accessed first; GPU[i]
	// is in slot i.
	GPU []int32
	// CPU are the node ids of the host cache, next most accessed first;
	// CPU[i] is in slot len(GPU)+i.
	CPU []int32
	// Slot maps every node to its cache slot, or -1 when it is on disk.
	Slot []int32
	// gpuN and cpuN are the tiers' rows, kept when release drops the ids.
	gpuN, cpuN int
}

// GPURows and CPURows report the rows of the device and host caches.
func (p *tierPlan) GPURows() int { return p.gpuN }
func (p *tierPlan) CPURows() int { return p.cpuN }

// Cached reports the number of cached nodes (both memory tiers).
func (p *tierPlan) Cached() int { return p.gpuN + p.cpuN }

// InGPU reports whether slot s is a device-cache slot.
func (p *tierPlan) InGPU(s int32) bool { return s >= 0 && int(s) < p.gpuN }

// release drops the node ids once the caches are filled and the chunk
// headers hold the addresses: the epochs need only the tiers' sizes. The
// ids are views of the popularity order of every accessed node (4 bytes
// each), which the plan does not hold through the epochs.
func (p *tierPlan) release() { p.GPU, p.CPU, p.Slot = nil, nil, nil }

// popularityOrder returns the nodes with at least one access, most
// accessed first, ties by ascending id (a stable counting sort over the
// counts, O(nodes + max count)).
func popularityOrder(counts []int32) []int32 {
	maxc := int32(0)
	for _, c := range counts {
		maxc = max(maxc, c)
	}
	if maxc == 0 {
		return nil
	}
	// start[c] = first output index of count c, counts descending
	start := make([]int64, int64(maxc)+2)
	for _, c := range counts {
		if c > 0 {
			start[maxc-c+1]++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	out := make([]int32, start[len(start)-1])
	for v, c := range counts {
		if c > 0 {
			k := maxc - c
			out[start[k]] = int32(v)
			start[k]++
		}
	}
	return out
}

// planTiers places the gpuRows most accessed nodes in the device cache and
// the next cpuRows in the host cache. Nodes never accessed are never
// cached, so a tier may come out smaller than asked. counts has one entry
// per node.
func planTiers(counts []int32, gpuRows, cpuRows int64) (tierPlan, error) {
	if gpuRows < 0 || cpuRows < 0 {
		return tierPlan{}, fmt.Errorf("diskgnn: negative cache rows (gpu %d, cpu %d)", gpuRows, cpuRows)
	}
	if int64(len(counts)) > math.MaxInt32 {
		return tierPlan{}, fmt.Errorf("diskgnn: %d nodes exceed the int32 address tables", len(counts))
	}
	order := popularityOrder(counts)
	g := min(gpuRows, int64(len(order)))
	c := min(cpuRows, int64(len(order))-g)
	p := tierPlan{GPU: order[:g:g], CPU: order[g : g+c : g+c], Slot: make([]int32, len(counts)), gpuN: int(g), cpuN: int(c)}
	for i := range p.Slot {
		p.Slot[i] = -1
	}
	for i, v := range order[:g+c] {
		p.Slot[v] = int32(i)
	}
	return p, nil
}

// rankProfile summarises every sample's inputs by popularity rank, so that
// the rows a sample must read from disk (its partial input, §5.3 ①) can be
// bounded for any cache size without reading the samples again: the CPU
// cache is sized by "reserving the memory to assemble the graph samples
// and node features of several mini-batches" (§4), and that memory depends
// on how many of each batch's features the caches miss.
type rankProfile struct {
	rank  []int32 // per node: popularity rank, or MaxInt32 if never accessed
	width int64   // ranks per bucket
	hist  [][]int32
}

// newRankProfile prepares a profile of samples samples over the popularity
// order (popularityOrder) of nodes nodes, with buckets rank buckets.
func newRankProfile(order []int32, nodes int64, samples, buckets int) *rankProfile {
	p := &rankProfile{rank: make([]int32, nodes), hist: make([][]int32, samples)}
	for i := range p.rank {
		p.rank[i] = math.MaxInt32
	}
	for r, v := range order {
		p.rank[v] = int32(r)
	}
	buckets = max(1, buckets)
	p.width = max(1, (int64(len(order))+int64(buckets)-1)/int64(buckets))
	for i := range p.hist {
		p.hist[i] = make([]int32, buckets+1) // last: never accessed (cannot happen for an input)
	}
	return p
}

// Add records sample g's inputs.
func (p *rankProfile) Add(g int, inputs []int64) {
	h := p.hist[g]
	last := int64(len(h) - 1)
	for _, v := range inputs {
		h[min(int64(p.rank[v])/p.width, last)]++
	}
}

// MaxCold bounds, over all samples, the inputs not among the cached most
// popular nodes (rows from disk), rounding the cache down to a bucket.
func (p *rankProfile) MaxCold(cached int64) int64 {
	from := cached / p.width
	var most int64
	for _, h := range p.hist {
		var c int64
		for b := from; b < int64(len(h)); b++ {
			c += int64(h[b])
		}
		most = max(most, c)
	}
	return most
}

// Release drops the rank table (the histograms stay).
func (p *rankProfile) Release() { p.rank = nil }
