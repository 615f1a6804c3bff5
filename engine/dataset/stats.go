package dataset

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"

	"outcore/internal/osutil"
)

// StatsOptions sets what Stats samples. Zero values pick the defaults.
type StatsOptions struct {
	// ClusteringSamples is the number of nodes, drawn uniformly without
	// replacement, whose local clustering coefficient is averaged
	// (default 2000; every node when the graph has no more).
	ClusteringSamples int
	// MaxNeighbourhood caps the neighbourhood of a sampled node: a larger
	// one is replaced by a uniform subset of this size, whose share of
	// connected pairs estimates the whole one's (default 2000).
	MaxNeighbourhood int
	// BatchSize, Fanouts and Batches describe the mini-batches whose
	// touched nodes are counted (defaults 1000; 10,10,10; 8): seeds drawn
	// uniformly from the train split (every node when it is empty), each
	// hop sampling up to fanout distinct in-neighbours of every node
	// reached so far, as engine/sample does (a negative fanout takes all).
	BatchSize int
	Fanouts   []int
	Batches   int
	// Seed makes the samples deterministic (default 1).
	Seed uint64
}

func (o StatsOptions) withDefaults() StatsOptions {
	if o.ClusteringSamples <= 0 {
		o.ClusteringSamples = 2000
	}
	if o.MaxNeighbourhood <= 1 {
		o.MaxNeighbourhood = 2000
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if len(o.Fanouts) == 0 {
		o.Fanouts = []int{10, 10, 10}
	}
	if o.Batches <= 0 {
		o.Batches = 8
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// DegreeStats summarises a degree distribution (exact, over every node).
type DegreeStats struct {
	Min  int64   `json:"min"`
	P25  int64   `json:"p25"`
	P50  int64   `json:"p50"`
	P75  int64   `json:"p75"`
	P90  int64   `json:"p90"`
	P99  int64   `json:"p99"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
	// Top1Share is the share of all edges held by the 1% of nodes (at
	// least one) of highest degree.
	Top1Share float64 `json:"top1_share"`
}

// CommunityStats describes the label classes (the generator's planted
// communities) by their labeled node counts.
type CommunityStats struct {
	// Count is the number of classes with at least one labeled node.
	Count   int   `json:"count"`
	Labeled int64 `json:"labeled"`
	// Largest, Median and Smallest are sizes of the non-empty classes.
	Largest  int64 `json:"largest"`
	Median   int64 `json:"median"`
	Smallest int64 `json:"smallest"`
	// LargestShare is Largest/Labeled; Top10Share the share of labeled
	// nodes in the largest tenth of the classes (at least one class).
	LargestShare float64 `json:"largest_share"`
	Top10Share   float64 `json:"top10_share"`
	// Sizes lists every non-empty class's size, largest first.
	Sizes []int64 `json:"sizes"`
}

// BatchStats is the share of the graph one mini-batch touches: its seeds
// and every node sampled at any hop, i.e. the feature rows it gathers.
type BatchStats struct {
	BatchSize int   `json:"batch_size"`
	Fanouts   []int `json:"fanouts"`
	Batches   int   `json:"batches"`
	// SeedsFrom is "train" or "all" (when the train split is empty).
	SeedsFrom string `json:"seeds_from"`
	// MeanNodes is the mean number of distinct nodes a batch touches;
	// MeanShare, MinShare and MaxShare are that over Nodes.
	MeanNodes float64 `json:"mean_nodes"`
	MeanShare float64 `json:"mean_share"`
	MinShare  float64 `json:"min_share"`
	MaxShare  float64 `json:"max_share"`
}

// Stats is what ComputeStats measured on a dataset.
type Stats struct {
	Name       string `json:"name"`
	Nodes      int64  `json:"nodes"`
	Edges      int64  `json:"edges"`
	Undirected bool   `json:"undirected"`
	// InDegree counts each node's stored in-neighbours; OutDegree the
	// lists each node appears in.
	InDegree  DegreeStats `json:"in_degree"`
	OutDegree DegreeStats `json:"out_degree"`
	// BelowFanout is the share of nodes with fewer in-neighbours than the
	// first hop's fanout.
	BelowFanout float64 `json:"below_fanout"`
	// EdgeHomophily is the share of edges with both endpoints labeled
	// whose endpoints share the label; nil when there is no such edge.
	EdgeHomophily *float64 `json:"edge_homophily,omitempty"`
	// Clustering is the mean local clustering coefficient of the
	// undirected graph (an edge either way joins two nodes; nodes with
	// fewer than two neighbours count as 0, as networkx and SNAP do), over
	// ClusteringNodes sampled nodes; ClusteringExact when every node was.
	Clustering      float64 `json:"clustering"`
	ClusteringNodes int     `json:"clustering_nodes"`
	ClusteringExact bool    `json:"clustering_exact"`
	// IDDistanceP50 is the median over edges of |u−v|/Nodes, to 1/1024:
	// about 0.29 when ids are scattered (uniform random pairs), small when
	// neighbours have nearby ids (ids grouped by community or crawl).
	IDDistanceP50 float64        `json:"id_distance_p50"`
	Communities   CommunityStats `json:"communities"`
	Batch         BatchStats     `json:"batch"`
}

// ComputeStats measures the dataset in dir: degree percentiles, edge
// homophily, sampled clustering, community sizes, id locality and the
// share of nodes a mini-batch touches. It reads meta.json and indptr
// (OpenQuick), labels, the train split, one pass over indices.bin, and
// the in-neighbour lists of the sampled nodes by pread. Memory is
// O(Nodes) — indptr (8 B/node), out-degrees and labels (4 B/node each),
// a touched-node bitmap — plus the sampled neighbourhoods; never
// O(Edges) or the features.
func ComputeStats(dir string, opt StatsOptions) (*Stats, error) {
	opt = opt.withDefaults()
	d, err := OpenQuick(dir)
	if err != nil {
		return nil, err
	}
	m := d.Meta
	st := &Stats{Name: m.Name, Nodes: m.Nodes, Edges: m.Edges, Undirected: m.Undirected}
	labels, err := d.Labels()
	if err != nil {
		return nil, err
	}
	n := m.Nodes
	r := newStream(opt.Seed, 0, streamGlobal)

	// Clustering sample, chosen before the pass so that the pass can
	// collect the sampled nodes' out-neighbours.
	var sample []int64
	if int64(opt.ClusteringSamples) >= n {
		sample = make([]int64, n)
		for i := range sample {
			sample[i] = int64(i)
		}
		st.ClusteringExact = true
	} else {
		var seen uintSet
		seen.reset(int64(opt.ClusteringSamples))
		for len(sample) < opt.ClusteringSamples {
			v := int64(r.intn(uint64(n)))
			if seen.insert(uint64(v)) {
				sample = append(sample, v)
			}
		}
	}
	slot := make(map[int64]int, len(sample))
	for i, v := range sample {
		slot[v] = i
	}
	outLists := make([][]int64, len(sample))

	// One pass over indices: out-degrees, homophily, id distances and
	// the sampled nodes' out-neighbours.
	out := make([]int32, n)
	var same, labeledEdges int64
	var dist [1025]int64
	v := int64(0)
	err = scanInt64(d.Path(IndicesFile), func(off int64, vals []int64) error {
		for i, u := range vals {
			e := off + int64(i)
			for e >= d.Indptr[v+1] {
				v++
			}
			if uint64(u) >= uint64(n) {
				return d.corrupt(IndicesFile, "index out of range: indices[%d] = %d (in-neighbour of node %d), nodes = %d", e, u, v, n)
			}
			out[u]++
			if labels[u] >= 0 && labels[v] >= 0 {
				labeledEdges++
				if labels[u] == labels[v] {
					same++
				}
			}
			gap := u - v
			if gap < 0 {
				gap = -gap
			}
			dist[int(float64(gap)/float64(n)*1024)]++
			if k, ok := slot[u]; ok {
				outLists[k] = append(outLists[k], v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if labeledEdges > 0 {
		h := float64(same) / float64(labeledEdges)
		st.EdgeHomophily = &h
	}
	st.IDDistanceP50 = histMedian(dist[:], m.Edges) / 1024

	st.InDegree = degreeStats(n, m.Edges, func(x int64) int64 { return d.Indptr[x+1] - d.Indptr[x] })
	st.OutDegree = degreeStats(n, m.Edges, func(x int64) int64 { return int64(out[x]) })
	out = nil
	var below int64
	for x := int64(0); x < n; x++ {
		if d.Indptr[x+1]-d.Indptr[x] < int64(opt.Fanouts[0]) {
			below++
		}
	}
	if n > 0 {
		st.BelowFanout = float64(below) / float64(n)
	}
	st.Communities = communityStats(labels, m.Classes)
	labels = nil

	f, err := os.Open(d.Path(IndicesFile))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", d.Path(IndicesFile), err)
	}
	defer f.Close()
	nr := &neighbourReader{d: d, f: f}

	// Clustering.
	var sum float64
	for i, x := range sample {
		in, err := nr.read(x)
		if err != nil {
			return nil, err
		}
		c, err := localClustering(nr, x, in, outLists[i], opt.MaxNeighbourhood, &r)
		if err != nil {
			return nil, err
		}
		sum += c
		outLists[i] = nil
	}
	st.ClusteringNodes = len(sample)
	if len(sample) > 0 {
		st.Clustering = sum / float64(len(sample))
	}

	// Mini-batches.
	b, err := batchStats(d, nr, opt, &r)
	if err != nil {
		return nil, err
	}
	st.Batch = *b
	return st, nil
}

// neighbourReader reads in-neighbour lists from indices.bin by pread into
// a reused buffer (valid until the next read).
type neighbourReader struct {
	d   *Dataset
	f   *os.File
	buf []int64
}

func (nr *neighbourReader) read(v int64) ([]int64, error) {
	lo, hi := nr.d.Indptr[v], nr.d.Indptr[v+1]
	k := int(hi - lo)
	if cap(nr.buf) < k {
		nr.buf = make([]int64, k)
	}
	nr.buf = nr.buf[:k]
	if k == 0 {
		return nr.buf, nil
	}
	if _, err := nr.f.ReadAt(osutil.Bytes(nr.buf), lo*8); err != nil {
		return nil, fmt.Errorf("read %s at %d: %w", nr.d.Path(IndicesFile), lo*8, err)
	}
	return nr.buf, nil
}

// localClustering returns the clustering coefficient of x in the
// undirected graph: the share of pairs of its neighbours (in ∪ out, less x)
// that are joined by an edge either way. A neighbourhood larger than
// maxNb is replaced by a uniform subset of maxNb nodes.
func localClustering(nr *neighbourReader, x int64, in, outNb []int64, maxNb int, r *wyrand) (float64, error) {
	nb := make([]int64, 0, len(in)+len(outNb))
	nb = append(nb, in...)
	nb = append(nb, outNb...)
	slices.Sort(nb)
	nb = slices.Compact(nb)
	if i, ok := slices.BinarySearch(nb, x); ok {
		nb = slices.Delete(nb, i, i+1)
	}
	if len(nb) > maxNb { // partial Fisher–Yates: a uniform subset
		for i := 0; i < maxNb; i++ {
			j := i + int(r.intn(uint64(len(nb)-i)))
			nb[i], nb[j] = nb[j], nb[i]
		}
		nb = nb[:maxNb]
		slices.Sort(nb)
	}
	k := len(nb)
	if k < 2 {
		return 0, nil
	}
	// An undirected pair {y, z} is joined when y ∈ in(z) or z ∈ in(y):
	// reading in(z) for every z of the neighbourhood sees every such pair
	// at least once; pairs are counted once each.
	pairs := map[[2]int64]struct{}{}
	for _, z := range nb {
		lst, err := nr.read(z)
		if err != nil {
			return 0, err
		}
		for _, y := range lst {
			if y == z {
				continue
			}
			if _, ok := slices.BinarySearch(nb, y); ok {
				pairs[[2]int64{min(y, z), max(y, z)}] = struct{}{}
			}
		}
	}
	return float64(len(pairs)) / (float64(k) * float64(k-1) / 2), nil
}

// batchStats samples opt.Batches mini-batches and counts their nodes.
func batchStats(d *Dataset, nr *neighbourReader, opt StatsOptions, r *wyrand) (*BatchStats, error) {
	n := d.Meta.Nodes
	b := &BatchStats{BatchSize: opt.BatchSize, Fanouts: opt.Fanouts, Batches: opt.Batches, SeedsFrom: "train", MinShare: math.Inf(1)}
	pool, err := d.Split(SplitTrain)
	if err != nil {
		return nil, err
	}
	if len(pool) == 0 {
		b.SeedsFrom = "all"
	}
	poolSize := int64(len(pool))
	if poolSize == 0 {
		poolSize = n
	}
	size := int64(opt.BatchSize)
	if size > poolSize {
		size = poolSize
	}
	touched := make([]uint64, (n+63)/64)
	mark := func(v int64) bool {
		w, bit := v>>6, uint64(1)<<(v&63)
		if touched[w]&bit != 0 {
			return false
		}
		touched[w] |= bit
		return true
	}
	var nodes []int64
	var picked uintSet
	var total float64
	for range opt.Batches {
		nodes = nodes[:0]
		picked.reset(size)
		for int64(len(nodes)) < size {
			i := int64(r.intn(uint64(poolSize)))
			if !picked.insert(uint64(i)) {
				continue
			}
			v := i
			if len(pool) > 0 {
				v = pool[i]
			}
			if mark(v) {
				nodes = append(nodes, v)
			}
		}
		for _, fan := range opt.Fanouts {
			end := len(nodes)
			for _, v := range nodes[:end] {
				lst, err := nr.read(v)
				if err != nil {
					return nil, err
				}
				k := len(lst)
				if fan >= 0 && k > fan { // partial Fisher–Yates: fan distinct entries
					for i := 0; i < fan; i++ {
						j := i + int(r.intn(uint64(k-i)))
						lst[i], lst[j] = lst[j], lst[i]
					}
					k = fan
				}
				for _, u := range lst[:k] {
					if mark(u) {
						nodes = append(nodes, u)
					}
				}
			}
		}
		share := float64(len(nodes)) / float64(n)
		total += float64(len(nodes))
		b.MinShare = min(b.MinShare, share)
		b.MaxShare = max(b.MaxShare, share)
		for _, v := range nodes {
			touched[v>>6] = 0
		}
	}
	b.MeanNodes = total / float64(opt.Batches)
	b.MeanShare = b.MeanNodes / float64(n)
	return b, nil
}

// degreeStats summarises deg(0..n-1) exactly through a histogram (degrees
// below 2^16 counted, larger ones listed), so memory does not grow with n.
func degreeStats(n, edges int64, deg func(int64) int64) DegreeStats {
	var s DegreeStats
	if n == 0 {
		return s
	}
	const small = 1 << 16
	counts := make([]int64, small)
	var big []int64
	s.Min = math.MaxInt64
	for x := int64(0); x < n; x++ {
		k := deg(x)
		s.Min = min(s.Min, k)
		s.Max = max(s.Max, k)
		if k < small {
			counts[k]++
		} else {
			big = append(big, k)
		}
	}
	sort.Slice(big, func(i, j int) bool { return big[i] < big[j] })
	// at returns the degree of rank i (0-based, ascending).
	at := func(i int64) int64 {
		for k, c := range counts {
			if i < c {
				return int64(k)
			}
			i -= c
		}
		return big[i]
	}
	// Nearest-rank percentiles.
	pct := func(p float64) int64 { return at(min(n-1, max(0, int64(math.Ceil(p*float64(n)))-1))) }
	s.P25, s.P50, s.P75, s.P90, s.P99 = pct(0.25), pct(0.50), pct(0.75), pct(0.90), pct(0.99)
	s.Mean = float64(edges) / float64(n)
	top := max(1, (n+99)/100)
	var held int64
	left := top
	for i := len(big) - 1; i >= 0 && left > 0; i-- {
		held += big[i]
		left--
	}
	for k := small - 1; k >= 0 && left > 0; k-- {
		c := min(counts[k], left)
		held += c * int64(k)
		left -= c
	}
	if edges > 0 {
		s.Top1Share = float64(held) / float64(edges)
	}
	return s
}

// histMedian returns the bin (with linear interpolation inside it) where
// the cumulative count of hist reaches total/2.
func histMedian(hist []int64, total int64) float64 {
	if total == 0 {
		return 0
	}
	half := float64(total) / 2
	var cum float64
	for i, c := range hist {
		if c > 0 && cum+float64(c) >= half {
			return float64(i) + (half-cum)/float64(c)
		}
		cum += float64(c)
	}
	return float64(len(hist))
}

// communityStats counts labeled nodes per class.
func communityStats(labels []int32, classes int) CommunityStats {
	counts := make([]int64, max(classes, 1))
	var cs CommunityStats
	for _, l := range labels {
		if l < 0 {
			continue
		}
		if int(l) >= len(counts) {
			counts = append(counts, make([]int64, int(l)+1-len(counts))...)
		}
		counts[l]++
		cs.Labeled++
	}
	for _, c := range counts {
		if c > 0 {
			cs.Sizes = append(cs.Sizes, c)
		}
	}
	sort.Slice(cs.Sizes, func(i, j int) bool { return cs.Sizes[i] > cs.Sizes[j] })
	cs.Count = len(cs.Sizes)
	if cs.Count == 0 {
		return cs
	}
	cs.Largest, cs.Smallest = cs.Sizes[0], cs.Sizes[cs.Count-1]
	cs.Median = cs.Sizes[cs.Count/2]
	cs.LargestShare = float64(cs.Largest) / float64(cs.Labeled)
	var top int64
	for _, c := range cs.Sizes[:max(1, cs.Count/10)] {
		top += c
	}
	cs.Top10Share = float64(top) / float64(cs.Labeled)
	return cs
}
