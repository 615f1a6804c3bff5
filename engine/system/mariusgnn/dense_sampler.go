package mariusgnn

// DENSE multi-hop neighbour sampling over the in-memory subgraph, as
// MariusGNN does it (the artifact's LayeredNeighborSampler::getNeighbors,
// which returns a DENSEGraph; DiskGNN §1: "Sampling of mini-batches is done
// on the sub-graph from all memory-resident partitions"; GNNDrive §2:
// MariusGNN "samples nodes solely with buffered partitions"):
//
//   - each hop samples the in-neighbours of the delta nodes only, the nodes
//     first reached in the hop before (the seeds at hop 0): a node's
//     neighbour sample is drawn once per mini-batch and reused by every
//     layer that computes it, instead of being redrawn per layer;
//   - UNIFORM layers: a node with more in-neighbours than the hop's fanout
//     gets fanout draws WITH replacement (the artifact's rand_r % degree),
//     otherwise all its in-neighbours; fanout −1 takes all;
//   - only edges of the resident state exist: an in-neighbour in a
//     partition on disk is never seen. This biases the sample on purpose
//     (the paper's trade-off, DiskGNN Table 3: −2.4 points); DenseStats
//     counts the edges it hides so the records show it.
//
// The mini-batch is expressed as outcore's layer blocks (graph.Block,
// targets first): nodes are numbered seeds, then the delta of hop 1, of hop
// 2, ...; the block of hop h has the nodes sampled at hops ≤ h as
// destinations and those reached by hop h+1 as sources, and since every
// node's neighbour list is drawn once, all blocks are prefixes of one
// neighbour array.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"outcore/engine/graph"
	"outcore/engine/sample"
	"outcore/engine/train"
)

// DenseStats counts what one or more DENSE samples saw.
type DenseStats struct {
	Sampled int64 // nodes whose neighbours were sampled (deltas of all hops)
	// BufferEdges is the sum of the sampled nodes' in-degrees in the
	// in-memory subgraph; DroppedEdges the sum of their in-edges from
	// partitions on disk (full-graph in-degree minus in-buffer in-degree).
	BufferEdges  int64
	DroppedEdges int64
	Isolated     int64 // sampled nodes with in-neighbours in the graph but none in the buffer
}

// Add adds o to s.
func (s *DenseStats) Add(o DenseStats) {
	s.Sampled += o.Sampled
	s.BufferEdges += o.BufferEdges
	s.DroppedEdges += o.DroppedEdges
	s.Isolated += o.Isolated
}

// DenseSampler draws DENSE mini-batches. It keeps scratch memory and must
// not be used by two goroutines at once; Clone makes another.
type DenseSampler struct {
	fanouts []int
	seed    int64
	// FullDegree, when set, gives a slot-local node's in-degree in the full
	// graph (for DenseStats.DroppedEdges).
	FullDegree func(local int64) int64

	index []int32 // slot-local id -> position+1 in the batch's nodes, 0 = absent
}

// NewDenseSampler returns a sampler with one fanout per hop (hop order:
// fanouts[0] applies to the seeds; −1 = all) whose draws derive from seed.
func NewDenseSampler(fanouts []int, seed int64) (*DenseSampler, error) {
	if len(fanouts) == 0 {
		return nil, fmt.Errorf("dense sampler: no fanouts (need one per layer)")
	}
	for i, f := range fanouts {
		if f == 0 || f < -1 {
			return nil, fmt.Errorf("dense sampler: fanout[%d] = %d, want a positive count or -1 (all)", i, f)
		}
	}
	return &DenseSampler{fanouts: append([]int(nil), fanouts...), seed: seed}, nil
}

// Clone returns a sampler with the same fanouts, seed and FullDegree and
// its own scratch.
func (s *DenseSampler) Clone() *DenseSampler {
	return &DenseSampler{fanouts: s.fanouts, seed: s.seed, FullDegree: s.FullDegree}
}

// Sample draws the DENSE sample of seeds (slot-local ids, distinct) from g
// into mb (reusing its memory): mb.InputNodes are slot-local ids (seeds
// first), mb.Seeds is left to the caller. The draws depend only on the
// sampler's seed, epoch, batch and g. Block degrees (SrcDeg, DstDeg) are
// in-buffer in-degrees.
func (s *DenseSampler) Sample(g *Subgraph, epoch, batch int, seeds []int64, mb *graph.MiniBatch) (DenseStats, error) {
	var st DenseStats
	n := int64(g.Slots) * g.PartSize
	if int64(len(s.index)) < n {
		s.index = make([]int32, n)
	}
	L := len(s.fanouts)
	if cap(mb.Blocks) >= L {
		mb.Blocks = mb.Blocks[:L]
	} else {
		mb.Blocks = make([]graph.Block, L)
	}
	deep := &mb.Blocks[0] // its arrays are the longest: reuse them
	nodes := mb.InputNodes[:0]
	off := deep.Indptr[:0]
	nbrs := deep.Indices[:0]
	defer func() {
		for _, v := range nodes {
			s.index[v] = 0
		}
	}()
	for _, v := range seeds {
		if v < 0 || v >= n {
			return st, fmt.Errorf("dense sample batch %d: seed %d outside the buffer's %d local ids", batch, v, n)
		}
		if s.index[v] != 0 {
			return st, fmt.Errorf("dense sample batch %d: %w %d", batch, sample.ErrDuplicateSeed, v)
		}
		nodes = append(nodes, v)
		s.index[v] = int32(len(nodes))
	}
	r := rand.New(rand.NewPCG(sample.BatchSeed(s.seed, sample.StreamSample, epoch, batch), 0x44454e5345))
	hopEnd := make([]int, 0, L+1)
	hopEnd = append(hopEnd, len(nodes))
	off = append(off, 0)
	lo := 0
	for h := 0; h < L; h++ {
		hi := len(nodes)
		f := s.fanouts[h]
		for i := lo; i < hi; i++ {
			v := nodes[i]
			a, b := g.Indptr[v], g.Indptr[v+1]
			deg := b - a
			st.Sampled++
			st.BufferEdges += deg
			if s.FullDegree != nil {
				full := s.FullDegree(v)
				st.DroppedEdges += full - deg
				if deg == 0 && full > 0 {
					st.Isolated++
				}
			}
			if f == -1 || deg <= int64(f) {
				for p := a; p < b; p++ {
					nbrs, nodes = s.add(nbrs, nodes, int64(g.Indices[p]))
				}
			} else {
				for k := 0; k < f; k++ {
					nbrs, nodes = s.add(nbrs, nodes, int64(g.Indices[a+r.Int64N(deg)]))
				}
			}
			if len(nbrs) > 1<<31-1 {
				return st, fmt.Errorf("dense sample batch %d: more than 2^31 sampled edges", batch)
			}
			off = append(off, int32(len(nbrs)))
		}
		lo = hi
		hopEnd = append(hopEnd, len(nodes))
	}
	// In-buffer degrees of every node, shared by all blocks (prefixes).
	deg := deep.SrcDeg[:0]
	for _, v := range nodes {
		deg = append(deg, int32(g.Degree(v)))
	}
	for h := 0; h < L; h++ {
		b := &mb.Blocks[L-1-h]
		nd, ns := hopEnd[h], hopEnd[h+1]
		b.NumDst, b.NumSrc = nd, ns
		b.Indptr = off[:nd+1]
		b.Indices = nbrs[:off[nd]]
		b.SrcDeg = deg[:ns]
		b.DstDeg = deg[:nd]
	}
	mb.Epoch, mb.Index = epoch, batch
	mb.InputNodes = nodes
	return st, nil
}

// add appends u's position in nodes to nbrs, adding u to nodes when new.
func (s *DenseSampler) add(nbrs []int32, nodes []int64, u int64) ([]int32, []int64) {
	k := s.index[u]
	if k == 0 {
		nodes = append(nodes, u)
		k = int32(len(nodes))
		s.index[u] = k
	}
	return append(nbrs, k-1), nodes
}

// profileDense samples up to profile_batches DENSE mini-batches on the
// first buffer state of a buffer of c partitions with the most training
// nodes, reading its edge buckets but no feature rows, and returns the
// most input nodes and the largest mini-batch's bytes.
func (s *system) profileDense(ctx context.Context, env *train.Env, c int) (m batchMeasure, err error) {
	pb, err := NewPartitionBuffer(s.l, s.b, s.feats, s.edges, s.rowBytes, c, false)
	if err != nil {
		return m, fmt.Errorf("mariusgnn: profile: %w", err)
	}
	var sg Subgraph
	defer func() {
		err = errors.Join(err, sg.Free(), pb.Close())
	}()
	r := rand.New(rand.NewPCG(uint64(env.Config.Seed), 0x70726f66))
	plan, err := NewPlan(s.opt.ordering, s.trainNew, s.l.Part, s.l.TrainParts, s.l.P, c, r)
	if err != nil {
		return m, fmt.Errorf("mariusgnn: profile: %w", err)
	}
	k := 0
	for i := range plan.Train {
		if len(plan.Train[i]) > len(plan.Train[k]) {
			k = i
		}
	}
	if _, err := pb.LoadTopology(ctx, plan.States[k]); err != nil {
		return m, fmt.Errorf("mariusgnn: profile: %w", err)
	}
	if err := sg.Build(pb); err != nil {
		return m, err
	}
	ds, err := NewDenseSampler(env.Config.Fanout, env.Config.Seed)
	if err != nil {
		return m, err
	}
	seeds := plan.Train[k]
	for i, v := range seeds {
		seeds[i], _ = sg.Local(v)
	}
	batches := sample.Split(seeds, env.Config.Batch)
	for i := 0; i < min(s.opt.profile, len(batches)); i++ {
		var mb graph.MiniBatch
		if _, err := ds.Sample(&sg, 0, i, batches[i], &mb); err != nil {
			return m, fmt.Errorf("mariusgnn: profile: %w", err)
		}
		m.maxInputs = max(m.maxInputs, len(mb.InputNodes))
		m.bytes = max(m.bytes, mb.Bytes())
	}
	return m, nil
}
