package ginex

// The sequential reads of indices.bin behind the neighbour cache
// (neighbor_cache.go): one scan in large chunks (the out-degrees), and a
// forward sweep serving reads in ascending position order (the cached
// lists).

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"outcore/internal/osutil"
)

// scanIndices streams indices.bin in 4 MiB chunks, dropping what it has
// read from the page cache as it goes (osutil.SeqReader): the file is as
// large as the neighbour cache built next to it, and its pages are
// charged to the run's memory cgroup.
func scanIndices(path string, fn func([]int64)) error {
	r, size, err := osutil.OpenSeq(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if size%8 != 0 {
		return fmt.Errorf("%s: size not a multiple of 8", path)
	}
	buf := make([]int64, 512<<10)
	b := osutil.Bytes(buf)
	for left := size; left > 0; {
		k := min(left, int64(len(b)))
		if err := r.ReadFull(b[:k]); err != nil {
			return err
		}
		fn(buf[:k/8])
		left -= k
	}
	return nil
}

// seqIndexReader serves BuildNeighborCache's reads, which come in
// ascending position order, with one forward sweep over indices.bin.
type seqIndexReader struct {
	f       *os.File
	r       *bufio.Reader
	pos     int64 // entry the reader is at
	dropped int64 // bytes behind the sweep dropped from the page cache
}

// dropBehind is how far the sweep reads before it drops what lies behind
// it from the page cache.
const dropBehind = 32 << 20

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
		s.dropped = min(s.dropped, start*8)
	} else if start > s.pos {
		if _, err := s.r.Discard(int((start - s.pos) * 8)); err != nil {
			return err
		}
	}
	if _, err := io.ReadFull(s.r, osutil.Bytes(dst)); err != nil {
		return err
	}
	s.pos = start + int64(len(dst))
	if behind := s.pos*8 - int64(s.r.Buffered()); behind-s.dropped >= dropBehind {
		_ = osutil.DropRange(s.f, s.dropped, behind-s.dropped)
		s.dropped = behind
	}
	return nil
}

func (s *seqIndexReader) close() {
	_ = osutil.DropCache(s.f)
	s.f.Close()
}
