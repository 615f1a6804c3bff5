package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"outcore/internal/osutil"
)

// ImportOptions are shared by the importers.
type ImportOptions struct {
	// Force replaces an existing dataset of the same name.
	Force bool
	// Progress receives status lines (nil = silent).
	Progress io.Writer
	// Undirected stores every input edge in both directions (npy, ogb;
	// LINQS citation graphs are always treated as undirected).
	Undirected bool
	// KeepSelfLoops keeps input self-loops (dropped and counted by default).
	KeepSelfLoops bool
	// Split selects the train/val/test split: "" (the source's own split if
	// it has one, else random), "random", or "none". Importers may accept
	// more (LINQS: "planetoid").
	Split string
	// TrainFrac, ValFrac, TestFrac and Seed configure a random split over
	// labeled nodes (defaults 0.6/0.2/0.2, seed 1).
	TrainFrac, ValFrac, TestFrac float64
	Seed                         uint64
	// SortBudget is the number of edges the external sort holds in memory
	// (0 = 4 Mi edges, 64 MiB).
	SortBudget int64
	// AllowNonFinite imports NaN and ±Inf features. By default the first
	// one is an ErrBadInput naming its row and column: a model trained on
	// them learns nothing, and `outcore data verify --features` rejects the
	// dataset afterwards.
	AllowNonFinite bool
}

// MaxImportNodes bounds the node count of an import: importers hold O(N)
// arrays (labels, degree counts), and a header or count beyond this is
// taken for a crafted or corrupt input rather than allocated.
const MaxImportNodes = 1 << 32

// numErr says why strconv.ParseFloat refused a value.
func numErr(err error) string {
	if errors.Is(err, strconv.ErrRange) {
		return "is out of float32 range"
	}
	return "is not a number"
}

// checkFinite returns an error naming the first NaN or ±Inf of a chunk of
// feature rows (row0 is the chunk's first row) unless allowed.
func checkFinite(allow bool, path string, xs []float32, row0 int64, dim int) error {
	if allow {
		return nil
	}
	for i, x := range xs {
		if x-x != 0 { // NaN or ±Inf
			return fmt.Errorf("%w: %s: feature at row %d, column %d is %v; features must be finite (`outcore data verify --features` rejects them), or import with --allow-nonfinite",
				ErrBadInput, path, row0+int64(i/dim), i%dim, x)
		}
	}
	return nil
}

func (o *ImportOptions) splitFracs() (float64, float64, float64, error) {
	tr, va, te := o.TrainFrac, o.ValFrac, o.TestFrac
	if tr == 0 && va == 0 && te == 0 {
		tr, va, te = 0.6, 0.2, 0.2
	}
	if tr < 0 || va < 0 || te < 0 || tr+va+te > 1+1e-9 {
		return 0, 0, 0, fmt.Errorf("%w: split fractions %g/%g/%g must be ≥ 0 and sum to ≤ 1", ErrConfig, tr, va, te)
	}
	return tr, va, te, nil
}

// randomSplit assigns each labeled node to train/val/test with the given
// probabilities, deterministically from seed.
func randomSplit(labels []int32, tr, va, te float64, seed uint64) [3][]int64 {
	var out [3][]int64
	for v, l := range labels {
		if l < 0 {
			continue
		}
		r := newStream(seed, uint64(v), streamGraph)
		switch u := r.float64(); {
		case u < tr:
			out[0] = append(out[0], int64(v))
		case u < tr+va:
			out[1] = append(out[1], int64(v))
		case u < tr+va+te:
			out[2] = append(out[2], int64(v))
		}
	}
	return out
}

// importJob collects what an importer produced and commits it.
type importJob struct {
	w        *Writer
	meta     Meta
	labels   []int32
	splits   [3][]int64
	sorter   *edgeSorter
	began    time.Time
	progress io.Writer
}

// finish writes labels and splits, sorts the edges into CSC, computes the
// edge homophily and commits. Splits must be disjoint, duplicate-free,
// in range and labeled; violations are ErrBadInput.
func (j *importJob) finish() (*Dataset, error) {
	m := &j.meta
	m.Nodes = int64(len(j.labels))
	splitNames := [3]string{SplitTrain, SplitVal, SplitTest}
	mark := make([]uint8, m.Nodes)
	for i := range j.splits {
		ids := j.splits[i]
		slices.Sort(ids)
		for k, v := range ids {
			if v < 0 || v >= m.Nodes {
				return nil, fmt.Errorf("%w: %s split: node %d out of range [0,%d)", ErrBadInput, splitNames[i], v, m.Nodes)
			}
			if k > 0 && ids[k-1] == v {
				return nil, fmt.Errorf("%w: %s split lists node %d twice", ErrBadInput, splitNames[i], v)
			}
			if mark[v] != 0 {
				return nil, fmt.Errorf("%w: node %d is in both the %s and the %s split", ErrBadInput, v, splitNames[mark[v]-1], splitNames[i])
			}
			if j.labels[v] < 0 {
				return nil, fmt.Errorf("%w: %s split: node %d has no label", ErrBadInput, splitNames[i], v)
			}
			mark[v] = uint8(i + 1)
		}
	}
	mark = nil
	m.Train, m.Val, m.Test = int64(len(j.splits[0])), int64(len(j.splits[1])), int64(len(j.splits[2]))
	for _, l := range j.labels {
		if l >= 0 {
			m.Labeled++
		}
		if int(l) >= m.Classes {
			return nil, fmt.Errorf("%w: label %d ≥ classes %d", ErrBadInput, l, m.Classes)
		}
	}
	lf, err := j.w.Create(LabelsFile)
	if err != nil {
		return nil, err
	}
	if _, err := lf.Write(osutil.Bytes(j.labels)); err != nil {
		return nil, fmt.Errorf("write %s: %w", LabelsFile, err)
	}
	for i, f := range []string{TrainFile, ValFile, TestFile} {
		fh, err := j.w.Create(f)
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriterSize(fh, 1<<20)
		if _, err := bw.Write(osutil.Bytes(j.splits[i])); err != nil {
			return nil, fmt.Errorf("write %s: %w", f, err)
		}
		if err := bw.Flush(); err != nil {
			return nil, fmt.Errorf("write %s: %w", f, err)
		}
	}
	if j.sorter != nil {
		if j.progress != nil {
			fmt.Fprintf(j.progress, "sorting %d edges by destination…\n", j.sorter.added)
		}
		j.sorter.labels = j.labels
		res, err := j.sorter.Finish(j.w)
		if err != nil {
			return nil, err
		}
		m.Edges = res.Edges
		m.SortedNeighbors = true
		m.Source.DuplicateEdges += res.Duplicates
		m.Source.SelfLoops += res.SelfLoops
		if res.LabeledEdges > 0 {
			h := float64(res.SameLabelEdges) / float64(res.LabeledEdges)
			m.EdgeHomophily = &h
		}
	}
	return j.w.Commit(*m)
}
