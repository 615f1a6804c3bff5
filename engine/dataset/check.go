package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"

	"outcore/internal/osutil"
)

// scanChunk is the number of elements Open reads per chunk when streaming.
const scanChunk = 1 << 19 // 4 MiB of int64

// corrupt formats an ErrCorrupt naming the dataset file.
func (d *Dataset) corrupt(file, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, d.Path(file), fmt.Sprintf(format, a...))
}

func (d *Dataset) checkSizes() error {
	want := d.Meta.expectedSizes()
	for _, f := range DataFiles {
		st, err := os.Stat(d.Path(f))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%w: %s: file missing", ErrCorrupt, d.Path(f))
			}
			return fmt.Errorf("stat %s: %w", d.Path(f), err)
		}
		if st.Size() != want[f] {
			what := "truncated"
			if st.Size() > want[f] {
				what = "too long"
			}
			return d.corrupt(f, "%s: %d bytes, meta.json implies %d", what, st.Size(), want[f])
		}
	}
	return nil
}

// checkIndptr streams indptr.bin and checks it starts at 0, never
// decreases and ends at the edge count; with keep it returns the array.
func (d *Dataset) checkIndptr(keep bool) ([]int64, error) {
	var ip []int64
	if keep {
		ip = make([]int64, 0, d.Meta.Nodes+1)
	}
	prev := int64(0)
	err := scanInt64(d.Path(IndptrFile), func(off int64, vals []int64) error {
		for i, x := range vals {
			k := off + int64(i)
			if k == 0 && x != 0 {
				return d.corrupt(IndptrFile, "indptr[0] = %d, want 0", x)
			}
			if x < prev {
				return d.corrupt(IndptrFile, "not non-decreasing: indptr[%d] = %d > indptr[%d] = %d", k-1, prev, k, x)
			}
			prev = x
		}
		if keep {
			ip = append(ip, vals...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if prev != d.Meta.Edges {
		return nil, d.corrupt(IndptrFile, "indptr[%d] = %d, want the edge count %d", d.Meta.Nodes, prev, d.Meta.Edges)
	}
	return ip, nil
}

// loadIndptr reads indptr.bin of an already verified dataset.
func (d *Dataset) loadIndptr() ([]int64, error) {
	ip := make([]int64, d.Meta.Nodes+1)
	if err := readWhole(d.Path(IndptrFile), osutil.Bytes(ip)); err != nil {
		return nil, err
	}
	return ip, nil
}

// scanInt64 streams the int64 file in chunks, calling fn with the element
// offset of each chunk. The file's pages are dropped from the page cache
// afterwards (a check must not leave GBs of cache charged to a run).
func scanInt64(path string, fn func(off int64, vals []int64) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	defer osutil.DropCache(f)
	buf := make([]int64, scanChunk)
	var off int64
	for {
		n, err := io.ReadFull(f, osutil.Bytes(buf))
		if n%8 != 0 {
			return fmt.Errorf("%w: %s: size not a multiple of 8", ErrCorrupt, path)
		}
		if n > 0 {
			if ferr := fn(off, buf[:n/8]); ferr != nil {
				return ferr
			}
			off += int64(n / 8)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
}

func (d *Dataset) checkIndices() error {
	n := d.Meta.Nodes
	return scanInt64(d.Path(IndicesFile), func(off int64, vals []int64) error {
		for i, u := range vals {
			if uint64(u) >= uint64(n) {
				e := off + int64(i)
				return d.corrupt(IndicesFile, "index out of range: indices[%d] = %d (in-neighbour of node %d), nodes = %d", e, u, d.ownerOf(e), n)
			}
		}
		return nil
	})
}

// ownerOf returns the node whose in-neighbour list holds edge position e.
func (d *Dataset) ownerOf(e int64) int64 {
	if d.Indptr == nil {
		owner := int64(-1)
		_ = scanInt64(d.Path(IndptrFile), func(off int64, vals []int64) error {
			for i, x := range vals {
				if x > e && owner < 0 {
					owner = off + int64(i) - 1
				}
			}
			return nil
		})
		return owner
	}
	lo, hi := int64(0), d.Meta.Nodes
	for lo < hi { // first v with Indptr[v+1] > e
		mid := (lo + hi) / 2
		if d.Indptr[mid+1] > e {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func (d *Dataset) checkLabels() error {
	p := d.Path(LabelsFile)
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer f.Close()
	buf := make([]int32, scanChunk)
	var off, labeled int64
	classes := int32(d.Meta.Classes)
	for {
		n, err := io.ReadFull(f, osutil.Bytes(buf))
		for i, l := range buf[:n/4] {
			if l < -1 || l >= classes {
				return d.corrupt(LabelsFile, "label out of range: labels[%d] = %d, classes = %d (-1 = unlabeled)", off+int64(i), l, classes)
			}
			if l >= 0 {
				labeled++
			}
		}
		off += int64(n / 4)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
	}
	if labeled != d.Meta.Labeled {
		return d.corrupt(LabelsFile, "%d labeled nodes, meta.json says %d", labeled, d.Meta.Labeled)
	}
	return nil
}

func (d *Dataset) checkSplit(name string) error {
	file, _, err := d.splitFile(name)
	if err != nil {
		return err
	}
	n := d.Meta.Nodes
	return scanInt64(d.Path(file), func(off int64, vals []int64) error {
		for i, v := range vals {
			if uint64(v) >= uint64(n) {
				return d.corrupt(file, "node id out of range: entry %d = %d, nodes = %d", off+int64(i), v, n)
			}
		}
		return nil
	})
}
