package dataset

import (
	"fmt"
	"io"
	"math"
	"os"

	"outcore/internal/osutil"
)

// VerifyOptions selects Verify's optional scans.
type VerifyOptions struct {
	// Features scans features.bin for NaN and ±Inf (reads the whole file).
	Features bool
}

// Report is what Verify measured on a dataset.
type Report struct {
	Meta Meta `json:"meta"`
	// In-degree statistics.
	MinInDegree  int64   `json:"min_in_degree"`
	MaxInDegree  int64   `json:"max_in_degree"`
	MeanInDegree float64 `json:"mean_in_degree"`
	ZeroInDegree int64   `json:"zero_in_degree"`
	// MaxOutDegree is the largest number of lists a node appears in.
	MaxOutDegree int64 `json:"max_out_degree"`
	// SelfLoops counts v in in(v).
	SelfLoops int64 `json:"self_loops"`
	// EdgeHomophily: share of edges (both endpoints labeled) whose endpoints
	// share a label; NaN when no edge has two labeled endpoints.
	EdgeHomophily float64 `json:"edge_homophily"`
	// SymmetryChecked is set when meta claims Undirected and Verify checked
	// that the edge multiset equals its reverse (by a 64-bit multiset hash).
	SymmetryChecked bool `json:"symmetry_checked"`
	// FeaturesChecked is set when features.bin was scanned for non-finite values.
	FeaturesChecked bool `json:"features_checked"`
}

// Verify runs Open's checks and then the full ones (one pass over
// indices.bin for both): splits are disjoint,
// free of duplicates and labeled; neighbour lists are sorted and duplicate-
// free when meta.json says so; an undirected graph stores every edge in both
// directions; and, with opt.Features, every feature is finite. Memory is
// O(Nodes) (labels, out-degrees, split marks), never O(Edges) or features.
// The first failure is returned wrapped in ErrCorrupt, naming the file.
func Verify(dir string, opt VerifyOptions) (*Report, error) {
	// OpenQuick plus the label and split scans; the index range check is
	// folded into the one pass over indices.bin below.
	d, err := OpenQuick(dir)
	if err != nil {
		return nil, err
	}
	if err := d.checkLabels(); err != nil {
		return nil, err
	}
	for _, s := range []string{SplitTrain, SplitVal, SplitTest} {
		if err := d.checkSplit(s); err != nil {
			return nil, err
		}
	}
	m := d.Meta
	r := &Report{Meta: m, MinInDegree: math.MaxInt64}
	labels, err := d.Labels()
	if err != nil {
		return nil, err
	}
	// Splits: disjoint, no duplicates, labeled.
	mark := make([]uint8, m.Nodes)
	for i, s := range []string{SplitTrain, SplitVal, SplitTest} {
		ids, err := d.Split(s)
		if err != nil {
			return nil, err
		}
		file, _, _ := d.splitFile(s)
		for j, v := range ids {
			if mark[v] != 0 {
				other := []string{SplitTrain, SplitVal, SplitTest}[mark[v]-1]
				if int(mark[v]) == i+1 {
					return nil, d.corrupt(file, "node %d listed twice (entry %d)", v, j)
				}
				return nil, d.corrupt(file, "node %d (entry %d) is also in the %s split", v, j, other)
			}
			mark[v] = uint8(i + 1)
			if labels[v] < 0 {
				return nil, d.corrupt(file, "node %d (entry %d) has no label", v, j)
			}
		}
	}
	mark = nil

	// Degrees, self-loops, sortedness, homophily, symmetry hash.
	out := make([]int32, m.Nodes)
	var same, labeledEdges int64
	var fwd, rev uint64
	v := int64(0)
	err = scanInt64(d.Path(IndicesFile), func(off int64, vals []int64) error {
		for i, u := range vals {
			e := off + int64(i)
			for e >= d.Indptr[v+1] {
				v++
			}
			if uint64(u) >= uint64(m.Nodes) {
				return d.corrupt(IndicesFile, "index out of range: indices[%d] = %d (in-neighbour of node %d), nodes = %d", e, u, v, m.Nodes)
			}
			out[u]++
			if u == v {
				r.SelfLoops++
			}
			// Pairs straddling chunk borders: checkChunkBoundariesSorted.
			if m.SortedNeighbors && i > 0 && e > d.Indptr[v] && u <= vals[i-1] {
				return d.corrupt(IndicesFile, "in-neighbours of node %d not strictly ascending at indices[%d] (%d after %d), meta.json says sorted", v, e, u, vals[i-1])
			}
			if labels[u] >= 0 && labels[v] >= 0 {
				labeledEdges++
				if labels[u] == labels[v] {
					same++
				}
			}
			if m.Undirected {
				fwd += mix64(mix64(uint64(u)) + uint64(v))
				rev += mix64(mix64(uint64(v)) + uint64(u))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.SortedNeighbors {
		if err := d.checkChunkBoundariesSorted(); err != nil {
			return nil, err
		}
	}
	if m.Undirected {
		if fwd != rev {
			return nil, d.corrupt(IndicesFile, "meta.json says undirected (both directions stored), but some edge u→v has no v→u")
		}
		r.SymmetryChecked = true
	}
	for x := int64(0); x < m.Nodes; x++ {
		deg := d.InDegree(x)
		r.MinInDegree = min(r.MinInDegree, deg)
		r.MaxInDegree = max(r.MaxInDegree, deg)
		if deg == 0 {
			r.ZeroInDegree++
		}
		r.MaxOutDegree = max(r.MaxOutDegree, int64(out[x]))
	}
	if m.Nodes == 0 {
		r.MinInDegree = 0
	} else {
		r.MeanInDegree = float64(m.Edges) / float64(m.Nodes)
	}
	r.EdgeHomophily = math.NaN()
	if labeledEdges > 0 {
		r.EdgeHomophily = float64(same) / float64(labeledEdges)
	}
	if opt.Features {
		if err := d.checkFeaturesFinite(); err != nil {
			return nil, err
		}
		r.FeaturesChecked = true
	}
	return r, nil
}

// checkChunkBoundariesSorted checks sortedness across scan-chunk borders,
// which the chunked loop in Verify cannot see.
func (d *Dataset) checkChunkBoundariesSorted() error {
	f, err := os.Open(d.Path(IndicesFile))
	if err != nil {
		return fmt.Errorf("open %s: %w", d.Path(IndicesFile), err)
	}
	defer f.Close()
	var pair [2]int64
	for e := int64(scanChunk); e < d.Meta.Edges; e += scanChunk {
		v := d.ownerOf(e)
		if e == d.Indptr[v] {
			continue
		}
		if _, err := f.ReadAt(osutil.Bytes(pair[:]), (e-1)*8); err != nil {
			return fmt.Errorf("read %s: %w", d.Path(IndicesFile), err)
		}
		if pair[1] <= pair[0] {
			return d.corrupt(IndicesFile, "in-neighbours of node %d not strictly ascending at indices[%d] (%d after %d), meta.json says sorted", v, e, pair[1], pair[0])
		}
	}
	return nil
}

// checkFeaturesFinite streams features.bin and fails at the first NaN/Inf.
func (d *Dataset) checkFeaturesFinite() error {
	p := d.Path(FeaturesFile)
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer f.Close()
	defer osutil.DropCache(f)
	buf := make([]float32, 1<<20)
	var off int64
	dim := int64(max(d.Meta.FeatureDim, 1))
	for {
		n, err := io.ReadFull(f, osutil.Bytes(buf))
		for i, x := range buf[:n/4] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				k := off + int64(i)
				return d.corrupt(FeaturesFile, "non-finite value %v at row %d, column %d", x, k/dim, k%dim)
			}
		}
		off += int64(n / 4)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
	}
}
