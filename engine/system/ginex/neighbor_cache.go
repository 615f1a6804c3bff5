package ginex

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"outcore/engine/cache"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

// §3.2 (Fig. 10): the static neighbour cache, built offline from the
// out/in-degree scores, sized from the budget and dumped to a file; the
// sequential scans of indices.bin that count the degrees and fill it.

// buildNeighborCache computes out-degrees with one pass over indices.bin,
// selects lists by out/in-degree score within the budget, and writes the
// cache file.
func (g *ginex) buildNeighborCache(env *train.Env) error {
	static := g.opt.policy == policyStatic
	if !static && cache.NeighborCacheEntries(g.plan.ncBytes, g.nodes) == 0 {
		// Its address table alone (8 B per node) would not fit: no cache,
		// every list is read from disk (and no table is held).
		env.Logf("ginex: no neighbour cache: the budget leaves it %d MiB, less than its address table (%d MiB); every neighbour list is read from disk", g.plan.ncBytes>>20, (8*g.nodes)>>20)
		return nil
	}
	path := g.idxFile.Path()
	defer osutil.DropFileCache(path)
	outDeg := make([]int64, g.nodes)
	if err := scanIndices(path, func(chunk []int64) {
		for _, u := range chunk {
			if u >= 0 && u < g.nodes {
				outDeg[u]++
			}
		}
	}); err != nil {
		return fmt.Errorf("ginex: out-degrees: %w", err)
	}
	if static {
		if err := g.writeStatic(outDeg); err != nil {
			return err
		}
		env.Logf("ginex: static feature cache (policy=static) of the %d nodes of highest out-degree", g.staticRows)
		if cache.NeighborCacheEntries(g.plan.ncBytes, g.nodes) == 0 {
			env.Logf("ginex: no neighbour cache: the budget leaves it %d MiB, less than its address table (%d MiB); every neighbour list is read from disk", g.plan.ncBytes>>20, (8*g.nodes)>>20)
			return nil
		}
	}
	g.ncPath = filepath.Join(g.scratch, "neighbor_cache.bin") // set only when the file is written
	sr, err := newSeqIndexReader(path)
	if err != nil {
		return err
	}
	defer sr.close()
	nc, err := cache.BuildNeighborCache(g.indptr, outDeg, g.plan.ncBytes, sr.read)
	if err != nil {
		return fmt.Errorf("ginex: %w", err)
	}
	outDeg = nil
	g.ncCached = nc.Cached()
	env.Logf("ginex: neighbour cache holds the in-neighbour lists of %d nodes (%.1f%%), %d MiB", nc.Cached(), 100*float64(nc.Cached())/float64(g.nodes), nc.Bytes()>>20)
	if err := nc.WriteFile(g.ncPath); err != nil {
		return err
	}
	osutil.DropFileCache(g.ncPath)
	return nil
}

// scanIndices streams indices.bin in 4 MiB chunks.
func scanIndices(path string, fn func([]int64)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]int64, 512<<10)
	b := osutil.Bytes(buf)
	for {
		n, err := io.ReadFull(f, b)
		if n%8 != 0 {
			return fmt.Errorf("%s: size not a multiple of 8", path)
		}
		if n > 0 {
			fn(buf[:n/8])
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// seqIndexReader serves BuildNeighborCache's reads, which come in
// ascending position order, with one forward sweep over indices.bin.
type seqIndexReader struct {
	f   *os.File
	r   *bufio.Reader
	pos int64 // entry the reader is at
}

func newSeqIndexReader(path string) (*seqIndexReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &seqIndexReader{f: f, r: bufio.NewReaderSize(f, 1<<20)}, nil
}

func (s *seqIndexReader) read(start int64, dst []int64) error {
	if start < s.pos || start-s.pos > 1<<20 {
		if _, err := s.f.Seek(start*8, io.SeekStart); err != nil {
			return err
		}
		s.r.Reset(s.f)
	} else if start > s.pos {
		if _, err := s.r.Discard(int((start - s.pos) * 8)); err != nil {
			return err
		}
	}
	if _, err := io.ReadFull(s.r, osutil.Bytes(dst)); err != nil {
		return err
	}
	s.pos = start + int64(len(dst))
	return nil
}

func (s *seqIndexReader) close() { s.f.Close() }
