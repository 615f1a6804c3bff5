package sample

import (
	"errors"
	"fmt"
	"slices"

	"outcore/engine/graph"
	"outcore/engine/metrics"
)

// ErrDuplicateSeed reports a batch whose seed list names a node twice.
var ErrDuplicateSeed = errors.New("duplicate seed node")

// All is the fanout that takes every in-neighbour.
const All = -1

// Sampler draws uniform neighbour samples without replacement. It owns
// scratch memory reused across batches and must not be used by two goroutines
// at once; Clone makes another for a parallel worker.
type Sampler struct {
	topo    Topology
	fanouts []int
	seed    int64
	direct  []int64              // the indices array when the source is InMemory
	account *metrics.ReadAccount // where direct reads' page faults go (Metered)
	kind    string

	ids    idMap
	r      rng
	pos    []int64  // positions chosen in the current hop
	vals   []int64  // their neighbour ids
	cnt    []int32  // per-dst neighbour counts of the current hop
	picked []uint64 // Floyd's chosen offsets for one node
	big    hashMap  // membership set for Floyd with large fanouts
}

// HopScratchBytes is what a Sampler keeps to sample a hop of up to entries
// index entries: the chosen positions and their values (8 B each per
// entry; the slices keep their largest size) and a count per destination
// (at most one per entry).
func HopScratchBytes(entries int) int64 { return 20 * int64(entries) }

// New returns a sampler over topo with one fanout per hop (hop order:
// fanouts[0] applies to the seeds; -1 = all neighbours) whose random choices
// derive from seed.
func New(topo Topology, fanouts []int, seed int64) (*Sampler, error) {
	if err := topo.Check(); err != nil {
		return nil, err
	}
	if len(fanouts) == 0 {
		return nil, errors.New("sampler: no fanouts (need one per layer)")
	}
	for i, f := range fanouts {
		if f == 0 || f < All {
			return nil, fmt.Errorf("sampler: fanout[%d] = %d, want a positive count or -1 (all)", i, f)
		}
	}
	s := &Sampler{topo: topo, fanouts: slices.Clone(fanouts), seed: seed}
	if m, ok := topo.Indices.(InMemory); ok {
		s.direct = m.All()
		if mt, ok := topo.Indices.(Metered); ok {
			s.account, s.kind = mt.ReadAccount()
		}
	}
	s.ids = newIDMap(topo.NumNodes())
	return s, nil
}

// Clone returns a sampler with the same topology, fanouts and seed and its
// own scratch memory: one per parallel worker.
func (s *Sampler) Clone() *Sampler {
	c := &Sampler{topo: s.topo, fanouts: s.fanouts, seed: s.seed, direct: s.direct, account: s.account, kind: s.kind}
	c.ids = newIDMap(s.topo.NumNodes())
	return c
}

// Fanouts returns the per-hop fanouts (do not modify).
func (s *Sampler) Fanouts() []int { return s.fanouts }

// Topology returns the graph the sampler reads.
func (s *Sampler) Topology() Topology { return s.topo }

// Sample draws the mini-batch with index batch of epoch epoch for the given
// seed (target) nodes into a new MiniBatch.
func (s *Sampler) Sample(epoch, batch int, seeds []int64) (*graph.MiniBatch, error) {
	mb := &graph.MiniBatch{}
	return mb, s.SampleInto(mb, epoch, batch, seeds)
}

// SampleInto is Sample writing into mb, reusing the capacity of its slices
// (InputNodes, Blocks and their arrays). mb must not be in use elsewhere.
// The result depends only on the sampler's seed and topology, epoch, batch
// and seeds.
func (s *Sampler) SampleInto(mb *graph.MiniBatch, epoch, batch int, seeds []int64) error {
	return s.SampleHops(mb, epoch, batch, seeds, nil)
}

// HopFunc receives the input nodes a mini-batch gains at each hop, while
// it is being sampled: hop 0 is the seeds, hop h (1..L) the nodes first
// reached by the h-th hop. nodes are mb.InputNodes[first:first+len(nodes)]
// and stay valid only during the call (later hops may move the list).
// An error stops the sampling.
type HopFunc func(hop, first int, nodes []int64) error

// SampleHops is SampleInto calling onHop (when not nil) as soon as each
// hop's new input nodes are known, before the next hop is sampled (Helios
// §3.3: a hop's feature reads are submitted while the next hop is
// sampled). The mini-batch is the one SampleInto draws.
func (s *Sampler) SampleHops(mb *graph.MiniBatch, epoch, batch int, seeds []int64, onHop HopFunc) error {
	if s.account != nil {
		// Page faults on a memory-mapped indices array happen on this
		// thread and nothing else here reads a file: its device reads in
		// the batch are the topology's (DESIGN §5).
		m := metrics.StartThreadMeter()
		defer func() {
			read, _, _ := m.StopMapped()
			s.account.Add(s.kind, read.Bytes, 0)
			s.account.AddFaults(read)
		}()
	}
	n := s.topo.NumNodes()
	s.r.seed(BatchSeed(s.seed, StreamSample, epoch, batch))
	s.ids.reset()
	nodes := mb.InputNodes[:0]
	for _, v := range seeds {
		if v < 0 || v >= n {
			return fmt.Errorf("sample batch %d: seed node %d out of range [0,%d)", batch, v, n)
		}
		if _, added := s.ids.getOrAdd(v, int32(len(nodes))); !added {
			return fmt.Errorf("sample batch %d: %w %d", batch, ErrDuplicateSeed, v)
		}
		nodes = append(nodes, v)
	}
	if onHop != nil {
		if err := onHop(0, 0, nodes); err != nil {
			return err
		}
	}
	L := len(s.fanouts)
	if cap(mb.Blocks) >= L {
		mb.Blocks = mb.Blocks[:L]
	} else {
		mb.Blocks = make([]graph.Block, L)
	}
	for h := 0; h < L; h++ {
		b := &mb.Blocks[L-1-h]
		first := len(nodes)
		var err error
		if nodes, err = s.hop(b, nodes, s.fanouts[h]); err != nil {
			return fmt.Errorf("sample batch %d hop %d: %w", batch, h, err)
		}
		if onHop != nil {
			if err := onHop(h+1, first, nodes[first:]); err != nil {
				return err
			}
		}
	}
	// In-degrees in the full graph. Every block's sources and destinations
	// are prefixes of the input nodes, so all blocks share one array.
	deg := mb.Blocks[0].SrcDeg
	if cap(deg) < len(nodes) {
		deg = make([]int32, len(nodes))
	}
	deg = deg[:len(nodes)]
	for i, v := range nodes {
		deg[i] = int32(s.topo.Indptr[v+1] - s.topo.Indptr[v])
	}
	for i := range mb.Blocks {
		b := &mb.Blocks[i]
		b.SrcDeg = deg[:b.NumSrc]
		b.DstDeg = deg[:b.NumDst]
	}
	mb.Epoch, mb.Index = epoch, batch
	mb.Seeds = seeds
	mb.InputNodes = nodes
	return nil
}

// hop samples the in-neighbours of every node in nodes (the block's
// destinations) into b and returns nodes extended by the newly reached ones.
func (s *Sampler) hop(b *graph.Block, nodes []int64, fanout int) ([]int64, error) {
	nd := len(nodes)
	ip := s.topo.Indptr
	s.pos = s.pos[:0]
	s.cnt = slices.Grow(s.cnt[:0], nd)[:nd]
	for i, v := range nodes {
		lo, hi := ip[v], ip[v+1]
		deg := hi - lo
		if fanout == All || deg <= int64(fanout) {
			for p := lo; p < hi; p++ {
				s.pos = append(s.pos, p)
			}
			s.cnt[i] = int32(deg)
			continue
		}
		s.choose(uint64(deg), fanout)
		for _, off := range s.picked {
			s.pos = append(s.pos, lo+int64(off))
		}
		s.cnt[i] = int32(fanout)
	}
	vals := s.direct
	if vals == nil {
		s.vals = slices.Grow(s.vals[:0], len(s.pos))[:len(s.pos)]
		if err := s.topo.Indices.Gather(s.pos, s.vals); err != nil {
			return nodes, fmt.Errorf("read neighbour lists: %w", err)
		}
	}
	b.NumDst = nd
	b.Indptr = slices.Grow(b.Indptr[:0], nd+1)[:nd+1]
	b.Indices = slices.Grow(b.Indices[:0], len(s.pos))[:len(s.pos)]
	n := s.topo.NumNodes()
	b.Indptr[0] = 0
	k := 0
	for i := 0; i < nd; i++ {
		end := k + int(s.cnt[i])
		for ; k < end; k++ {
			var u int64
			if vals != nil {
				u = vals[s.pos[k]]
			} else {
				u = s.vals[k]
			}
			if u < 0 || u >= n {
				return nodes, fmt.Errorf("neighbour id %d of node %d out of range [0,%d)", u, nodes[i], n)
			}
			id, added := s.ids.getOrAdd(u, int32(len(nodes)))
			if added {
				nodes = append(nodes, u)
			}
			b.Indices[k] = id
		}
		b.Indptr[i+1] = int32(end)
	}
	b.NumSrc = len(nodes)
	return nodes, nil
}

// choose sets s.picked to k distinct offsets drawn uniformly from [0, d),
// ascending (Floyd's algorithm: exactly k draws, every k-subset equally
// likely). Requires 0 < k < d.
func (s *Sampler) choose(d uint64, k int) {
	s.picked = s.picked[:0]
	if k <= 64 {
		// Keep picked sorted while drawing: one linear pass finds both
		// membership and the insertion point. j exceeds every earlier pick,
		// so on a collision it goes at the end.
		for j := d - uint64(k); j < d; j++ {
			t := s.r.below(j + 1)
			p := s.picked
			i := len(p)
			for i > 0 && p[i-1] > t {
				i--
			}
			if i > 0 && p[i-1] == t {
				s.picked = append(p, j)
				continue
			}
			p = append(p, 0)
			copy(p[i+1:], p[i:])
			p[i] = t
			s.picked = p
		}
		return
	}
	if s.big.keys == nil {
		s.big = newHashMap(4 * k)
	}
	s.big.reset()
	for j := d - uint64(k); j < d; j++ {
		t := s.r.below(j + 1)
		if _, added := s.big.getOrAdd(int64(t), 0); !added {
			t = j
			s.big.getOrAdd(int64(t), 0)
		}
		s.picked = append(s.picked, t)
	}
	slices.Sort(s.picked)
}
