package mariusgnn

// Node partitions and edge buckets, MariusGNN's on-disk layout (GNNDrive §2:
// "MariusGNN splits a graph into partitions"; DiskGNN §1: "MariusGNN stores
// the graph in a set of partitions on disk and swaps in a few of them to CPU
// memory during each training epoch"; DiskGNN §7.1: it "organizes the graph
// into edge chunks and node partitions"). As the artifact's preprocessor
// does, nodes are remapped at random into p partitions of ceil(N/p)
// consecutive partitioned ids, with the training nodes first when the
// ordering is SEQUENTIAL (its sequential_train_nodes), so that they fill the
// leading partitions; the artifact's partition of a node is
// id / ceil(N/p) (ordering.cpp). Written at prepare time (the summary's
// prepare stages):
//
//   - a partitioned copy of features.bin: partition q's rows contiguous at
//     [q·ps, min((q+1)·ps, N)) · row bytes, so loading a partition is one
//     large sequential read;
//   - the p² edge buckets: bucket (i, j) holds every edge u→v (u an
//     in-neighbour of v) with u in partition i and v in partition j, as
//     (partitioned u, partitioned v) int32 pairs, the buckets in
//     src-major order (i·p + j) and each sorted by v.
//
// Inside a partition, nodes keep their original relative order, so both
// files are written by one sequential scan of the originals into p (or p²)
// append streams (bounded buffers, page cache written back and dropped as
// it goes: the copy must fit the run's memory budget).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"outcore/internal/osutil"
)

// Layout assigns every node to a partition and a partitioned id.
type Layout struct {
	Nodes    int64
	P        int   // partitions (ceil(Nodes/PartSize): every partition non-empty)
	PartSize int64 // ps = ceil(Nodes/p) nodes per partition, the last may be shorter
	// TrainParts is the number of leading partitions holding training nodes
	// (the artifact: max training partition + 1).
	TrainParts int
	newOf      []int32 // original id -> partitioned id
	oldOf      []int32 // partitioned id -> original id
}

// MaxNodes is the most nodes a layout can hold (ids are stored as int32,
// as the artifact does for graphs of this size).
const MaxNodes = math.MaxInt32

// NewLayout partitions nodes into p partitions. trainFirst gives the
// training nodes the first positions (SEQUENTIAL); otherwise every node is
// placed at random. seed fixes the random placement.
func NewLayout(nodes int64, train []int64, p int, trainFirst bool, seed uint64) (*Layout, error) {
	if nodes < 1 || nodes > MaxNodes {
		return nil, fmt.Errorf("partitions: %d nodes, want 1..%d", nodes, MaxNodes)
	}
	if p < 1 || int64(p) > nodes {
		return nil, fmt.Errorf("partitions: %d partitions for %d nodes, want 1..%d", p, nodes, nodes)
	}
	ps := (nodes + int64(p) - 1) / int64(p)
	l := &Layout{Nodes: nodes, PartSize: ps, P: int((nodes + ps - 1) / ps)}
	r := rand.New(rand.NewPCG(seed, 0x6d61726975730001))
	// Random positions: pos holds original ids in position order.
	l.newOf = make([]int32, nodes)
	pos := make([]int32, 0, nodes)
	if trainFirst {
		for _, v := range train {
			if v < 0 || v >= nodes {
				return nil, fmt.Errorf("partitions: training node %d out of range [0,%d)", v, nodes)
			}
			if l.newOf[v] == -1 {
				return nil, fmt.Errorf("partitions: training node %d listed twice", v)
			}
			l.newOf[v] = -1
			pos = append(pos, int32(v))
		}
		r.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
		nt := len(pos)
		for v := int64(0); v < nodes; v++ {
			if l.newOf[v] != -1 {
				pos = append(pos, int32(v))
			}
		}
		rest := pos[nt:]
		r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	} else {
		for v := int64(0); v < nodes; v++ {
			pos = append(pos, int32(v))
		}
		r.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
	}
	// Partition of every original id, then partitioned ids in original
	// order inside each partition.
	for k, v := range pos {
		l.newOf[v] = int32(int64(k) / ps)
	}
	pos = nil
	next := make([]int64, l.P)
	for q := range next {
		next[q] = int64(q) * ps
	}
	l.oldOf = make([]int32, nodes)
	for v := int64(0); v < nodes; v++ {
		q := l.newOf[v]
		id := next[q]
		next[q]++
		l.newOf[v] = int32(id)
		l.oldOf[id] = int32(v)
	}
	for _, v := range train {
		if v < 0 || v >= nodes {
			return nil, fmt.Errorf("partitions: training node %d out of range [0,%d)", v, nodes)
		}
		l.TrainParts = max(l.TrainParts, l.Part(int64(l.newOf[v]))+1)
	}
	return l, nil
}

// Part is the partition of partitioned id v.
func (l *Layout) Part(v int64) int { return int(v / l.PartSize) }

// Range is partition q's partitioned ids [lo, hi).
func (l *Layout) Range(q int) (lo, hi int64) {
	lo = int64(q) * l.PartSize
	return lo, min(lo+l.PartSize, l.Nodes)
}

// New is the partitioned id of original id v.
func (l *Layout) New(v int64) int64 { return int64(l.newOf[v]) }

// Old is the original id of partitioned id v.
func (l *Layout) Old(v int64) int64 { return int64(l.oldOf[v]) }

// Bytes is the memory the layout's maps hold.
func (l *Layout) Bytes() int64 { return layoutMapBytes(l.Nodes) }

// layoutMapBytes is the memory of a layout's maps of nodes nodes (two
// int32 per node).
func layoutMapBytes(nodes int64) int64 { return 8 * nodes }

// Buckets describes the edge-bucket file: bucket (i, j) (source partition
// i, destination partition j) holds edges [Off[k], Off[k+1]) of the
// concatenation, k = i·P+j, stored from byte FileOff[k] of the file. Every
// bucket starts on a BucketAlign boundary, so that the writer's flushes
// never share a page with another bucket's.
type Buckets struct {
	P       int
	Off     []int64 // P²+1 edge offsets
	FileOff []int64 // P²+1 byte offsets (the last is the file size)
}

// BucketAlign is the alignment of every bucket in the file.
const BucketAlign = 4096

// EdgeBytes is the size of one stored edge (two int32 partitioned ids).
const EdgeBytes = 8

// Index is the position of bucket (i, j) in the file.
func (b Buckets) Index(i, j int) int { return i*b.P + j }

// Count is the number of edges in bucket (i, j).
func (b Buckets) Count(i, j int) int64 {
	k := b.Index(i, j)
	return b.Off[k+1] - b.Off[k]
}

// Edges is the number of edges of all buckets.
func (b Buckets) Edges() int64 { return b.Off[len(b.Off)-1] }

// StateEdges is the number of edges whose both endpoints' partitions are in
// state (the in-memory subgraph of that buffer state).
func (b Buckets) StateEdges(state []int) int64 {
	var n int64
	for _, i := range state {
		for _, j := range state {
			n += b.Count(i, j)
		}
	}
	return n
}

// WritePartitionedFeatures copies the feature rows of src (original order,
// rowBytes each) into dst in partitioned order, with one sequential scan of
// src and at most bufBytes of write buffers.
func WritePartitionedFeatures(ctx context.Context, l *Layout, src, dst string, rowBytes, bufBytes int64) error {
	in, size, err := osutil.OpenSeq(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if size != l.Nodes*rowBytes {
		return fmt.Errorf("partition features: %s holds %d bytes, want %d nodes × %d", src, size, l.Nodes, rowBytes)
	}
	out, err := newScatterWriter(dst, l.Nodes*rowBytes)
	if err != nil {
		return err
	}
	defer out.abort()
	// Per-partition append buffers of whole rows.
	rowsPer := max(1, bufBytes/int64(l.P)/rowBytes)
	bufs := make([][]byte, l.P)
	next := make([]int64, l.P) // next partitioned id to write per partition
	for q := range bufs {
		bufs[q] = make([]byte, 0, rowsPer*rowBytes)
		next[q], _ = l.Range(q)
	}
	flush := func(q int) error {
		if len(bufs[q]) == 0 {
			return nil
		}
		n := int64(len(bufs[q])) / rowBytes
		if err := out.writeAt(bufs[q], (next[q]-n)*rowBytes); err != nil {
			return err
		}
		bufs[q] = bufs[q][:0]
		return nil
	}
	chunkRows := max(1, (4<<20)/rowBytes)
	chunk := make([]byte, chunkRows*rowBytes)
	for v := int64(0); v < l.Nodes; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(chunkRows, l.Nodes-v)
		if err := in.ReadFull(chunk[:n*rowBytes]); err != nil {
			return fmt.Errorf("partition features: %w", err)
		}
		for k := int64(0); k < n; k++ {
			q := l.Part(l.New(v + k))
			if l.New(v+k) != next[q] {
				return fmt.Errorf("partition features: node %d has partitioned id %d, expected %d", v+k, l.New(v+k), next[q])
			}
			bufs[q] = append(bufs[q], chunk[k*rowBytes:(k+1)*rowBytes]...)
			next[q]++
			if int64(len(bufs[q])) == rowsPer*rowBytes {
				if err := flush(q); err != nil {
					return err
				}
			}
		}
		v += n
	}
	for q := range bufs {
		if err := flush(q); err != nil {
			return err
		}
	}
	return out.finish()
}

// WriteEdgeBuckets writes the p² edge buckets of the graph (CSC: indptr in
// memory, indices in indicesPath, original ids) into dst: one counting scan
// of indices, then one scan writing every edge into its bucket through at
// most bufBytes of buffers.
func WriteEdgeBuckets(ctx context.Context, l *Layout, indptr []int64, indicesPath, dst string, bufBytes int64) (Buckets, error) {
	p := l.P
	b := Buckets{P: p, Off: make([]int64, p*p+1)}
	if int64(len(indptr)) != l.Nodes+1 {
		return b, fmt.Errorf("edge buckets: indptr has %d entries for %d nodes", len(indptr), l.Nodes)
	}
	edges := indptr[l.Nodes]
	counts := make([]int64, p*p)
	// scan calls fn(dst partitioned id, src original ids...) for every node
	// with in-edges, in original id order.
	scan := func(fn func(v int64, srcs []int64) error) error {
		in, size, err := osutil.OpenSeq(indicesPath)
		if err != nil {
			return err
		}
		defer in.Close()
		if size != edges*8 {
			return fmt.Errorf("edge buckets: %s holds %d bytes, indptr says %d edges", indicesPath, size, edges)
		}
		buf := make([]int64, 512<<10)
		var have, at int64 // entries of buf filled / consumed; file position of buf[0]
		var base int64
		for v := int64(0); v < l.Nodes; v++ {
			lo, hi := indptr[v], indptr[v+1]
			if hi < lo {
				return fmt.Errorf("edge buckets: indptr decreases at node %d", v)
			}
			for lo < hi {
				if lo >= base+have {
					if err := ctx.Err(); err != nil {
						return err
					}
					base += have
					have = min(int64(len(buf)), edges-base)
					if err := in.ReadFull(osutil.Bytes(buf[:have])); err != nil {
						return fmt.Errorf("edge buckets: %w", err)
					}
				}
				at = lo - base
				end := min(hi-base, have)
				if err := fn(v, buf[at:end]); err != nil {
					return err
				}
				lo = base + end
			}
		}
		return nil
	}
	err := scan(func(v int64, srcs []int64) error {
		j := l.Part(l.New(v))
		for _, u := range srcs {
			if u < 0 || u >= l.Nodes {
				return fmt.Errorf("edge buckets: in-neighbour %d of node %d out of range [0,%d)", u, v, l.Nodes)
			}
			counts[l.Part(l.New(u))*p+j]++
		}
		return nil
	})
	if err != nil {
		return b, err
	}
	b.FileOff = make([]int64, p*p+1)
	for k, c := range counts {
		b.Off[k+1] = b.Off[k] + c
		b.FileOff[k+1] = b.FileOff[k] + (c*EdgeBytes+BucketAlign-1)/BucketAlign*BucketAlign
	}
	out, err := newScatterWriter(dst, b.FileOff[p*p])
	if err != nil {
		return b, err
	}
	defer out.abort()
	// Edges per bucket buffer: whole pages, so that every flush but a
	// bucket's last covers whole pages of its own.
	const pageEdges = BucketAlign / EdgeBytes
	per := max(pageEdges, bufBytes/int64(p*p)/EdgeBytes/pageEdges*pageEdges)
	bufs := make([][]int32, p*p)
	next := make([]int64, p*p) // next edge slot per bucket (from the bucket's start)
	flush := func(k int) error {
		n := int64(len(bufs[k]) / 2)
		if n == 0 {
			return nil
		}
		if err := out.writeAt(osutil.Bytes(bufs[k]), b.FileOff[k]+(next[k]-n)*EdgeBytes); err != nil {
			return err
		}
		bufs[k] = bufs[k][:0]
		return nil
	}
	err = scan(func(v int64, srcs []int64) error {
		nv := l.New(v)
		j := l.Part(nv)
		for _, u := range srcs {
			nu := l.New(u)
			k := l.Part(nu)*p + j
			if bufs[k] == nil {
				bufs[k] = make([]int32, 0, 2*min(per, counts[k]))
			}
			bufs[k] = append(bufs[k], int32(nu), int32(nv))
			next[k]++
			if int64(len(bufs[k])) == 2*per {
				if err := flush(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return b, err
	}
	for k := range bufs {
		if err := flush(k); err != nil {
			return b, err
		}
	}
	return b, out.finish()
}

// scatterWriter writes a file of known size at arbitrary offsets and keeps
// its dirty page cache bounded: every writebackEvery bytes it writes the
// file back and drops its pages.
type scatterWriter struct {
	f     *os.File
	since int64
	done  bool
}

const writebackEvery = 32 << 20

func newScatterWriter(path string, size int64) (*scatterWriter, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return &scatterWriter{f: f}, nil
}

func (w *scatterWriter) writeAt(b []byte, off int64) error {
	if _, err := w.f.WriteAt(b, off); err != nil {
		return fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
	w.since += int64(len(b))
	if w.since >= writebackEvery {
		w.since = 0
		return w.writeback()
	}
	return nil
}

func (w *scatterWriter) writeback() error {
	if err := osutil.WaitWriteback(w.f, 0, 0); err != nil {
		return err
	}
	_ = osutil.DropCache(w.f)
	return nil
}

// finish writes everything back, drops the pages and closes the file.
func (w *scatterWriter) finish() error {
	err := w.f.Sync()
	_ = osutil.DropCache(w.f)
	w.done = true
	return errors.Join(err, w.f.Close())
}

// abort closes and removes an unfinished file.
func (w *scatterWriter) abort() {
	if w.done {
		return
	}
	name := w.f.Name()
	w.f.Close()
	os.Remove(name)
}
