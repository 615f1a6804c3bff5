package dataset

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"outcore/internal/osutil"
)

// NPYSources names the NumPy .npy files of an ImportNPY call.
type NPYSources struct {
	// Features: shape (N, D), float32 or float64 (stored as float32). Required.
	Features string
	// Labels: shape (N,) or (N, 1), integers (-1 = unlabeled) or floats
	// (NaN = unlabeled, other values must be integral). Optional: without
	// it every node is unlabeled.
	Labels string
	// Edges: an edge list of shape (2, E) (PyG edge_index: row 0 sources,
	// row 1 destinations) or (E, 2) (columns source, destination). A (2, 2)
	// array is read as (2, E). Source u becomes an in-neighbour of dst v.
	Edges string
	// Indptr (N+1) and Indices (E): the graph already in CSC form
	// (in-neighbours of v = indices[indptr[v]:indptr[v+1]]); an alternative
	// to Edges, copied without sorting unless Undirected is set.
	Indptr, Indices string
	// Train, Val, Test: node ids (1-D integers) or boolean masks of length N.
	Train, Val, Test string
	// Classes overrides the class count (default: max label + 1).
	Classes int
}

// ImportNPY imports a dataset from NumPy .npy files, streaming every array
// in chunks (memory: O(N) for labels and the edge sort's counts, plus
// buffers). A wrong dimension, shape or dtype is an ErrBadInput naming the
// file and what was expected. Without split files the split is random over
// labeled nodes (opt.TrainFrac…, opt.Seed) unless opt.Split is "none".
func ImportNPY(ctx context.Context, datasetsDir, name string, src NPYSources, opt ImportOptions) (*Dataset, error) {
	if src.Features == "" {
		return nil, fmt.Errorf("%w: npy import needs a features .npy", ErrConfig)
	}
	hasList, hasCSC := src.Edges != "", src.Indptr != "" || src.Indices != ""
	if hasList == hasCSC || hasCSC && (src.Indptr == "" || src.Indices == "") {
		return nil, fmt.Errorf("%w: npy import needs either an edge list .npy or both indptr and indices .npy", ErrConfig)
	}
	w, err := NewWriter(datasetsDir, name, opt.Force)
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	job := &importJob{w: w, began: time.Now(), progress: opt.Progress}
	job.meta.Undirected = opt.Undirected
	job.meta.Source = Source{Kind: "npy"}
	for _, p := range []string{src.Features, src.Labels, src.Edges, src.Indptr, src.Indices, src.Train, src.Val, src.Test} {
		if p != "" {
			abs, _ := filepath.Abs(p)
			job.meta.Source.Inputs = append(job.meta.Source.Inputs, abs)
		}
	}

	// Features.
	fa, err := openNPY(src.Features)
	if err != nil {
		return nil, err
	}
	defer fa.Close()
	if len(fa.shape) != 2 {
		return nil, fa.badShape("features", "2 dimensions (nodes, feature_dim)")
	}
	if fa.kind != 'f' {
		return nil, fmt.Errorf("%w: %s (features): dtype %s, want float32 or float64", ErrBadInput, fa.path, fa.descr)
	}
	n, dim := fa.shape[0], fa.shape[1]
	if dim < 1 || dim > 1<<20 {
		return nil, fmt.Errorf("%w: %s (features): feature dimension %d, want 1..2^20", ErrBadInput, fa.path, dim)
	}
	if n > MaxImportNodes {
		return nil, fmt.Errorf("%w: %s (features): %d nodes, more than the %d an import accepts", ErrBadInput, fa.path, n, int64(MaxImportNodes))
	}
	job.meta.FeatureDim = int(dim)
	ff, err := w.Create(FeaturesFile)
	if err != nil {
		return nil, err
	}
	fw := bufio.NewWriterSize(newSeqWriter(ff), 1<<20)
	if err := fa.streamFloat32(0, n*dim, int(dim), func(off int64, xs []float32) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := checkFinite(opt.AllowNonFinite, fa.path, xs, off/dim, int(dim)); err != nil {
			return err
		}
		_, err := fw.Write(osutil.Bytes(xs))
		return err
	}); err != nil {
		return nil, err
	}
	if err := fw.Flush(); err != nil {
		return nil, fmt.Errorf("write %s: %w", FeaturesFile, err)
	}

	// Labels.
	job.labels = make([]int32, n)
	maxLabel := int64(-1)
	if src.Labels == "" {
		for i := range job.labels {
			job.labels[i] = -1
		}
	} else {
		la, err := openNPY(src.Labels)
		if err != nil {
			return nil, err
		}
		defer la.Close()
		if !(len(la.shape) == 1 || len(la.shape) == 2 && la.shape[1] == 1) {
			return nil, la.badShape("labels", fmt.Sprintf("(%d,) or (%d, 1)", n, n))
		}
		if la.shape[0] != n {
			return nil, fmt.Errorf("%w: %s (labels): %d labels for %d nodes (features %s)", ErrBadInput, la.path, la.shape[0], n, fa.shapeString())
		}
		if err := la.streamInt64(0, n, true, func(off int64, xs []int64) error {
			for i, l := range xs {
				if l < -1 || l > 1<<30 {
					return fmt.Errorf("%w: %s (labels): label[%d] = %d (want -1 for unlabeled or 0..2^30)", ErrBadInput, la.path, off+int64(i), l)
				}
				job.labels[off+int64(i)] = int32(l)
				maxLabel = max(maxLabel, l)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	job.meta.Classes = int(maxLabel + 1)
	if src.Classes > 0 {
		if int64(src.Classes) <= maxLabel {
			return nil, fmt.Errorf("%w: --classes %d but labels go up to %d", ErrBadInput, src.Classes, maxLabel)
		}
		job.meta.Classes = src.Classes
	}

	// Edges.
	if hasList || opt.Undirected {
		job.sorter, err = newEdgeSorter(w.Dir(), n, opt.SortBudget, !opt.KeepSelfLoops)
		if err != nil {
			return nil, err
		}
		add := func(u, v int64) error {
			if err := job.sorter.Add(u, v); err != nil {
				return err
			}
			if opt.Undirected && u != v {
				return job.sorter.Add(v, u)
			}
			return nil
		}
		if hasList {
			err = streamEdgeList(ctx, src.Edges, add)
		} else {
			err = streamCSC(ctx, src.Indptr, src.Indices, n, func(v int64, us []int64) error {
				for _, u := range us {
					if err := add(u, v); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err != nil {
			return nil, err
		}
		if opt.Undirected {
			job.meta.Source.Notes = append(job.meta.Source.Notes, "stored undirected: every input edge in both directions, duplicates dropped")
		}
	} else if err := job.copyCSC(ctx, src.Indptr, src.Indices, n); err != nil {
		return nil, err
	}

	// Splits.
	files := [3]string{src.Train, src.Val, src.Test}
	if files != [3]string{} {
		for i, p := range files {
			if p == "" {
				continue
			}
			if job.splits[i], err = readSplitNPY(p, n); err != nil {
				return nil, err
			}
		}
		job.meta.Source.Split = "from .npy files"
	} else {
		switch opt.Split {
		case "", "random":
			tr, va, te, err := opt.splitFracs()
			if err != nil {
				return nil, err
			}
			job.splits = randomSplit(job.labels, tr, va, te, max(opt.Seed, 1))
			job.meta.Source.Split = fmt.Sprintf("random %.2f/%.2f/%.2f seed %d", tr, va, te, max(opt.Seed, 1))
		case "none":
			job.meta.Source.Split = "none"
		default:
			return nil, fmt.Errorf("%w: npy split %q (want random or none, or give split files)", ErrConfig, opt.Split)
		}
	}
	d, err := job.finish()
	if err != nil {
		return nil, fmt.Errorf("import npy: %w", err)
	}
	return d, nil
}

// streamEdgeList streams a (2, E) or (E, 2) edge array, calling add(src, dst).
func streamEdgeList(ctx context.Context, path string, add func(u, v int64) error) error {
	a, err := openNPY(path)
	if err != nil {
		return err
	}
	defer a.Close()
	if len(a.shape) != 2 || (a.shape[0] != 2 && a.shape[1] != 2) {
		return a.badShape("edges", "(2, E) or (E, 2)")
	}
	if a.kind == 'f' || a.kind == 'b' {
		return fmt.Errorf("%w: %s (edges): dtype %s, want an integer type", ErrBadInput, a.path, a.descr)
	}
	wrap := func(e int64, err error) error {
		return fmt.Errorf("%s (edges) edge %d: %w", path, e, err)
	}
	if a.shape[0] == 2 { // two rows: sources then destinations
		e := a.shape[1]
		b, err := openNPY(path)
		if err != nil {
			return err
		}
		defer b.Close()
		dst := make([]int64, 0, npyChunk)
		return a.streamInt64(0, e, false, func(off int64, src []int64) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			dst = dst[:0]
			if err := b.streamInt64(e+off, int64(len(src)), false, func(_ int64, xs []int64) error {
				dst = append(dst, xs...)
				return nil
			}); err != nil {
				return err
			}
			for i := range src {
				if err := add(src[i], dst[i]); err != nil {
					return wrap(off+int64(i), err)
				}
			}
			return nil
		})
	}
	return a.streamInt64(0, 2*a.shape[0], false, func(off int64, xs []int64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := 0; i+1 < len(xs); i += 2 {
			if err := add(xs[i], xs[i+1]); err != nil {
				return wrap((off+int64(i))/2, err)
			}
		}
		return nil
	})
}

// streamCSC streams CSC arrays node by node, checking indptr as it goes.
func streamCSC(ctx context.Context, indptrPath, indicesPath string, n int64, fn func(v int64, us []int64) error) error {
	ip, err := openNPY(indptrPath)
	if err != nil {
		return err
	}
	defer ip.Close()
	ix, err := openNPY(indicesPath)
	if err != nil {
		return err
	}
	defer ix.Close()
	if len(ip.shape) != 1 || ip.shape[0] != n+1 {
		return ip.badShape("indptr", fmt.Sprintf("(%d,) = nodes+1", n+1))
	}
	if len(ix.shape) != 1 {
		return ix.badShape("indices", "(E,)")
	}
	e := ix.shape[0]
	var us []int64
	r := &npyCursor{a: ix}
	prev := int64(0)
	v := int64(-1)
	return ip.streamInt64(0, n+1, false, func(off int64, ptrs []int64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, p := range ptrs {
			k := off + int64(i)
			if k == 0 && p != 0 {
				return fmt.Errorf("%w: %s (indptr): indptr[0] = %d, want 0", ErrBadInput, indptrPath, p)
			}
			if p < prev {
				return fmt.Errorf("%w: %s (indptr): not non-decreasing: indptr[%d] = %d > indptr[%d] = %d", ErrBadInput, indptrPath, k-1, prev, k, p)
			}
			if p > e {
				return fmt.Errorf("%w: %s (indptr): indptr[%d] = %d exceeds the %d indices in %s", ErrBadInput, indptrPath, k, p, e, indicesPath)
			}
			if k > 0 {
				us, err = r.next(p-prev, us[:0])
				if err != nil {
					return err
				}
				if err := fn(v, us); err != nil {
					return fmt.Errorf("%s: node %d: %w", indicesPath, v, err)
				}
			}
			prev = p
			v = k
		}
		if off+int64(len(ptrs)) == n+1 && prev != e {
			return fmt.Errorf("%w: %s (indptr): last entry %d, but %s holds %d indices", ErrBadInput, indptrPath, prev, indicesPath, e)
		}
		return nil
	})
}

// npyCursor reads an int array sequentially in arbitrary-sized pieces.
type npyCursor struct {
	a   *npyArray
	pos int64
	buf []int64
}

func (c *npyCursor) next(count int64, dst []int64) ([]int64, error) {
	for count > 0 {
		if len(c.buf) == 0 {
			take := min(int64(npyChunk), c.a.count()-c.pos)
			if take <= 0 {
				return nil, fmt.Errorf("%w: %s: ran out of elements", ErrBadInput, c.a.path)
			}
			if err := c.a.streamInt64(c.pos, take, false, func(_ int64, xs []int64) error {
				c.buf = append(c.buf[:0], xs...)
				return nil
			}); err != nil {
				return nil, err
			}
			c.pos += take
		}
		k := min(count, int64(len(c.buf)))
		dst = append(dst, c.buf[:k]...)
		c.buf = c.buf[k:]
		count -= k
	}
	return dst, nil
}

// copyCSC copies CSC arrays to indptr.bin/indices.bin, checking ranges and
// noting whether every list is sorted and duplicate-free.
func (j *importJob) copyCSC(ctx context.Context, indptrPath, indicesPath string, n int64) error {
	ipF, err := j.w.Create(IndptrFile)
	if err != nil {
		return err
	}
	ixF, err := j.w.Create(IndicesFile)
	if err != nil {
		return err
	}
	ipW := bufio.NewWriterSize(ipF, 1<<20)
	ixW := bufio.NewWriterSize(newSeqWriter(ixF), 1<<20)
	var edges, same, labeled int64
	sorted := true
	var b [8]byte
	ipW.Write(b[:]) // indptr[0] = 0
	err = streamCSC(ctx, indptrPath, indicesPath, n, func(v int64, us []int64) error {
		for i, u := range us {
			if uint64(u) >= uint64(n) {
				return fmt.Errorf("%w: in-neighbour %d out of range [0,%d)", ErrBadInput, u, n)
			}
			if i > 0 && u <= us[i-1] {
				sorted = false
			}
			if lu, lv := j.labels[u], j.labels[v]; lu >= 0 && lv >= 0 {
				labeled++
				if lu == lv {
					same++
				}
			}
		}
		edges += int64(len(us))
		le.PutUint64(b[:], uint64(edges))
		ipW.Write(b[:])
		_, err := ixW.Write(osutil.Bytes(us))
		return err
	})
	if err != nil {
		return err
	}
	if err := ipW.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", IndptrFile, err)
	}
	if err := ixW.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", IndicesFile, err)
	}
	j.meta.Edges = edges
	j.meta.SortedNeighbors = sorted
	if labeled > 0 {
		h := float64(same) / float64(labeled)
		j.meta.EdgeHomophily = &h
	}
	return nil
}

// readSplitNPY reads a split as node ids (1-D ints) or a boolean mask of
// length n.
func readSplitNPY(path string, n int64) ([]int64, error) {
	a, err := openNPY(path)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if len(a.shape) != 1 && !(len(a.shape) == 2 && a.shape[1] == 1) {
		return nil, a.badShape("split", "(K,) node ids or (N,) boolean mask")
	}
	var ids []int64
	if a.kind == 'b' {
		if a.shape[0] != n {
			return nil, fmt.Errorf("%w: %s (split mask): length %d, want nodes = %d", ErrBadInput, path, a.shape[0], n)
		}
		err = a.streamInt64(0, n, false, func(off int64, xs []int64) error {
			for i, x := range xs {
				if x != 0 {
					ids = append(ids, off+int64(i))
				}
			}
			return nil
		})
		return ids, err
	}
	err = a.streamInt64(0, a.shape[0], false, func(off int64, xs []int64) error {
		for i, x := range xs {
			if x < 0 || x >= n {
				return fmt.Errorf("%w: %s (split): entry %d = %d out of range [0,%d)", ErrBadInput, path, off+int64(i), x, n)
			}
		}
		ids = append(ids, xs...)
		return nil
	})
	return ids, err
}
