package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

func genTiny(t testing.TB, dir, name string, mod func(*GenConfig)) *Dataset {
	t.Helper()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(&cfg)
	}
	d, err := Generate(context.Background(), dir, name, cfg, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return d
}

func TestGenerateOpenRoundTrip(t *testing.T) {
	dataDir := t.TempDir()
	d := genTiny(t, DatasetsDir(dataDir), "t", nil)
	o, err := Open(d.Dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if o.Meta.Nodes != 8192 || o.Meta.FeatureDim != 32 || o.Meta.Classes != 7 {
		t.Fatalf("meta = %+v", o.Meta)
	}
	if !slices.Equal(o.Indptr, d.Indptr) || int64(len(o.Indptr)) != o.Meta.Nodes+1 {
		t.Fatalf("indptr differs between Generate and Open")
	}
	if o.Meta.Source.Kind != "generator" || o.Meta.Source.Generator == nil || o.Meta.Source.Generator.Seed != 1 {
		t.Fatalf("source = %+v", o.Meta.Source)
	}
	// By name, through List, and via Verify.
	if _, err := OpenByName(dataDir, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("OpenByName missing: %v", err)
	}
	if b, err := OpenByName(dataDir, "t"); err != nil || b.Meta.Edges != o.Meta.Edges {
		t.Fatalf("OpenByName: %v", err)
	}
	ms, err := List(dataDir)
	if err != nil || len(ms) != 1 || ms[0].Name != "t" {
		t.Fatalf("List = %v, %v", ms, err)
	}
	rep, err := Verify(d.Dir, VerifyOptions{Features: true})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if rep.Meta.Edges != o.Meta.Edges || rep.SelfLoops != 0 || math.Abs(rep.EdgeHomophily-*o.Meta.EdgeHomophily) > 1e-9 {
		t.Fatalf("report %+v disagrees with meta", rep)
	}
	// Degrees, splits, labels agree with meta.
	idx, err := o.LoadIndices()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(idx)) != o.Meta.Edges {
		t.Fatalf("indices %d, edges %d", len(idx), o.Meta.Edges)
	}
	var sum int64
	for v := int64(0); v < o.Meta.Nodes; v++ {
		sum += o.InDegree(v)
		nb := idx[o.Indptr[v]:o.Indptr[v+1]]
		if !slices.IsSorted(nb) {
			t.Fatalf("neighbours of %d not sorted", v)
		}
		for i := 1; i < len(nb); i++ {
			if nb[i] == nb[i-1] {
				t.Fatalf("duplicate neighbour %d of %d", nb[i], v)
			}
		}
		if _, ok := slices.BinarySearch(nb, v); ok {
			t.Fatalf("self-loop at %d", v)
		}
	}
	if sum != o.Meta.Edges {
		t.Fatalf("degree sum %d != edges %d", sum, o.Meta.Edges)
	}
	mean := float64(o.Meta.Edges) / float64(o.Meta.Nodes)
	if math.Abs(mean-10)/10 > 0.10 {
		t.Errorf("mean in-degree %.2f, configured 10 (±10%%)", mean)
	}
	tr, _ := o.TrainIDs()
	va, _ := o.ValIDs()
	te, _ := o.TestIDs()
	n := float64(o.Meta.Nodes)
	for _, c := range []struct {
		name string
		got  int
		frac float64
	}{{"train", len(tr), 0.6}, {"val", len(va), 0.2}, {"test", len(te), 0.2}} {
		if math.Abs(float64(c.got)/n-c.frac) > 0.03 {
			t.Errorf("%s share %.3f, configured %.2f", c.name, float64(c.got)/n, c.frac)
		}
	}
	// Features: rows are finite, reading a row works.
	rows, err := o.ReadFeatureRows(100, 3)
	if err != nil || len(rows) != 3*32 {
		t.Fatalf("ReadFeatureRows: %v (%d values)", err, len(rows))
	}
}

func fileHash(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, f := range DataFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = sha256.Sum256(b)
	}
	return out
}

func TestGenerateDeterministic(t *testing.T) {
	dir := t.TempDir()
	a := genTiny(t, dir, "a", func(c *GenConfig) { c.Workers = 1 })
	b := genTiny(t, dir, "b", func(c *GenConfig) { c.Workers = 3 })
	c := genTiny(t, dir, "c", func(c *GenConfig) { c.Seed = 2 })
	ha, hb, hc := fileHash(t, a.Dir), fileHash(t, b.Dir), fileHash(t, c.Dir)
	for _, f := range DataFiles {
		if ha[f] != hb[f] {
			t.Errorf("%s differs between runs with the same seed (1 vs 3 workers)", f)
		}
	}
	if ha[FeaturesFile] == hc[FeaturesFile] || ha[IndicesFile] == hc[IndicesFile] {
		t.Errorf("seed 2 produced the same bytes as seed 1")
	}
}

// TestGenerateHomophily: the measured share of same-class edges matches the
// configured homophily within ±0.03 (tiny has ~80k edges, so sampling noise
// is ~0.0015; dedup and self-loop removal shift it by < 0.01).
func TestGenerateHomophily(t *testing.T) {
	dir := t.TempDir()
	hs := []float64{0.1, 0.5, 0.8, 0.95}
	if testing.Short() {
		hs = []float64{0.1, 0.8} // all four run in the non-short pass
	}
	for i, h := range hs {
		d := genTiny(t, dir, "h"+string(rune('0'+i)), func(c *GenConfig) { c.Homophily = h })
		labels, err := d.Labels()
		if err != nil {
			t.Fatal(err)
		}
		idx, err := d.LoadIndices()
		if err != nil {
			t.Fatal(err)
		}
		var same int64
		for v := int64(0); v < d.Meta.Nodes; v++ {
			for _, u := range idx[d.Indptr[v]:d.Indptr[v+1]] {
				if labels[u] == labels[v] {
					same++
				}
			}
		}
		got := float64(same) / float64(len(idx))
		if math.Abs(got-h) > 0.03 {
			t.Errorf("homophily %.2f: measured %.4f", h, got)
		}
		if d.Meta.EdgeHomophily == nil || math.Abs(*d.Meta.EdgeHomophily-got) > 1e-9 {
			t.Errorf("meta edge_homophily %v, measured %.4f", d.Meta.EdgeHomophily, got)
		}
	}
}

// TestGenerateHeavyTail: in- and out-degrees are heavy-tailed. Criteria:
// max ≥ 20× mean, and the top 1% of nodes hold ≥ 10% of the edges (a
// Poisson graph of the same mean has max ≈ 2.5× mean and top-1% share ≈ 2%).
func TestGenerateHeavyTail(t *testing.T) {
	d := genTiny(t, t.TempDir(), "t", nil)
	idx, err := d.LoadIndices()
	if err != nil {
		t.Fatal(err)
	}
	n := d.Meta.Nodes
	in := make([]int64, n)
	out := make([]int64, n)
	for v := int64(0); v < n; v++ {
		in[v] = d.InDegree(v)
	}
	for _, u := range idx {
		out[u]++
	}
	mean := float64(len(idx)) / float64(n)
	for _, c := range []struct {
		name string
		deg  []int64
	}{{"in", in}, {"out", out}} {
		s := slices.Clone(c.deg)
		sort.Slice(s, func(i, j int) bool { return s[i] > s[j] })
		var top int64
		for _, x := range s[:n/100] {
			top += x
		}
		share := float64(top) / float64(len(idx))
		t.Logf("%s-degree: mean %.2f max %d top-1%% share %.3f", c.name, mean, s[0], share)
		if float64(s[0]) < 20*mean {
			t.Errorf("%s-degree max %d < 20× mean %.2f", c.name, s[0], mean)
		}
		if share < 0.10 {
			t.Errorf("%s-degree: top 1%% of nodes hold %.3f of edges, want ≥ 0.10", c.name, share)
		}
	}
}

// TestGenerateFeaturesCentroid: features are class centroid + N(0,1) noise:
// per-class means differ, and the within-class variance is ≈ 1.
func TestGenerateFeaturesCentroid(t *testing.T) {
	d := genTiny(t, t.TempDir(), "t", nil)
	labels, _ := d.Labels()
	x, err := d.ReadFeatureRows(0, d.Meta.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	dim := d.Meta.FeatureDim
	cls := d.Meta.Classes
	mean := make([]float64, cls*dim)
	cnt := make([]float64, cls)
	for v, l := range labels {
		cnt[l]++
		for j := 0; j < dim; j++ {
			mean[int(l)*dim+j] += float64(x[v*dim+j])
		}
	}
	for k := 0; k < cls; k++ {
		for j := 0; j < dim; j++ {
			mean[k*dim+j] /= cnt[k]
		}
	}
	var ss, nss float64
	for v, l := range labels {
		for j := 0; j < dim; j++ {
			e := float64(x[v*dim+j]) - mean[int(l)*dim+j]
			ss += e * e
			nss++
		}
	}
	if v := ss / nss; math.Abs(v-1) > 0.05 {
		t.Errorf("within-class variance %.3f, want 1 ± 0.05", v)
	}
	// Mean pairwise centroid distance ≈ Separation (2.0); loose bound since
	// there are only 21 pairs.
	var dist float64
	var pairs int
	for a := 0; a < cls; a++ {
		for b := a + 1; b < cls; b++ {
			var s float64
			for j := 0; j < dim; j++ {
				e := mean[a*dim+j] - mean[b*dim+j]
				s += e * e
			}
			dist += math.Sqrt(s)
			pairs++
		}
	}
	if m := dist / float64(pairs); m < 1.2 || m > 2.8 {
		t.Errorf("mean centroid distance %.2f, want ≈ 2", m)
	}
}

func TestGenerateRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	genTiny(t, dir, "t", nil)
	cfg, _ := Preset("tiny")
	if _, err := Generate(context.Background(), dir, "t", cfg, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("second Generate: %v, want ErrExists", err)
	}
	cfg.Seed = 9
	d, err := GenerateWith(context.Background(), dir, "t", cfg, GenOptions{Force: true})
	if err != nil {
		t.Fatalf("forced Generate: %v", err)
	}
	if d.Meta.Source.Generator.Seed != 9 {
		t.Fatalf("forced Generate kept the old dataset")
	}
	assertNoTemp(t, dir)
}

func TestGenerateBadConfig(t *testing.T) {
	base, _ := Preset("tiny")
	for _, c := range []struct {
		name string
		mod  func(*GenConfig)
	}{
		{"one class", func(c *GenConfig) { c.Classes = 1 }},
		{"homophily > 1", func(c *GenConfig) { c.Homophily = 1.5 }},
		{"fractions > 1", func(c *GenConfig) { c.TrainFrac = 0.9 }},
		{"dim 0", func(c *GenConfig) { c.FeatureDim = 0 }},
		{"exponent 1", func(c *GenConfig) { c.DegreeExponent = 1 }},
		{"nan", func(c *GenConfig) { c.Homophily = math.NaN() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := base
			c.mod(&cfg)
			dir := t.TempDir()
			if _, err := Generate(context.Background(), dir, "x", cfg, nil); !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want ErrConfig", err)
			}
			assertNoTemp(t, dir)
		})
	}
	if _, err := Generate(context.Background(), t.TempDir(), "../x", base, nil); !errors.Is(err, ErrBadName) {
		t.Fatalf("bad name: %v", err)
	}
}

func TestGenerateCancelled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg, _ := Preset("tiny")
	if _, err := Generate(ctx, dir, "t", cfg, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	assertNoTemp(t, dir)
}

func TestGenerateProgress(t *testing.T) {
	var buf bytes.Buffer
	cfg, _ := Preset("tiny")
	if _, err := Generate(context.Background(), t.TempDir(), "t", cfg, &buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("100.0%")) {
		t.Fatalf("progress output %q lacks 100.0%%", buf.String())
	}
}

// assertNoTemp fails if anything but committed datasets is left in dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name()[0] == '.' {
			t.Errorf("left behind %s", de.Name())
		}
	}
}

func TestFeistelIsPermutation(t *testing.T) {
	for _, n := range []uint64{2, 3, 7, 100, 1000, 4097} {
		p := newFeistel(n, 42)
		seen := make([]bool, n)
		for x := uint64(0); x < n; x++ {
			y := p.fwd(x)
			if y >= n || seen[y] {
				t.Fatalf("n=%d: fwd(%d)=%d repeats or out of range", n, x, y)
			}
			seen[y] = true
			if p.inv(y) != x {
				t.Fatalf("n=%d: inv(fwd(%d)) = %d", n, x, p.inv(y))
			}
		}
	}
}

func TestNormTable(t *testing.T) {
	var s, ss float64
	for _, z := range normTable {
		s += float64(z)
		ss += float64(z) * float64(z)
	}
	n := float64(len(normTable))
	if math.Abs(s/n) > 1e-6 || math.Abs(ss/n-1) > 2e-3 {
		t.Fatalf("table mean %.2g variance %.5f", s/n, ss/n)
	}
}

// TestGenerateLabelsLearnable: labels are predictable from neighbours and
// features carry a weaker, independent signal, so a GNN has something to
// learn that an MLP alone cannot fully get. Measured on tiny (7 classes,
// chance 0.14): majority vote of in-neighbour labels, nearest class mean of
// a node's own features, and nearest class mean of own + mean neighbour
// features (one round of SAGE-like aggregation). Class means come from the
// train split; accuracy is measured on the test split.
func TestGenerateLabelsLearnable(t *testing.T) {
	t.Run("default", func(t *testing.T) { labelsLearnable(t, genTiny(t, t.TempDir(), "t", nil)) })
	// The structure options keep features correlated with labels.
	t.Run("structured", func(t *testing.T) {
		labelsLearnable(t, genTiny(t, t.TempDir(), "t", func(c *GenConfig) {
			c.CommunitySizeExponent, c.IDLocality, c.LocalShare = 1, true, 0.3
		}))
	})
}

func labelsLearnable(t *testing.T, d *Dataset) {
	labels, _ := d.Labels()
	idx, _ := d.LoadIndices()
	x, _ := d.ReadFeatureRows(0, d.Meta.Nodes)
	tr, _ := d.TrainIDs()
	te, _ := d.TestIDs()
	dim, cls := d.Meta.FeatureDim, d.Meta.Classes
	agg := make([]float64, len(x)) // own + mean of in-neighbours
	for v := int64(0); v < d.Meta.Nodes; v++ {
		nb := idx[d.Indptr[v]:d.Indptr[v+1]]
		for j := 0; j < dim; j++ {
			var s float64
			for _, u := range nb {
				s += float64(x[int(u)*dim+j])
			}
			agg[int(v)*dim+j] = float64(x[int(v)*dim+j]) + s/float64(max(len(nb), 1))
		}
	}
	nearest := func(feat func(v int64, j int) float64) float64 {
		mean := make([]float64, cls*dim)
		cnt := make([]float64, cls)
		for _, v := range tr {
			l := int(labels[v])
			cnt[l]++
			for j := 0; j < dim; j++ {
				mean[l*dim+j] += feat(v, j)
			}
		}
		for k := range mean {
			mean[k] /= cnt[k/dim]
		}
		var ok int
		for _, v := range te {
			best, bd := -1, math.Inf(1)
			for k := 0; k < cls; k++ {
				var s float64
				for j := 0; j < dim; j++ {
					e := feat(v, j) - mean[k*dim+j]
					s += e * e
				}
				if s < bd {
					best, bd = k, s
				}
			}
			if best == int(labels[v]) {
				ok++
			}
		}
		return float64(ok) / float64(len(te))
	}
	own := nearest(func(v int64, j int) float64 { return float64(x[int(v)*dim+j]) })
	both := nearest(func(v int64, j int) float64 { return agg[int(v)*dim+j] })
	var vote int
	for _, v := range te {
		c := make([]int, cls)
		for _, u := range idx[d.Indptr[v]:d.Indptr[v+1]] {
			c[labels[u]]++
		}
		if slices.Index(c, slices.Max(c)) == int(labels[v]) {
			vote++
		}
	}
	voteAcc := float64(vote) / float64(len(te))
	t.Logf("test accuracy: own features %.3f, own+neighbour features %.3f, neighbour-label vote %.3f (chance %.3f)", own, both, voteAcc, 1/float64(cls))
	if own < 0.25 || own > 0.85 {
		t.Errorf("own-feature accuracy %.3f: features should be informative but not sufficient", own)
	}
	if both < own+0.1 {
		t.Errorf("aggregating neighbours (%.3f) should beat own features (%.3f) by ≥ 0.1", both, own)
	}
	if voteAcc < 0.8 {
		t.Errorf("neighbour-label vote accuracy %.3f, want ≥ 0.8 at homophily 0.8", voteAcc)
	}
}
