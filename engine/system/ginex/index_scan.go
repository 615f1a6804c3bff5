package ginex

// The sequential reads of indices.bin behind the neighbour cache
// (neighbor_cache.go): one scan in large chunks (the out-degrees), and a
// forward sweep serving reads in ascending position order (the cached
// lists).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"outcore/internal/osutil"
)

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
