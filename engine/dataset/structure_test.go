package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// The presets that existed before the structure options keep generating
// what they did: no option set, nothing new in their meta.json.
func TestPresetsWithoutStructure(t *testing.T) {
	for _, name := range []string{"tiny", "small", "medium", "large", "papers-like", "papers-reach"} {
		c, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if c.Structured() {
			t.Errorf("%s: structure options set: %+v", name, c)
		}
		b, err := json.Marshal(c.resolved())
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{`"community_size_exponent"`, `"id_locality"`, `"local_share"`, `"local_window"`, `"local_density"`, `"structured"`} {
			if strings.Contains(string(b), key) {
				t.Errorf("%s: meta.json's generator config names %s: %s", name, key, b)
			}
		}
	}
	for _, name := range []string{"papers-struct", "products-struct"} {
		c, err := Preset(name)
		if err != nil || !c.Structured() || c.Validate() != nil {
			t.Errorf("%s: %+v, %v, valid: %v", name, c, err, c.Validate())
		}
	}
}

func TestCommunitySizes(t *testing.T) {
	for _, c := range []struct {
		n     uint64
		k     int
		s     float64
		want  []uint64
		ratio float64 // sizes[0]/sizes[k-1] wanted within 2%, 0 = skip
	}{
		{100, 4, 0, []uint64{25, 25, 25, 25}, 0},
		{10, 4, 0, []uint64{3, 3, 2, 2}, 0},
		{4, 4, 3, []uint64{1, 1, 1, 1}, 0},
		{7, 3, 5, nil, 0},
		{1_000_000, 10, 1, nil, 10},
		{1_000_000, 5, 2, nil, 25},
	} {
		got := communitySizes(c.n, c.k, c.s)
		var sum uint64
		for i, x := range got {
			sum += x
			if x == 0 || i > 0 && x > got[i-1] {
				t.Errorf("%+v: sizes %v must be ≥ 1 and non-increasing", c, got)
			}
		}
		if sum != c.n || len(got) != c.k {
			t.Errorf("%+v: sizes %v sum to %d over %d classes", c, got, sum, len(got))
		}
		if c.want != nil && !slices.Equal(got, c.want) {
			t.Errorf("%+v: sizes %v, want %v", c, got, c.want)
		}
		if r := float64(got[0]) / float64(got[c.k-1]); c.ratio > 0 && math.Abs(r/c.ratio-1) > 0.02 {
			t.Errorf("%+v: largest/smallest = %.2f, want %.0f", c, r, c.ratio)
		}
	}
}

// What each structure option is for, measured by ComputeStats on tiny:
// homophily still the configured share, Zipf community sizes, clustering
// from local draws, small id gaps with id locality.
func TestGenerateStructured(t *testing.T) {
	dir := DatasetsDir(t.TempDir())
	stats := func(name string, mod func(*GenConfig)) *Stats {
		d := genTiny(t, dir, name, mod)
		st, err := ComputeStats(d.Dir, StatsOptions{ClusteringSamples: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	base := stats("base", nil)
	local := stats("local", func(c *GenConfig) { c.LocalShare = 0.5 })
	zipf := stats("zipf", func(c *GenConfig) { c.CommunitySizeExponent = 1 })
	ids := stats("ids", func(c *GenConfig) { c.IDLocality, c.LocalShare = true, 0.3 })
	for name, st := range map[string]*Stats{"local": local, "zipf": zipf, "ids": ids} {
		if h := *st.EdgeHomophily; math.Abs(h-0.8) > 0.03 {
			t.Errorf("%s: edge homophily %.3f, configured 0.8", name, h)
		}
		if st.Edges < base.Edges*97/100 || st.Edges > base.Edges*103/100 {
			t.Errorf("%s: %d edges, base %d: degrees should not change", name, st.Edges, base.Edges)
		}
	}
	// (tiny is small enough that popular nodes alone close triangles: 0.1)
	if local.Clustering < 1.5*base.Clustering {
		t.Errorf("clustering with local share 0.5: %.3f, without: %.3f", local.Clustering, base.Clustering)
	}
	if c := zipf.Communities; math.Abs(float64(c.Largest)/float64(c.Smallest)/7-1) > 0.02 {
		t.Errorf("Zipf(1) sizes over 7 classes: largest/smallest = %d/%d, want 7", c.Largest, c.Smallest)
	}
	if base.IDDistanceP50 < 0.25 || zipf.IDDistanceP50 < 0.25 || ids.IDDistanceP50 > 0.1 {
		t.Errorf("median id gaps: base %.3f, zipf %.3f (scattered: ≈ 0.29), id locality %.3f (want < 0.1)",
			base.IDDistanceP50, zipf.IDDistanceP50, ids.IDDistanceP50)
	}
	// With id locality, community k is the id range of its size.
	d, err := OpenByName(strings.TrimSuffix(dir, "/datasets"), "ids")
	if err != nil {
		t.Fatal(err)
	}
	labels, _ := d.Labels()
	if !slices.IsSorted(labels) {
		t.Errorf("id locality: labels are not grouped by id range")
	}
}

func TestGenerateStructuredDeterministic(t *testing.T) {
	dir := t.TempDir()
	mod := func(w int) func(*GenConfig) {
		return func(c *GenConfig) {
			c.Workers, c.CommunitySizeExponent, c.IDLocality, c.LocalShare, c.LocalDensity = w, 1.2, true, 0.4, 0.8
		}
	}
	a, b := fileHash(t, genTiny(t, dir, "a", mod(1)).Dir), fileHash(t, genTiny(t, dir, "b", mod(3)).Dir)
	for _, f := range DataFiles {
		if a[f] != b[f] {
			t.Errorf("%s differs between 1 and 3 workers", f)
		}
	}
}

func TestStructureBadConfig(t *testing.T) {
	for _, mod := range []func(*GenConfig){
		func(c *GenConfig) { c.LocalShare = 0.9 }, // > homophily 0.8
		func(c *GenConfig) { c.LocalShare = -0.1 },
		func(c *GenConfig) { c.CommunitySizeExponent = -1 },
		func(c *GenConfig) { c.CommunitySizeExponent = math.NaN() },
		func(c *GenConfig) { c.LocalShare, c.LocalDensity = 0.3, 0.95 },
		func(c *GenConfig) { c.LocalWindow = -1 },
	} {
		c := DefaultGenConfig()
		mod(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: Validate = %v, want ErrConfig", c, err)
		}
	}
}

// WithIDs(false) and WithIDs(true) are the same graph numbered two ways:
// matching the nodes by their feature rows (centroid plus noise drawn per
// node, so unique), every label, split and in-neighbour list corresponds;
// only the ids differ (scattered against grouped by community). Both on a
// base without structure (medium's kind) and on one with it
// (papers-struct's kind).
func TestWithIDsSameGraph(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		mod  func(*GenConfig)
	}{
		{"plain", nil},
		{"structured", func(c *GenConfig) { c.CommunitySizeExponent, c.LocalShare = 1, 0.3 }},
	} {
		with := func(local bool) func(*GenConfig) {
			return func(c *GenConfig) {
				if tc.mod != nil {
					tc.mod(c)
				}
				*c = c.WithIDs(local)
			}
		}
		sc := genTiny(t, dir, tc.name+"-scattered", with(false))
		lo := genTiny(t, dir, tc.name+"-local", with(true))
		if sc.Edges() != lo.Edges() || sc.Nodes() != lo.Nodes() {
			t.Fatalf("%s: %d/%d nodes, %d/%d edges", tc.name, sc.Nodes(), lo.Nodes(), sc.Edges(), lo.Edges())
		}
		n := sc.Nodes()
		rowKey := func(d *Dataset) []string {
			rows, err := d.ReadFeatureRows(0, n)
			if err != nil {
				t.Fatal(err)
			}
			dim := d.Meta.FeatureDim
			keys := make([]string, n)
			for v := range keys {
				keys[v] = fmt.Sprint(rows[v*dim : (v+1)*dim])
			}
			return keys
		}
		toLocal := map[string]int64{}
		for v, k := range rowKey(lo) {
			toLocal[k] = int64(v)
		}
		m := make([]int64, n) // scattered id → local id
		moved := 0
		for v, k := range rowKey(sc) {
			u, ok := toLocal[k]
			if !ok {
				t.Fatalf("%s: scattered node %d's features are no local node's", tc.name, v)
			}
			m[v] = u
			if u != int64(v) {
				moved++
			}
		}
		if moved < int(n)/2 {
			t.Errorf("%s: only %d of %d nodes renumbered: the ids are not scattered", tc.name, moved, n)
		}
		ls, _ := sc.Labels()
		ll, _ := lo.Labels()
		if !slices.IsSorted(ll) {
			t.Errorf("%s: local labels are not grouped by id", tc.name)
		}
		for v := range n {
			if ls[v] != ll[m[v]] {
				t.Fatalf("%s: node %d: label %d, its twin %d has %d", tc.name, v, ls[v], m[v], ll[m[v]])
			}
			a, err := sc.InNeighbors(v)
			if err != nil {
				t.Fatal(err)
			}
			b, err := lo.InNeighbors(m[v])
			if err != nil {
				t.Fatal(err)
			}
			mapped := make([]int64, len(a))
			for i, u := range a {
				mapped[i] = m[u]
			}
			slices.Sort(mapped)
			if !slices.Equal(mapped, b) {
				t.Fatalf("%s: node %d's in-neighbours %v map to %v, its twin %d has %v", tc.name, v, a, mapped, m[v], b)
			}
		}
		for _, split := range []string{SplitTrain, SplitVal, SplitTest} {
			a, _ := sc.Split(split)
			b, _ := lo.Split(split)
			mapped := make([]int64, len(a))
			for i, u := range a {
				mapped[i] = m[u]
			}
			slices.Sort(mapped)
			if !slices.Equal(mapped, b) {
				t.Errorf("%s: %s split differs beyond renumbering", tc.name, split)
			}
		}
	}
}
