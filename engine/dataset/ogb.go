package dataset

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"outcore/internal/osutil"
)

// ImportOGB imports an Open Graph Benchmark node-property dataset from its
// raw layout under srcDir (as unpacked from the OGB zip, e.g. ogbn-arxiv/):
//
//	raw/edge.csv.gz           "src,dst" per line (edge_index columns)
//	raw/node-feat.csv.gz      D comma-separated floats per line, line v = node v
//	raw/node-label.csv.gz     one label per line ("nan" or empty = unlabeled)
//	raw/num-node-list.csv.gz  node count (optional; else the feature line count)
//	split/<name>/{train,valid,test}.csv.gz   one node id per line
//
// Uncompressed ".csv" files are accepted too. src is an in-neighbour of dst;
// with opt.Undirected both directions are stored (OGB's add_inverse_edge
// datasets, e.g. ogbn-products, need it). When split/ holds several
// subdirectories, opt.Split names the one to use. Every file is streamed;
// edges go through the external sort.
func ImportOGB(ctx context.Context, datasetsDir, name, srcDir string, opt ImportOptions) (*Dataset, error) {
	raw := filepath.Join(srcDir, "raw")
	if st, err := os.Stat(raw); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: %s has no raw/ directory (want the OGB layout raw/edge.csv.gz, raw/node-feat.csv.gz, …)", ErrBadInput, srcDir)
	}
	w, err := NewWriter(datasetsDir, name, opt.Force)
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	job := &importJob{w: w, began: time.Now(), progress: opt.Progress}
	job.meta.Undirected = opt.Undirected
	abs, _ := filepath.Abs(srcDir)
	job.meta.Source = Source{Kind: "ogb", Path: abs}
	input := func(p string) {
		rel, _ := filepath.Rel(srcDir, p)
		job.meta.Source.Inputs = append(job.meta.Source.Inputs, rel)
	}

	// Node count, when given.
	n := int64(-1)
	if p, err := csvPath(raw, "num-node-list"); err == nil {
		input(p)
		if err := scanCSV(p, func(line int, s string) error {
			if line == 1 {
				n, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
				if err != nil || n < 1 || n > MaxImportNodes {
					return fmt.Errorf("node count %q, want 1..%d", s, int64(MaxImportNodes))
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}

	// Features.
	fp, err := csvPath(raw, "node-feat")
	if err != nil {
		return nil, err
	}
	input(fp)
	ff, err := w.Create(FeaturesFile)
	if err != nil {
		return nil, err
	}
	fw := bufio.NewWriterSize(newSeqWriter(ff), 1<<20)
	dim := -1
	var rows int64
	var row []float32
	err = scanCSV(fp, func(line int, s string) error {
		if line%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		var err error
		if row, err = parseOGBFeatures(s, dim, row[:0]); err != nil {
			return err
		}
		if dim < 0 {
			dim = len(row)
		}
		if err := checkFinite(opt.AllowNonFinite, fp, row, rows, dim); err != nil {
			return err
		}
		if rows >= MaxImportNodes {
			return fmt.Errorf("more than %d feature rows", int64(MaxImportNodes))
		}
		rows++
		_, err = fw.Write(osutil.Bytes(row))
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := fw.Flush(); err != nil {
		return nil, fmt.Errorf("write %s: %w", FeaturesFile, err)
	}
	if n < 0 {
		n = rows
	}
	if rows != n || n == 0 {
		return nil, fmt.Errorf("%w: %s: %d feature rows for %d nodes", ErrBadInput, fp, rows, n)
	}
	job.meta.FeatureDim = dim

	// Labels.
	job.labels = make([]int32, n)
	maxLabel := int32(-1)
	lp, err := csvPath(raw, "node-label")
	if err != nil {
		return nil, err
	}
	input(lp)
	var nl int64
	err = scanCSV(lp, func(line int, s string) error {
		if nl >= n {
			return fmt.Errorf("more label lines than the %d nodes", n)
		}
		l, err := parseOGBLabel(s)
		if err != nil {
			return err
		}
		job.labels[nl] = l
		maxLabel = max(maxLabel, l)
		nl++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if nl != n {
		return nil, fmt.Errorf("%w: %s: %d labels for %d nodes", ErrBadInput, lp, nl, n)
	}
	job.meta.Classes = int(maxLabel) + 1

	// Edges.
	ep, err := csvPath(raw, "edge")
	if err != nil {
		return nil, err
	}
	input(ep)
	job.sorter, err = newEdgeSorter(w.Dir(), n, opt.SortBudget, !opt.KeepSelfLoops)
	if err != nil {
		return nil, err
	}
	err = scanCSV(ep, func(line int, s string) error {
		if line%65536 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		u, v, err := parseOGBEdge(s)
		if err != nil {
			return err
		}
		if err := job.sorter.Add(u, v); err != nil {
			return err
		}
		if opt.Undirected && u != v {
			return job.sorter.Add(v, u)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if opt.Undirected {
		job.meta.Source.Notes = append(job.meta.Source.Notes, "stored undirected: every edge.csv edge in both directions, duplicates dropped")
	}

	// Split.
	switch opt.Split {
	case "none":
		job.meta.Source.Split = "none"
	case "random":
		tr, va, te, err := opt.splitFracs()
		if err != nil {
			return nil, err
		}
		job.splits = randomSplit(job.labels, tr, va, te, max(opt.Seed, 1))
		job.meta.Source.Split = fmt.Sprintf("random %.2f/%.2f/%.2f seed %d", tr, va, te, max(opt.Seed, 1))
	default:
		dir, err := ogbSplitDir(srcDir, opt.Split)
		if err != nil {
			return nil, err
		}
		for i, s := range []string{"train", "valid", "test"} {
			p, err := csvPath(dir, s)
			if err != nil {
				return nil, err
			}
			input(p)
			err = scanCSV(p, func(line int, t string) error {
				t = strings.TrimSpace(t)
				if t == "" {
					return nil
				}
				v, err := strconv.ParseInt(t, 10, 64)
				if err != nil || v < 0 || v >= n {
					return fmt.Errorf("node id %q not in [0,%d)", t, n)
				}
				job.splits[i] = append(job.splits[i], v)
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		job.meta.Source.Split = "ogb split/" + filepath.Base(dir)
	}
	d, err := job.finish()
	if err != nil {
		return nil, fmt.Errorf("import ogb %s: %w", srcDir, err)
	}
	return d, nil
}

// parseOGBFeatures parses one line of node-feat.csv (comma-separated
// float32 values), appending to row; dim is line 1's count (-1 before it).
func parseOGBFeatures(s string, dim int, row []float32) ([]float32, error) {
	fields := strings.Split(s, ",")
	if dim >= 0 && len(fields) != dim {
		return row, fmt.Errorf("%d values, but line 1 has %d", len(fields), dim)
	}
	if len(fields) > 1<<20 {
		return row, fmt.Errorf("%d values, more than 2^20", len(fields))
	}
	for k, f := range fields {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 32)
		if err != nil {
			return row, fmt.Errorf("value %d = %q %s", k+1, f, numErr(err))
		}
		row = append(row, float32(x))
	}
	return row, nil
}

// parseOGBLabel parses one line of node-label.csv: a non-negative integer
// up to 2^30, or "nan"/empty for an unlabeled node (-1).
func parseOGBLabel(s string) (int32, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "nan") {
		return -1, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != math.Trunc(x) || x < 0 || x > 1<<30 {
		return 0, fmt.Errorf("label %q is not a non-negative integer (or nan)", s)
	}
	return int32(x), nil
}

// parseOGBEdge parses one line of edge.csv, "src,dst".
func parseOGBEdge(s string) (u, v int64, err error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, fmt.Errorf("want src,dst")
	}
	u, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	v, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("want two integers src,dst, got %q", s)
	}
	return u, v, nil
}

// ogbSplitDir picks split/<name>: the named one, or the only one.
func ogbSplitDir(srcDir, name string) (string, error) {
	root := filepath.Join(srcDir, "split")
	if name != "" {
		p := filepath.Join(root, name)
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%w: no split directory %s", ErrBadInput, p)
		}
		return p, nil
	}
	des, err := os.ReadDir(root)
	if err != nil {
		return "", fmt.Errorf("%w: %v (use --split random or none for a dataset without split/)", ErrBadInput, err)
	}
	var dirs []string
	for _, de := range des {
		if de.IsDir() {
			dirs = append(dirs, de.Name())
		}
	}
	sort.Strings(dirs)
	switch len(dirs) {
	case 0:
		return "", fmt.Errorf("%w: %s has no split subdirectory", ErrBadInput, root)
	case 1:
		return filepath.Join(root, dirs[0]), nil
	}
	return "", fmt.Errorf("%w: %s has several splits (%s); choose one with --split", ErrBadInput, root, strings.Join(dirs, ", "))
}

// csvPath finds dir/base.csv.gz or dir/base.csv.
func csvPath(dir, base string) (string, error) {
	for _, ext := range []string{".csv.gz", ".csv"} {
		p := filepath.Join(dir, base+ext)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: missing %s", ErrBadInput, filepath.Join(dir, base+".csv.gz"))
}

// scanCSV streams the lines of a .csv or .csv.gz file (see scanLines).
func scanCSV(path string, fn func(line int, s string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBadInput, path, err)
		}
		defer zr.Close()
		r = zr
	}
	err = scanReader(path, r, fn)
	if err != nil && errors.Is(err, gzip.ErrChecksum) {
		return fmt.Errorf("%w: %s: %v", ErrBadInput, path, err)
	}
	return err
}
