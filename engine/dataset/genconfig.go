package dataset

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// GenConfig configures the synthetic graph generator (see Generate). It is
// stored whole in meta.json, so a dataset records how to make it again.
type GenConfig struct {
	// Nodes is the node count.
	Nodes int64 `json:"nodes"`
	// AvgDegree is the target mean in-degree (edges = Nodes×AvgDegree approx.).
	AvgDegree float64 `json:"avg_degree"`
	// FeatureDim is the feature dimension D.
	FeatureDim int `json:"feature_dim"`
	// Classes is the number of planted communities (= label classes), ≥ 2.
	Classes int `json:"classes"`
	// Homophily is the probability that an in-neighbour is drawn from the
	// node's own class; otherwise it comes from a uniformly chosen other
	// class. It is the expected share of same-class edges.
	Homophily float64 `json:"homophily"`
	// TrainFrac, ValFrac, TestFrac: each node joins a split with these
	// probabilities (sum ≤ 1; the rest is in no split).
	TrainFrac float64 `json:"train_frac"`
	ValFrac   float64 `json:"val_frac"`
	TestFrac  float64 `json:"test_frac"`
	// LabelSplitOnly leaves nodes outside every split unlabeled (-1), like
	// ogbn-papers100M where only ~1.4% of nodes carry labels.
	LabelSplitOnly bool `json:"label_split_only"`
	// Seed makes the output deterministic: same config, same bytes.
	Seed uint64 `json:"seed"`
	// DegreeExponent is the tail index a of the in-degree distribution,
	// P(in-degree > k) ~ k^-a (a shifted Pareto/Lomax); must be > 1.
	DegreeExponent float64 `json:"degree_exponent"`
	// MinDegree is every node's minimum in-degree.
	MinDegree int64 `json:"min_degree"`
	// MaxDegree caps in-degrees; 0 picks min(200×AvgDegree, Nodes/(2×Classes)).
	MaxDegree int64 `json:"max_degree"`
	// Popularity is the Zipf exponent β of the preference for popular nodes
	// within a class: the node of popularity rank r is picked ∝ (r+1)^-β,
	// making out-degrees heavy-tailed (0 = uniform).
	Popularity float64 `json:"popularity_exponent"`
	// Separation is the expected Euclidean distance between two class
	// centroids; with noise σ = Noise, features alone tell two classes apart
	// with error about Φ(-Separation/2σ), so neighbours must help.
	Separation float64 `json:"feature_separation"`
	// Noise is the standard deviation of the Gaussian noise per feature.
	Noise float64 `json:"feature_noise"`
	// The structure options below are off when zero (the default), and
	// then the generator's output is byte for byte what it was before they
	// existed. Any of them set switches to the structured generator
	// (DESIGN §4 "Structure"): communities are contiguous ranges of a
	// position space, other-class neighbours are drawn in proportion to
	// class size, and Homophily stays the expected share of same-class
	// edges, local ones included.

	// CommunitySizeExponent s makes community (class) sizes heavy-tailed:
	// class k holds a share ∝ (k+1)^-s of the nodes (Zipf), every class at
	// least one node; 0 = equal sizes.
	CommunitySizeExponent float64 `json:"community_size_exponent,omitempty"`
	// IDLocality numbers nodes community by community, each community's
	// most popular nodes first (as graphs numbered by crawl or by time),
	// instead of scattering them over the ids by a keyed permutation.
	IDLocality bool `json:"id_locality,omitempty"`
	// LocalShare is the share of in-neighbours drawn from the node's own
	// community within ±LocalWindow positions of it; such neighbours are
	// likely neighbours of each other, which is what gives the graph its
	// clustering (triangles). Must be ≤ Homophily.
	LocalShare float64 `json:"local_share,omitempty"`
	// LocalWindow is the half-width of that window (0 = automatic:
	// max(2, ⌈LocalShare×AvgDegree⌉)).
	LocalWindow int64 `json:"local_window,omitempty"`
	// LocalDensity is the share of a node's window its local draws fill:
	// the window of a node of in-degree d is at least LocalShare×d /
	// (2×LocalDensity) on each side (0 = 0.5). Denser windows close more
	// triangles (higher clustering).
	LocalDensity float64 `json:"local_density,omitempty"`
	// StructuredGenerator selects the structured generator with no other
	// structure option set: equal communities as contiguous position
	// ranges, ids scattered (or, with IDLocality, not). It is what
	// WithIDs sets so that a dataset and its id-local twin are the same
	// graph numbered two ways.
	StructuredGenerator bool `json:"structured,omitempty"`

	// Workers is the number of generating goroutines (0 = GOMAXPROCS).
	Workers int `json:"-"`
}

// Structured reports whether any structure option is set (see GenConfig).
func (c GenConfig) Structured() bool {
	return c.StructuredGenerator || c.CommunitySizeExponent != 0 || c.IDLocality || c.LocalShare != 0 || c.LocalWindow != 0 || c.LocalDensity != 0
}

// WithIDs is c with its node ids community-local (local) or scattered,
// everything else unchanged, on the structured generator: the structured
// generator draws every node's streams by its position, not its id
// (Generate), so c.WithIDs(false) and c.WithIDs(true) are the same graph
// — the same edges, labels, splits and features — numbered two ways
// (DESIGN §4 "Structure"; the grid's ids axis).
func (c GenConfig) WithIDs(local bool) GenConfig {
	c.IDLocality = local
	c.StructuredGenerator = true
	return c
}

// Numbering is how a generated dataset numbers its nodes: "local"
// (IDLocality: community by community) or "scattered"; "" for one not
// generated (an import's numbering is its source's).
func (m Meta) Numbering() string {
	switch g := m.Source.Generator; {
	case g == nil:
		return ""
	case g.IDLocality:
		return "local"
	default:
		return "scattered"
	}
}

// DefaultGenConfig holds the values every preset starts from.
func DefaultGenConfig() GenConfig {
	return GenConfig{
		Nodes: 8192, AvgDegree: 10, FeatureDim: 32, Classes: 7, Homophily: 0.8,
		TrainFrac: 0.6, ValFrac: 0.2, TestFrac: 0.2, Seed: 1,
		DegreeExponent: 1.5, MinDegree: 1, Popularity: 0.8,
		Separation: 2.0, Noise: 1.0,
	}
}

// presets maps preset names to their configuration and a description.
var presets = map[string]struct {
	doc string
	cfg func() GenConfig
}{
	"tiny": {"8192 nodes, 32 dims, 7 classes, avg in-degree 10 (1 MiB of features; for tests)", func() GenConfig {
		return DefaultGenConfig()
	}},
	"small": {"400k nodes, 64 dims, 16 classes, avg in-degree 12 (≈100 MB of features)", func() GenConfig {
		c := DefaultGenConfig()
		c.Nodes, c.FeatureDim, c.Classes, c.AvgDegree = 400_000, 64, 16, 12
		c.TrainFrac, c.ValFrac, c.TestFrac = 0.1, 0.05, 0.1
		return c
	}},
	"medium": {"2,097,152 nodes, 128 dims, 32 classes, avg in-degree 15 (1 GiB of features)", func() GenConfig {
		c := DefaultGenConfig()
		c.Nodes, c.FeatureDim, c.Classes, c.AvgDegree = 2_097_152, 128, 32, 15
		c.TrainFrac, c.ValFrac, c.TestFrac = 0.05, 0.02, 0.05
		return c
	}},
	"large": {"20,971,520 nodes, 128 dims, 64 classes, avg in-degree 15 (10 GiB of features)", func() GenConfig {
		c := DefaultGenConfig()
		c.Nodes, c.FeatureDim, c.Classes, c.AvgDegree = 20_971_520, 128, 64, 15
		c.TrainFrac, c.ValFrac, c.TestFrac = 0.02, 0.005, 0.01
		return c
	}},
	"papers-like": {"ogbn-papers100M's shape at 1/13 scale: 8,388,608 nodes, avg in-degree 14.5, 128 dims, 172 classes, 1.1% train / 0.11% val / 0.19% test, only split nodes labeled (4 GiB of features)", papersLike},
	"papers-reach": {"ogbn-papers100M's batch reach: 67,108,864 nodes (0.6 of its 111 M), avg in-degree 14.5, 64 dims, 172 classes, papers-like's splits; one batch of 1,000 seeds at fanout 10,10,10 touches about 0.3 % of it (docs/benchmarks/dataset.md \"Batch reach\") (16 GiB of features)", func() GenConfig {
		c := papersLike()
		c.Nodes, c.FeatureDim = 67_108_864, 64
		return c
	}},
	"papers-struct": {"papers-like with the structure options (DESIGN §4 \"Structure\"): Zipf community sizes, ids grouped by community, clustering and edge homophily calibrated to ogbn-papers100M / ogbn-arxiv (docs/benchmarks/dataset.md) (4 GiB of features)", func() GenConfig {
		c := papersLike()
		c.Homophily = 0.66
		c.CommunitySizeExponent, c.IDLocality, c.LocalShare = 1, true, 0.3
		return c
	}},
	"products-struct": {"ogbn-products' shape at full scale: 2,449,029 nodes, avg in-degree 50.5, 100 dims, 47 classes, 8% train / 2% val / 90% test, with the structure options calibrated to its clustering and edge homophily (0.9 GiB of features)", func() GenConfig {
		c := DefaultGenConfig()
		c.Nodes, c.FeatureDim, c.Classes, c.AvgDegree = 2_449_029, 100, 47, 50.5
		c.TrainFrac, c.ValFrac, c.TestFrac = 0.08, 0.02, 0.90
		c.Homophily = 0.81
		c.CommunitySizeExponent, c.LocalShare, c.LocalDensity = 1, 0.75, 0.8
		return c
	}},
}

// papersLike is the papers-like preset (and papers-struct's base).
func papersLike() GenConfig {
	c := DefaultGenConfig()
	c.Nodes, c.FeatureDim, c.Classes, c.AvgDegree = 8_388_608, 128, 172, 14.5
	c.TrainFrac, c.ValFrac, c.TestFrac = 0.0109, 0.0011, 0.0019
	c.LabelSplitOnly = true
	return c
}

// Preset returns the generator configuration of a named preset: tiny,
// small, medium, large, papers-like, papers-reach, papers-struct or
// products-struct.
func Preset(name string) (GenConfig, error) {
	p, ok := presets[name]
	if !ok {
		return GenConfig{}, fmt.Errorf("%w: unknown preset %q (have %s)", ErrConfig, name, strings.Join(PresetNames(), ", "))
	}
	return p.cfg(), nil
}

// PresetNames lists the preset names, smallest first.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := Preset(names[i])
		b, _ := Preset(names[j])
		return a.Nodes*int64(a.FeatureDim) < b.Nodes*int64(b.FeatureDim)
	})
	return names
}

// PresetDoc describes a preset in one line.
func PresetDoc(name string) string { return presets[name].doc }

// resolved returns the config with automatic values (MaxDegree) filled in.
func (c GenConfig) resolved() GenConfig {
	if c.MaxDegree == 0 {
		m := int64(200 * c.AvgDegree)
		if lim := c.Nodes / (2 * int64(max(c.Classes, 1))); lim < m {
			m = lim
		}
		if float64(m) < 2*c.AvgDegree {
			m = int64(math.Ceil(2 * c.AvgDegree))
		}
		if m > c.Nodes-1 {
			m = c.Nodes - 1
		}
		c.MaxDegree = max(m, c.MinDegree)
	}
	if c.LocalShare > 0 && c.LocalWindow == 0 {
		c.LocalWindow = max(2, int64(math.Ceil(c.LocalShare*c.AvgDegree)))
	}
	if c.LocalShare > 0 && c.LocalDensity == 0 {
		c.LocalDensity = 0.5
	}
	return c
}

// Validate reports the first out-of-range field, wrapping ErrConfig.
func (c GenConfig) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	finite := func(xs ...float64) bool {
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
		return true
	}
	switch {
	case !finite(c.AvgDegree, c.Homophily, c.TrainFrac, c.ValFrac, c.TestFrac, c.DegreeExponent, c.Popularity, c.Separation, c.Noise, c.CommunitySizeExponent, c.LocalShare, c.LocalDensity):
		return bad("non-finite value in %+v", c)
	case c.Classes < 2:
		return bad("classes = %d, need at least 2", c.Classes)
	case c.Nodes < int64(c.Classes) || c.Nodes < 2:
		return bad("nodes = %d, need at least max(2, classes = %d)", c.Nodes, c.Classes)
	case c.Nodes > 1<<40:
		return bad("nodes = %d is more than 2^40", c.Nodes)
	case c.FeatureDim < 1 || c.FeatureDim > 1<<20:
		return bad("feature_dim = %d, need 1..2^20", c.FeatureDim)
	case c.AvgDegree < 0 || c.AvgDegree > float64(c.Nodes)/4:
		return bad("avg_degree = %g, need 0..nodes/4 = %g", c.AvgDegree, float64(c.Nodes)/4)
	case c.MinDegree < 0 || float64(c.MinDegree) > c.AvgDegree:
		return bad("min_degree = %d, need 0..avg_degree = %g", c.MinDegree, c.AvgDegree)
	case c.MaxDegree < 0 || c.MaxDegree > 0 && float64(c.MaxDegree) < c.AvgDegree:
		return bad("max_degree = %d, need 0 (auto) or ≥ avg_degree = %g", c.MaxDegree, c.AvgDegree)
	case c.MaxDegree >= c.Nodes:
		return bad("max_degree = %d, need < nodes = %d", c.MaxDegree, c.Nodes)
	case c.Homophily < 0 || c.Homophily > 1:
		return bad("homophily = %g, need 0..1", c.Homophily)
	case c.TrainFrac < 0 || c.ValFrac < 0 || c.TestFrac < 0 || c.TrainFrac+c.ValFrac+c.TestFrac > 1+1e-9:
		return bad("split fractions %g/%g/%g must be ≥ 0 and sum to ≤ 1", c.TrainFrac, c.ValFrac, c.TestFrac)
	case c.DegreeExponent <= 1 || c.DegreeExponent > 10:
		return bad("degree_exponent = %g, need (1, 10]", c.DegreeExponent)
	case c.Popularity < 0 || c.Popularity > 5:
		return bad("popularity_exponent = %g, need 0..5", c.Popularity)
	case c.Separation < 0 || c.Noise < 0:
		return bad("feature_separation = %g and feature_noise = %g must be ≥ 0", c.Separation, c.Noise)
	case c.CommunitySizeExponent < 0 || c.CommunitySizeExponent > 5:
		return bad("community_size_exponent = %g, need 0..5", c.CommunitySizeExponent)
	case c.LocalShare < 0 || c.LocalShare >= 1:
		return bad("local_share = %g, need 0 ≤ local_share < 1", c.LocalShare)
	case c.LocalShare > c.Homophily:
		return bad("local_share = %g is more than homophily = %g (local neighbours are same-class neighbours)", c.LocalShare, c.Homophily)
	case c.LocalDensity < 0 || c.LocalDensity > 0.9:
		return bad("local_density = %g, need 0 (auto) or up to 0.9", c.LocalDensity)
	case c.LocalWindow < 0 || c.LocalWindow > c.Nodes:
		return bad("local_window = %d, need 0 (auto) .. nodes = %d", c.LocalWindow, c.Nodes)
	case c.Workers < 0:
		return bad("workers = %d", c.Workers)
	}
	return nil
}
