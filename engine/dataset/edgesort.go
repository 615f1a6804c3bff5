package dataset

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"outcore/internal/osutil"
)

// edgeSorter turns an edge stream in any order into CSC files with bounded
// memory: an external counting sort by destination.
//
//  1. Add spools each (dst, src) pair to a temporary file and counts the
//     in-degree of every destination (the count array becomes indptr, so it
//     is O(Nodes), as indptr itself).
//  2. Finish splits the destination range into buckets of consecutive nodes
//     holding at most budget edges each (a node with more is a bucket on
//     its own), distributes the spool into one temporary file per bucket
//     (at most maxOpenBuckets at a time, repeating the distribution pass
//     when there are more), then loads one bucket at a time, places its
//     edges by counting sort, sorts each node's list, drops duplicates, and
//     appends it to indices.bin. indptr.bin is written last.
//
// Memory: the count array plus one bucket (budget×16 bytes) plus buffers.
// Temporary files live in the Writer's temporary directory and are removed
// by Finish (or with it by Abort).
type edgeSorter struct {
	n         int64
	dir       string
	spoolPath string
	spool     *os.File
	bw        *bufio.Writer
	counts    []int64
	added     int64
	selfLoops int64
	dropSelf  bool
	budget    int64
	pair      [16]byte
	// labels, when set before Finish, lets Finish count same-label edges.
	labels []int32
}

// defaultSortBudget is the number of edges held in memory at once (64 MiB).
const defaultSortBudget = 4 << 20

// maxOpenBuckets bounds the bucket files open (and buffered) at once.
const maxOpenBuckets = 64

func newEdgeSorter(tmpDir string, nodes int64, budget int64, dropSelfLoops bool) (*edgeSorter, error) {
	if budget <= 0 {
		budget = defaultSortBudget
	}
	dir := filepath.Join(tmpDir, ".edgesort")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("edge sort: %w", err)
	}
	p := filepath.Join(dir, "spool")
	f, err := os.Create(p)
	if err != nil {
		return nil, fmt.Errorf("edge sort: %w", err)
	}
	return &edgeSorter{
		n: nodes, dir: dir, spoolPath: p, spool: f, bw: bufio.NewWriterSize(f, 1<<20),
		counts: make([]int64, nodes), budget: budget, dropSelf: dropSelfLoops,
	}, nil
}

// Add records the edge src→dst (src becomes an in-neighbour of dst). An id
// outside [0, nodes) is an ErrBadInput; callers add their input position.
func (s *edgeSorter) Add(src, dst int64) error {
	if uint64(src) >= uint64(s.n) || uint64(dst) >= uint64(s.n) {
		return fmt.Errorf("%w: edge %d→%d: node id out of range [0,%d)", ErrBadInput, src, dst, s.n)
	}
	if src == dst && s.dropSelf {
		s.selfLoops++
		return nil
	}
	le.PutUint64(s.pair[:8], uint64(dst))
	le.PutUint64(s.pair[8:], uint64(src))
	if _, err := s.bw.Write(s.pair[:]); err != nil {
		return fmt.Errorf("edge sort spool: %w", err)
	}
	s.counts[dst]++
	s.added++
	return nil
}

// sortResult reports what Finish did.
type sortResult struct {
	Edges      int64 // entries written to indices.bin
	Duplicates int64 // repeated (src, dst) pairs dropped
	SelfLoops  int64 // self-loops dropped
	// LabeledEdges and SameLabelEdges count edges whose endpoints are both
	// labeled, and of those the ones joining equal labels (needs labels).
	LabeledEdges, SameLabelEdges int64
}

// Finish writes indptr.bin and indices.bin through w and removes the
// temporary files.
func (s *edgeSorter) Finish(w *Writer) (res sortResult, err error) {
	defer os.RemoveAll(s.dir)
	if err := s.bw.Flush(); err != nil {
		return res, fmt.Errorf("edge sort spool: %w", err)
	}
	if err := s.spool.Close(); err != nil {
		return res, fmt.Errorf("edge sort spool: %w", err)
	}
	res.SelfLoops = s.selfLoops

	// Buckets of consecutive destinations, ≤ budget edges each.
	var bounds []int64 // bucket b holds nodes [bounds[b], bounds[b+1])
	bounds = append(bounds, 0)
	var acc int64
	for v, c := range s.counts {
		if acc > 0 && acc+c > s.budget {
			bounds = append(bounds, int64(v))
			acc = 0
		}
		acc += c
	}
	bounds = append(bounds, s.n)
	nb := len(bounds) - 1

	idxF, err := w.Create(IndicesFile)
	if err != nil {
		return res, err
	}
	idxW := bufio.NewWriterSize(newSeqWriter(idxF), 1<<20)
	var adj []int64
	for first := 0; first < nb; first += maxOpenBuckets {
		last := min(nb, first+maxOpenBuckets)
		paths, err := s.distribute(bounds, first, last)
		if err != nil {
			return res, err
		}
		for b := first; b < last; b++ {
			lo, hi := bounds[b], bounds[b+1]
			var total int64
			for v := lo; v < hi; v++ {
				total += s.counts[v]
			}
			if int64(cap(adj)) < total {
				adj = make([]int64, total)
			}
			adj = adj[:total]
			// offsets of each node inside the bucket
			fill := make([]int64, hi-lo)
			var off int64
			for v := lo; v < hi; v++ {
				fill[v-lo] = off
				off += s.counts[v]
			}
			starts := slices.Clone(fill)
			if err := readPairs(paths[b-first], func(dst, src int64) {
				adj[fill[dst-lo]] = src
				fill[dst-lo]++
			}); err != nil {
				return res, err
			}
			os.Remove(paths[b-first])
			for v := lo; v < hi; v++ {
				list := adj[starts[v-lo] : starts[v-lo]+s.counts[v]]
				slices.Sort(list)
				u := slices.Compact(list)
				res.Duplicates += int64(len(list) - len(u))
				s.counts[v] = int64(len(u))
				res.Edges += int64(len(u))
				if s.labels != nil && s.labels[v] >= 0 {
					for _, x := range u {
						if lx := s.labels[x]; lx >= 0 {
							res.LabeledEdges++
							if lx == s.labels[v] {
								res.SameLabelEdges++
							}
						}
					}
				}
				if _, err := idxW.Write(osutil.Bytes(u)); err != nil {
					return res, fmt.Errorf("write %s: %w", IndicesFile, err)
				}
			}
		}
	}
	if err := idxW.Flush(); err != nil {
		return res, fmt.Errorf("write %s: %w", IndicesFile, err)
	}
	ipF, err := w.Create(IndptrFile)
	if err != nil {
		return res, err
	}
	ipW := bufio.NewWriterSize(ipF, 1<<20)
	var run int64
	var buf [8]byte
	le.PutUint64(buf[:], 0)
	ipW.Write(buf[:])
	for _, c := range s.counts {
		run += c
		le.PutUint64(buf[:], uint64(run))
		if _, err := ipW.Write(buf[:]); err != nil {
			return res, fmt.Errorf("write %s: %w", IndptrFile, err)
		}
	}
	if err := ipW.Flush(); err != nil {
		return res, fmt.Errorf("write %s: %w", IndptrFile, err)
	}
	os.Remove(s.spoolPath)
	return res, nil
}

// distribute copies the spooled pairs of buckets [first, last) into one
// file per bucket and returns their paths.
func (s *edgeSorter) distribute(bounds []int64, first, last int) ([]string, error) {
	paths := make([]string, last-first)
	files := make([]*os.File, last-first)
	ws := make([]*bufio.Writer, last-first)
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	for i := range paths {
		paths[i] = filepath.Join(s.dir, fmt.Sprintf("bucket-%06d", first+i))
		f, err := os.Create(paths[i])
		if err != nil {
			return nil, fmt.Errorf("edge sort: %w", err)
		}
		files[i] = f
		ws[i] = bufio.NewWriterSize(f, 256<<10)
	}
	lo, hi := bounds[first], bounds[last]
	var werr error
	var pair [16]byte
	err := readPairs(s.spoolPath, func(dst, src int64) {
		if werr != nil || dst < lo || dst >= hi {
			return
		}
		// bucket of dst: binary search in bounds[first:last+1]
		b, _ := slices.BinarySearch(bounds[first:last+1], dst+1)
		b-- // last bound ≤ dst
		le.PutUint64(pair[:8], uint64(dst))
		le.PutUint64(pair[8:], uint64(src))
		_, werr = ws[b].Write(pair[:])
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return nil, fmt.Errorf("edge sort distribute: %w", err)
	}
	for i, w := range ws {
		if err := w.Flush(); err != nil {
			return nil, fmt.Errorf("edge sort: %w", err)
		}
		if err := files[i].Close(); err != nil {
			return nil, fmt.Errorf("edge sort: %w", err)
		}
		files[i] = nil
	}
	return paths, nil
}

// readPairs streams a file of (dst, src) int64 pairs.
func readPairs(path string, fn func(dst, src int64)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("edge sort: %w", err)
	}
	defer f.Close()
	buf := make([]int64, 1<<17)
	for {
		n, err := io.ReadFull(f, osutil.Bytes(buf))
		vals := buf[:n/8]
		for i := 0; i+1 < len(vals); i += 2 {
			fn(vals[i], vals[i+1])
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("edge sort read %s: %w", path, err)
		}
	}
}
