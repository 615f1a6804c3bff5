package osutil

import (
	"fmt"
	"io"
	"os"
)

// SeqReader reads a file front to back and drops what it has read from
// the page cache, so that one scan of a large file is not charged to the
// memory of the process (its cgroup) that scans it.
type SeqReader struct {
	f   *os.File
	off int64
}

// OpenSeq opens path for one sequential scan (readahead advised) and
// returns its size, which the scan is to cover.
func OpenSeq(path string) (*SeqReader, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	_ = AdviseSequential(f)
	return &SeqReader{f: f}, st.Size(), nil
}

// ReadFull fills b with the next len(b) bytes, then drops them from the
// page cache; an error names the file and the offset.
func (r *SeqReader) ReadFull(b []byte) error {
	if _, err := io.ReadFull(r.f, b); err != nil {
		return fmt.Errorf("read %s at %d: %w", r.f.Name(), r.off, err)
	}
	_ = DropRange(r.f, r.off, int64(len(b)))
	r.off += int64(len(b))
	return nil
}

// Close drops what is left of the file in the page cache and closes it.
func (r *SeqReader) Close() {
	_ = DropCache(r.f)
	r.f.Close()
}
