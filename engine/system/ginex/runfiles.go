package ginex

// Ginex §3.1 (Fig. 8(b)–(e)): the runtime files. The superbatch sample
// stage writes, per iteration, an ids file (the sampled node ids, i.e. the
// batch's input nodes, seeds first) and an adj file (the message-flow
// blocks); the changeset precomputation writes one init file (rows to
// prefetch at feature-cache initialisation) and one update file per
// iteration (in_ids, in_positions, out_ids). The main loop reads them back
// in batch order. They live in a per-run scratch directory on the data
// disk and are deleted when their superbatch is done.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"outcore/engine/cache"
	"outcore/engine/graph"
	"outcore/internal/osutil"
)

// ErrBadRunFile marks a runtime file that does not parse.
var ErrBadRunFile = errors.New("ginex: malformed runtime file")

const (
	runMagicIDs    = 0x5344494f // "OIDS"
	runMagicAdj    = 0x4a44414f // "OADJ"
	runMagicUpdate = 0x5055414f // "OAUP"
	runMagicInit   = 0x4e49414f // "OAIN"
)

// superbatchDir names the runtime files of one superbatch.
type superbatchDir string

func (d superbatchDir) ids(i int) string {
	return filepath.Join(string(d), fmt.Sprintf("ids_%d.bin", i))
}
func (d superbatchDir) adj(i int) string {
	return filepath.Join(string(d), fmt.Sprintf("adj_%d.bin", i))
}
func (d superbatchDir) update(i int) string {
	return filepath.Join(string(d), fmt.Sprintf("update_%d.bin", i))
}
func (d superbatchDir) init() string { return filepath.Join(string(d), "init.bin") }

// fileWriter writes little-endian headers and raw slices through a buffer.
type fileWriter struct {
	f   *os.File
	w   *bufio.Writer
	err error
	n   int64
}

func createRunFile(path string) (*fileWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("ginex: create runtime file: %w", err)
	}
	return &fileWriter{f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

func (w *fileWriter) u64(v uint64) {
	if w.err != nil {
		return
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	_, w.err = w.w.Write(b[:])
	w.n += 8
}

func (w *fileWriter) raw(b []byte) {
	if w.err != nil || len(b) == 0 {
		return
	}
	_, w.err = w.w.Write(b)
	w.n += int64(len(b))
}

// close flushes the file and waits until it is on the disk: runtime files
// are written while the memory budget is tight, and dirty pages, unlike
// clean ones, cannot be reclaimed at once when the memory cgroup fills up.
func (w *fileWriter) close() error {
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err == nil {
		w.err = w.f.Sync()
	}
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	if w.err != nil {
		return fmt.Errorf("ginex: write %s: %w", w.f.Name(), w.err)
	}
	return nil
}

// writeBatchFiles writes iteration i's ids and adj files and returns the
// bytes written.
func writeBatchFiles(d superbatchDir, i int, mb *graph.MiniBatch) (int64, error) {
	w, err := createRunFile(d.ids(i))
	if err != nil {
		return 0, err
	}
	w.u64(runMagicIDs)
	w.u64(uint64(mb.Epoch))
	w.u64(uint64(mb.Index))
	w.u64(uint64(len(mb.Seeds)))
	w.u64(uint64(len(mb.InputNodes)))
	w.raw(osutil.Bytes(mb.InputNodes))
	if err := w.close(); err != nil {
		return 0, err
	}
	total := w.n
	w, err = createRunFile(d.adj(i))
	if err != nil {
		return total, err
	}
	w.u64(runMagicAdj)
	w.u64(uint64(len(mb.Blocks)))
	for k := range mb.Blocks {
		b := &mb.Blocks[k]
		w.u64(uint64(b.NumSrc))
		w.u64(uint64(b.NumDst))
		w.u64(uint64(len(b.Indices)))
		w.raw(osutil.Bytes(b.Indptr))
		w.raw(osutil.Bytes(b.Indices))
	}
	err = w.close()
	return total + w.n, err
}

// byteReader parses a runtime file read whole.
type byteReader struct {
	b    []byte
	path string
	err  error
}

func (r *byteReader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.err = fmt.Errorf("%s: truncated: %w", r.path, ErrBadRunFile)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// count reads a length and checks that n elements of size sz remain.
func (r *byteReader) count(sz int) int {
	n := r.u64()
	if r.err == nil && (n > uint64(len(r.b)/sz)) {
		r.err = fmt.Errorf("%s: length %d exceeds the file: %w", r.path, n, ErrBadRunFile)
		return 0
	}
	return int(n)
}

func readInto[T int64 | int32](r *byteReader, dst []T) {
	if r.err != nil {
		return
	}
	nb := len(osutil.Bytes(dst))
	if len(r.b) < nb {
		r.err = fmt.Errorf("%s: truncated: %w", r.path, ErrBadRunFile)
		return
	}
	copy(osutil.Bytes(dst), r.b[:nb])
	r.b = r.b[nb:]
}

func openRunFile(path string, magic uint64) (*byteReader, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ginex: read runtime file: %w", err)
	}
	r := &byteReader{b: b, path: path}
	if m := r.u64(); r.err == nil && m != magic {
		return nil, fmt.Errorf("%s: wrong magic %#x: %w", path, m, ErrBadRunFile)
	}
	return r, r.err
}

// readIDs reads iteration i's ids file into ids (reusing its capacity) and
// returns it with the batch's epoch, index and seed count.
func readIDs(d superbatchDir, i int, ids []int64) (out []int64, epoch, index, seeds int, err error) {
	r, err := openRunFile(d.ids(i), runMagicIDs)
	if err != nil {
		return ids, 0, 0, 0, err
	}
	epoch, index = int(r.u64()), int(r.u64())
	seeds = int(r.u64())
	n := r.count(8)
	if cap(ids) < n {
		ids = make([]int64, n)
	}
	ids = ids[:n]
	readInto(r, ids)
	if r.err == nil && seeds > n {
		r.err = fmt.Errorf("%s: %d seeds among %d ids: %w", r.path, seeds, n, ErrBadRunFile)
	}
	return ids, epoch, index, seeds, r.err
}

// readBatch reads iteration i's ids and adj files into a MiniBatch; block
// degrees are recomputed from indptr (held in memory).
func readBatch(d superbatchDir, i int, indptr []int64) (*graph.MiniBatch, error) {
	ids, epoch, index, seeds, err := readIDs(d, i, nil)
	if err != nil {
		return nil, err
	}
	r, err := openRunFile(d.adj(i), runMagicAdj)
	if err != nil {
		return nil, err
	}
	mb := &graph.MiniBatch{Epoch: epoch, Index: index, InputNodes: ids, Seeds: ids[:seeds]}
	nb := r.count(24)
	mb.Blocks = make([]graph.Block, nb)
	for k := range mb.Blocks {
		b := &mb.Blocks[k]
		b.NumSrc, b.NumDst = int(r.u64()), int(r.u64())
		nnz := int(r.u64())
		if r.err != nil {
			break
		}
		if b.NumDst < 0 || b.NumSrc < b.NumDst || b.NumSrc > len(ids) || nnz < 0 || (b.NumDst+1+nnz)*4 > len(r.b) {
			return nil, fmt.Errorf("%s: block %d shape %d×%d nnz %d: %w", r.path, k, b.NumSrc, b.NumDst, nnz, ErrBadRunFile)
		}
		b.Indptr = make([]int32, b.NumDst+1)
		b.Indices = make([]int32, nnz)
		readInto(r, b.Indptr)
		readInto(r, b.Indices)
	}
	if r.err != nil {
		return nil, r.err
	}
	deg := make([]int32, len(ids))
	for j, v := range ids {
		if v < 0 || v+1 >= int64(len(indptr)) {
			return nil, fmt.Errorf("%s: node %d outside the graph: %w", d.ids(i), v, ErrBadRunFile)
		}
		deg[j] = int32(indptr[v+1] - indptr[v])
	}
	for k := range mb.Blocks {
		b := &mb.Blocks[k]
		b.SrcDeg, b.DstDeg = deg[:b.NumSrc], deg[:b.NumDst]
	}
	return mb, nil
}

// writeUpdate writes iteration cs.Iteration's update file.
func writeUpdate(d superbatchDir, cs cache.Changeset) (int64, error) {
	w, err := createRunFile(d.update(cs.Iteration))
	if err != nil {
		return 0, err
	}
	w.u64(runMagicUpdate)
	w.u64(uint64(len(cs.InIDs)))
	w.raw(osutil.Bytes(cs.InIDs))
	w.raw(osutil.Bytes(cs.InPositions))
	w.u64(uint64(len(cs.OutIDs)))
	w.raw(osutil.Bytes(cs.OutIDs))
	err = w.close()
	return w.n, err
}

// readUpdate reads iteration i's update file.
func readUpdate(d superbatchDir, i int) (cache.Changeset, error) {
	cs := cache.Changeset{Iteration: i}
	r, err := openRunFile(d.update(i), runMagicUpdate)
	if err != nil {
		return cs, err
	}
	n := r.count(12)
	cs.InIDs = make([]int64, n)
	cs.InPositions = make([]int32, n)
	readInto(r, cs.InIDs)
	readInto(r, cs.InPositions)
	m := r.count(8)
	cs.OutIDs = make([]int64, m)
	readInto(r, cs.OutIDs)
	return cs, r.err
}

// writeInit writes the superbatch's init file.
func writeInit(d superbatchDir, ids []int64) error {
	w, err := createRunFile(d.init())
	if err != nil {
		return err
	}
	w.u64(runMagicInit)
	w.u64(uint64(len(ids)))
	w.raw(osutil.Bytes(ids))
	return w.close()
}

// readInit reads the superbatch's init file.
func readInit(d superbatchDir) ([]int64, error) {
	r, err := openRunFile(d.init(), runMagicInit)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, r.count(8))
	readInto(r, ids)
	return ids, r.err
}

// runTrace is a superbatch's access trace read back from its ids files
// (cache.Trace): the changeset precomputation streams it three times.
type runTrace struct {
	dir superbatchDir
	n   int
	buf []int64
}

// Len implements cache.Trace.
func (t *runTrace) Len() int { return t.n }

// IDs implements cache.Trace; the slice is reused by the next call.
func (t *runTrace) IDs(i int) ([]int64, error) {
	var err error
	t.buf, _, _, _, err = readIDs(t.dir, i, t.buf)
	return t.buf, err
}

// removeSuperbatch deletes a superbatch's runtime files.
func removeSuperbatch(d superbatchDir) error {
	if err := os.RemoveAll(string(d)); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("ginex: remove runtime files %s: %w", d, err)
	}
	return nil
}
