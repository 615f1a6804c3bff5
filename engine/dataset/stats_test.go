package dataset

import (
	"math"
	"slices"
	"testing"

	"outcore/internal/osutil"
)

// writeGraph writes a dataset with the given in-neighbour lists, labels
// and train split (one zero feature per node) and returns its directory.
func writeGraph(t *testing.T, name string, in [][]int64, labels []int32, classes int, train []int64) string {
	t.Helper()
	w, err := NewWriter(DatasetsDir(t.TempDir()), name, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	n := int64(len(in))
	indptr := []int64{0}
	var indices []int64
	for _, l := range in {
		indices = append(indices, l...)
		indptr = append(indptr, int64(len(indices)))
	}
	var labeled int64
	for _, l := range labels {
		if l >= 0 {
			labeled++
		}
	}
	files := map[string][]byte{
		IndptrFile: osutil.Bytes(indptr), IndicesFile: osutil.Bytes(indices),
		FeaturesFile: make([]byte, 4*n), LabelsFile: osutil.Bytes(labels),
		TrainFile: osutil.Bytes(train), ValFile: nil, TestFile: nil,
	}
	for f, b := range files {
		fh, err := w.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fh.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	d, err := w.Commit(Meta{Nodes: n, Edges: int64(len(indices)), FeatureDim: 1, Classes: classes,
		Labeled: labeled, Train: int64(len(train))})
	if err != nil {
		t.Fatal(err)
	}
	return d.Dir
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// A hand-built graph whose every statistic is worked out by hand: a
// triangle 0-1-2 (with 0↔1 stored both ways), a tail 2-3-4 and an
// isolated node 5. Edges u→v (u ∈ in(v)): 0→1, 1→0, 1→2, 2→0, 3→2, 4→3.
func TestStatsHandBuilt(t *testing.T) {
	in := [][]int64{{1, 2}, {0}, {1, 3}, {4}, {}, {}}
	labels := []int32{0, 0, 0, 1, 1, -1}
	dir := writeGraph(t, "hand", in, labels, 2, []int64{0})
	st, err := ComputeStats(dir, StatsOptions{Fanouts: []int{10, 10}, BatchSize: 1, Batches: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.Nodes != 6 || st.Edges != 6 {
		t.Fatalf("nodes, edges = %d, %d", st.Nodes, st.Edges)
	}
	// Undirected neighbourhoods: N(0)={1,2} c=1, N(1)={0,2} c=1,
	// N(2)={0,1,3} c=1/3 (only 0-1 joined; 0↔1 counted once), N(3)={2,4}
	// c=0, N(4)={3} c=0, N(5)={} c=0: mean 7/18.
	if !st.ClusteringExact || st.ClusteringNodes != 6 || !near(st.Clustering, 7.0/18, 1e-12) {
		t.Errorf("clustering = %v over %d nodes (exact %v), want 7/18 over 6", st.Clustering, st.ClusteringNodes, st.ClusteringExact)
	}
	// Labeled edges: 6, of which 3→2 joins different classes.
	if st.EdgeHomophily == nil || !near(*st.EdgeHomophily, 5.0/6, 1e-12) {
		t.Errorf("edge homophily = %v, want 5/6", st.EdgeHomophily)
	}
	// In-degrees 2,1,2,1,0,0; out-degrees 1,2,1,1,1,0.
	wantIn := DegreeStats{Min: 0, P25: 0, P50: 1, P75: 2, P90: 2, P99: 2, Max: 2, Mean: 1, Top1Share: 2.0 / 6}
	if st.InDegree != wantIn {
		t.Errorf("in-degree = %+v, want %+v", st.InDegree, wantIn)
	}
	if st.OutDegree.Max != 2 || st.OutDegree.Min != 0 || st.OutDegree.P50 != 1 {
		t.Errorf("out-degree = %+v, want min 0, median 1, max 2", st.OutDegree)
	}
	// In-degree below the first fanout (10): every node.
	if st.BelowFanout != 1 {
		t.Errorf("below fanout = %v, want 1", st.BelowFanout)
	}
	// Seed 0; hop 1 adds in(0)={1,2}; hop 2 expands 0,1,2 and adds 3.
	if b := st.Batch; b.SeedsFrom != "train" || !near(b.MeanShare, 4.0/6, 1e-12) || b.MinShare != b.MaxShare {
		t.Errorf("batch = %+v, want 4/6 every time", b)
	}
	c := st.Communities
	if c.Count != 2 || c.Labeled != 5 || c.Largest != 3 || c.Smallest != 2 || !near(c.LargestShare, 0.6, 1e-12) || !slices.Equal(c.Sizes, []int64{3, 2}) {
		t.Errorf("communities = %+v", c)
	}
	// Gaps |u-v|: five of 1, one of 2, over 6 nodes: median 1/6 (to 1/1024).
	if !near(st.IDDistanceP50, 1.0/6, 1.0/1024) {
		t.Errorf("id distance median = %v, want 1/6", st.IDDistanceP50)
	}

	// Fanout 1 from seed 0 adds exactly one of {1, 2}.
	st, err = ComputeStats(dir, StatsOptions{Fanouts: []int{1}, BatchSize: 1, Batches: 5})
	if err != nil {
		t.Fatal(err)
	}
	if b := st.Batch; !near(b.MinShare, 2.0/6, 1e-12) || !near(b.MaxShare, 2.0/6, 1e-12) {
		t.Errorf("fanout 1 batch = %+v, want 2/6", b)
	}
	// Fanout 2: nodes 1 and 3 have fewer in-neighbours.
	if st, _ := ComputeStats(dir, StatsOptions{Fanouts: []int{2}}); !near(st.BelowFanout, 4.0/6, 1e-12) {
		t.Errorf("below fanout 2 = %v, want 4/6", st.BelowFanout)
	}
}

// A clique stays fully clustered when its neighbourhoods are subsampled.
func TestStatsCliqueSubsampled(t *testing.T) {
	const n = 12
	in := make([][]int64, n)
	for v := range in {
		for u := range int64(n) {
			if u != int64(v) {
				in[v] = append(in[v], u)
			}
		}
	}
	dir := writeGraph(t, "clique", in, make([]int32, n), 1, nil)
	st, err := ComputeStats(dir, StatsOptions{MaxNeighbourhood: 4, ClusteringSamples: 5, BatchSize: 2, Fanouts: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Clustering != 1 || st.ClusteringNodes != 5 || st.ClusteringExact {
		t.Errorf("clustering = %v over %d (exact %v), want 1 over 5 sampled", st.Clustering, st.ClusteringNodes, st.ClusteringExact)
	}
	// No train split: seeds come from all nodes; 2 seeds + one neighbour
	// each (maybe the other seed, maybe shared): 2 to 4 nodes.
	if b := st.Batch; b.SeedsFrom != "all" || b.MinShare < 2.0/n || b.MaxShare > 4.0/n {
		t.Errorf("batch = %+v, want all, 2..4 nodes of %d", b, n)
	}
	if st.EdgeHomophily == nil || *st.EdgeHomophily != 1 {
		t.Errorf("homophily = %v, want 1 (one class)", st.EdgeHomophily)
	}
}

// On a generated graph the pass agrees with what the generator and
// Verify report, and a sampled clustering is close to the exact one.
func TestStatsGeneratedTiny(t *testing.T) {
	d := genTiny(t, DatasetsDir(t.TempDir()), "t", nil)
	exact, err := ComputeStats(d.Dir, StatsOptions{ClusteringSamples: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(d.Dir, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if exact.InDegree.Min != rep.MinInDegree || exact.InDegree.Max != rep.MaxInDegree || exact.OutDegree.Max != rep.MaxOutDegree {
		t.Errorf("degrees %+v / %+v disagree with verify %+v", exact.InDegree, exact.OutDegree, rep)
	}
	if exact.EdgeHomophily == nil || !near(*exact.EdgeHomophily, *d.Meta.EdgeHomophily, 1e-12) {
		t.Errorf("homophily %v, generator counted %v", exact.EdgeHomophily, *d.Meta.EdgeHomophily)
	}
	if !exact.ClusteringExact || exact.Clustering <= 0 || exact.Clustering >= 0.2 {
		t.Errorf("exact clustering = %v, want in (0, 0.2)", exact.Clustering)
	}
	sampled, err := ComputeStats(d.Dir, StatsOptions{ClusteringSamples: 2000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if sampled.ClusteringExact || !near(sampled.Clustering, exact.Clustering, 0.3*exact.Clustering+0.005) {
		t.Errorf("sampled clustering %v far from exact %v", sampled.Clustering, exact.Clustering)
	}
	// Scattered ids: neighbours' id gaps look uniform (median ≈ 1-1/√2).
	if !near(exact.IDDistanceP50, 1-1/math.Sqrt2, 0.03) {
		t.Errorf("id distance median = %v, want ≈ 0.293", exact.IDDistanceP50)
	}
	if c := exact.Communities; c.Count != 7 || c.Largest-c.Smallest > 1 && !d.Meta.Source.Generator.LabelSplitOnly {
		t.Errorf("communities = %+v, want 7 equal classes", c)
	}
	if b := exact.Batch; b.MeanShare <= 0 || b.MaxShare > 1 || b.MeanNodes < 1000 {
		t.Errorf("batch = %+v", b)
	}
}
