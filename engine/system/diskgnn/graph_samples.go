package diskgnn

// DiskGNN §3–§4: "DiskGNN takes the graph samples for many mini-batches
// ... and assumes that they are stored on the disk"; "For each mini-batch,
// DiskGNN loads its graph sample from the disk" (the graph loader, stage ③
// of the pipeline, §5.3). This is their format: one file, one region per
// sample at a 4 KiB-aligned offset (regions are read with O_DIRECT, §6),
// found through an index held in memory:
//
//	header (48 bytes, little endian u64): magic, epoch, index, seeds,
//	inputs, blocks
//	inputs: int64 × inputs (the batch's input nodes, seeds first)
//	per block: numSrc, numDst, nnz (u64), indptr int32 × (numDst+1),
//	indices int32 × nnz
//
// The inputs come first so the pre-processing passes, which need only a
// sample's input nodes, read a prefix of its region. Degrees (GCN) are not
// stored: they are recomputed from indptr when a sample is decoded, as the
// sampler computes them.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"outcore/engine/graph"
	"outcore/internal/osutil"
)

// errBadSample marks a graph sample region that does not parse.
var errBadSample = errors.New("diskgnn: malformed graph sample")

const (
	sampleMagic      = 0x485052474e4e4744 // "DGNNGRPH"
	sampleHeaderSize = 48
	regionAlign      = 4096
)

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// sampleRef locates one graph sample in the samples file.
type sampleRef struct {
	Off    int64
	Len    int64
	Inputs int32
	Seeds  int32
}

// InputsLen is the length of the region prefix holding the header and the
// input nodes.
func (r sampleRef) InputsLen() int64 { return sampleHeaderSize + 8*int64(r.Inputs) }

// encodedSampleLen is the byte length of mb's encoding.
func encodedSampleLen(mb *graph.MiniBatch) int64 {
	n := int64(sampleHeaderSize) + 8*int64(len(mb.InputNodes))
	for _, b := range mb.Blocks {
		n += 24 + 4*int64(len(b.Indptr)+len(b.Indices))
	}
	return n
}

// encodeSample appends mb's encoding to dst.
func encodeSample(dst []byte, mb *graph.MiniBatch) []byte {
	u64 := func(v uint64) { dst = binary.LittleEndian.AppendUint64(dst, v) }
	u64(sampleMagic)
	u64(uint64(mb.Epoch))
	u64(uint64(mb.Index))
	u64(uint64(len(mb.Seeds)))
	u64(uint64(len(mb.InputNodes)))
	u64(uint64(len(mb.Blocks)))
	dst = append(dst, osutil.Bytes(mb.InputNodes)...)
	for k := range mb.Blocks {
		b := &mb.Blocks[k]
		u64(uint64(b.NumSrc))
		u64(uint64(b.NumDst))
		u64(uint64(len(b.Indices)))
		dst = append(dst, osutil.Bytes(b.Indptr)...)
		dst = append(dst, osutil.Bytes(b.Indices)...)
	}
	return dst
}

// sampleHeader is the parsed fixed header.
type sampleHeader struct {
	epoch, index, seeds, inputs, blocks int
}

func parseSampleHeader(b []byte) (sampleHeader, error) {
	var h sampleHeader
	if len(b) < sampleHeaderSize {
		return h, fmt.Errorf("%w: %d bytes, header needs %d", errBadSample, len(b), sampleHeaderSize)
	}
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	if u(0) != sampleMagic {
		return h, fmt.Errorf("%w: magic %#x", errBadSample, u(0))
	}
	const lim = 1 << 31
	if u(1) >= lim || u(2) >= lim || u(3) >= lim || u(4) >= lim || u(5) > 64 {
		return h, fmt.Errorf("%w: header fields out of range", errBadSample)
	}
	h = sampleHeader{int(u(1)), int(u(2)), int(u(3)), int(u(4)), int(u(5))}
	if h.seeds > h.inputs {
		return h, fmt.Errorf("%w: %d seeds among %d inputs", errBadSample, h.seeds, h.inputs)
	}
	if int64(len(b)-sampleHeaderSize) < 8*int64(h.inputs) {
		return h, fmt.Errorf("%w: %d inputs do not fit in %d bytes", errBadSample, h.inputs, len(b))
	}
	return h, nil
}

// decodeInputs returns the input nodes of a region prefix (at least
// sampleRef.InputsLen bytes) in ids, reusing its capacity; nodes bounds the
// ids.
func decodeInputs(b []byte, nodes int64, ids []int64) ([]int64, error) {
	h, err := parseSampleHeader(b)
	if err != nil {
		return ids, err
	}
	ids = growSlice(ids, h.inputs)
	copy(osutil.Bytes(ids), b[sampleHeaderSize:sampleHeaderSize+8*h.inputs])
	for _, v := range ids {
		if v < 0 || v >= nodes {
			return ids, fmt.Errorf("%w: input node %d outside [0,%d)", errBadSample, v, nodes)
		}
	}
	return ids, nil
}

func growSlice[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// decodeSample parses a whole region into mb, reusing the capacity of its
// slices, and sets the blocks' degrees from indptr (the full graph's CSR
// offsets). Every index is checked, so a corrupt region is an error, never
// a wrong batch.
func decodeSample(b []byte, indptr []int64, mb *graph.MiniBatch) error {
	return decodeSampleAs(b, indptr, mb, false)
}

// decodeSampleView is decodeSample without copies: the mini-batch's input
// nodes and block arrays are views of b (which must start 8-byte aligned
// and outlive mb); only the degrees are written to mb's own memory.
func decodeSampleView(b []byte, indptr []int64, mb *graph.MiniBatch) error {
	if !osutil.Aligned[int64](b) {
		return fmt.Errorf("diskgnn: graph sample buffer not 8-byte aligned")
	}
	return decodeSampleAs(b, indptr, mb, true)
}

func decodeSampleAs(b []byte, indptr []int64, mb *graph.MiniBatch, view bool) error {
	nodes := int64(len(indptr)) - 1
	h, err := parseSampleHeader(b)
	if err != nil {
		return err
	}
	if view {
		mb.InputNodes = osutil.View[int64](b[sampleHeaderSize : sampleHeaderSize+8*h.inputs])
		for _, v := range mb.InputNodes {
			if v < 0 || v >= nodes {
				return fmt.Errorf("%w: input node %d outside [0,%d)", errBadSample, v, nodes)
			}
		}
	} else if mb.InputNodes, err = decodeInputs(b, nodes, mb.InputNodes); err != nil {
		return err
	}
	mb.Epoch, mb.Index = h.epoch, h.index
	mb.Seeds = mb.InputNodes[:h.seeds]
	rest := b[sampleHeaderSize+8*h.inputs:]
	if h.blocks == 0 {
		return fmt.Errorf("%w: no blocks", errBadSample)
	}
	if cap(mb.Blocks) >= h.blocks {
		mb.Blocks = mb.Blocks[:h.blocks]
	} else {
		mb.Blocks = make([]graph.Block, h.blocks)
	}
	for k := range mb.Blocks {
		if len(rest) < 24 {
			return fmt.Errorf("%w: block %d header truncated", errBadSample, k)
		}
		ns, nd, nnz := binary.LittleEndian.Uint64(rest), binary.LittleEndian.Uint64(rest[8:]), binary.LittleEndian.Uint64(rest[16:])
		rest = rest[24:]
		if ns > uint64(h.inputs) || nd > ns || nnz > uint64(len(rest))/4 || (nd+1+nnz)*4 > uint64(len(rest)) {
			return fmt.Errorf("%w: block %d shape %d×%d nnz %d", errBadSample, k, ns, nd, nnz)
		}
		bl := &mb.Blocks[k]
		bl.NumSrc, bl.NumDst = int(ns), int(nd)
		if view {
			bl.Indptr = osutil.View[int32](rest[:4*(nd+1)])
			bl.Indices = osutil.View[int32](rest[4*(nd+1) : 4*(nd+1+nnz)])
			rest = rest[4*(nd+1+nnz):]
		} else {
			bl.Indptr = growSlice(bl.Indptr, int(nd)+1)
			bl.Indices = growSlice(bl.Indices, int(nnz))
			n := copy(osutil.Bytes(bl.Indptr), rest)
			rest = rest[n:]
			n = copy(osutil.Bytes(bl.Indices), rest)
			rest = rest[n:]
		}
		if bl.Indptr[0] != 0 || int64(bl.Indptr[nd]) != int64(nnz) {
			return fmt.Errorf("%w: block %d indptr [%d..%d] for %d entries", errBadSample, k, bl.Indptr[0], bl.Indptr[nd], nnz)
		}
		for i := 0; i < int(nd); i++ {
			if bl.Indptr[i] > bl.Indptr[i+1] {
				return fmt.Errorf("%w: block %d indptr decreases at %d", errBadSample, k, i)
			}
		}
		for _, j := range bl.Indices {
			if j < 0 || int(j) >= bl.NumSrc {
				return fmt.Errorf("%w: block %d source %d of %d", errBadSample, k, j, bl.NumSrc)
			}
		}
		if k > 0 && bl.NumSrc != mb.Blocks[k-1].NumDst {
			return fmt.Errorf("%w: block %d has %d sources, block %d %d destinations", errBadSample, k, bl.NumSrc, k-1, mb.Blocks[k-1].NumDst)
		}
	}
	if mb.Blocks[0].NumSrc != h.inputs || mb.Blocks[h.blocks-1].NumDst != h.seeds {
		return fmt.Errorf("%w: blocks do not connect %d inputs to %d seeds", errBadSample, h.inputs, h.seeds)
	}
	deg := growSlice(mb.Blocks[0].SrcDeg[:0:cap(mb.Blocks[0].SrcDeg)], h.inputs)
	for i, v := range mb.InputNodes {
		deg[i] = int32(indptr[v+1] - indptr[v])
	}
	for k := range mb.Blocks {
		bl := &mb.Blocks[k]
		bl.SrcDeg, bl.DstDeg = deg[:bl.NumSrc], deg[:bl.NumDst]
	}
	return nil
}

// sampleWriter appends graph samples to the samples file from several
// goroutines: each Put reserves its 4 KiB-aligned region and writes it
// with one pwrite. The file's dirty pages are flushed every syncEvery
// bytes, so that written samples do not pile up as dirty page cache in a
// memory-limited group (dirty pages cannot be reclaimed at once).
type sampleWriter struct {
	f         *os.File
	path      string
	syncEvery int64

	mu      sync.Mutex
	end     int64
	dirty   int64
	refs    []sampleRef
	written int64
	bufs    sync.Pool
}

// createSampleWriter creates path for n samples.
func createSampleWriter(path string, n int, syncEvery int64) (*sampleWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("diskgnn: graph samples: %w", err)
	}
	return &sampleWriter{f: f, path: path, syncEvery: syncEvery, refs: make([]sampleRef, n)}, nil
}

// Put stores mb as sample g.
func (w *sampleWriter) Put(g int, mb *graph.MiniBatch) error {
	if g < 0 || g >= len(w.refs) {
		return fmt.Errorf("diskgnn: graph sample %d of %d", g, len(w.refs))
	}
	bp, _ := w.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer w.bufs.Put(bp)
	b := encodeSample((*bp)[:0], mb)
	*bp = b
	n := int64(len(b))
	w.mu.Lock()
	off := w.end
	w.end = alignUp(off+n, regionAlign)
	w.refs[g] = sampleRef{Off: off, Len: n, Inputs: int32(len(mb.InputNodes)), Seeds: int32(len(mb.Seeds))}
	w.written += n
	w.dirty += n
	flush := w.syncEvery > 0 && w.dirty >= w.syncEvery
	if flush {
		w.dirty = 0
	}
	w.mu.Unlock()
	if _, err := w.f.WriteAt(b, off); err != nil {
		return fmt.Errorf("diskgnn: write graph sample %d: %w", g, err)
	}
	if flush {
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("diskgnn: sync graph samples: %w", err)
		}
	}
	return nil
}

// Close flushes the file to disk and returns the index of the samples and
// the bytes written.
func (w *sampleWriter) Close() ([]sampleRef, int64, error) {
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, 0, fmt.Errorf("diskgnn: close graph samples: %w", err)
	}
	return w.refs, w.written, nil
}
