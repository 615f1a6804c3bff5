package report

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"outcore/engine/dataset"
	"outcore/internal/units"
)

// The scale figure (docs/benchmarks/variants.md, "Scale"): how each
// variant's epoch time and device reads grow with the graph at one memory
// share — the limit as a share of the dataset's feature bytes — drawn from
// the runs of experiments on datasets of different sizes (medium,
// papers-like, a ≥ 10 GiB one). Nothing is re-run: the figure is read
// from the stored runs like every other chart.

// ScaleSet is one experiment's runs and the size of its dataset.
type ScaleSet struct {
	Dataset      string
	FeatureBytes int64
	Cmp          *Comparison
}

// scaleShareTolerance is how far (relatively) a run's limit may sit from
// share × feature bytes and still count as that share: limits given as
// "25%" resolve to whole bytes, limits given in MiB round.
const scaleShareTolerance = 0.02

// ScaleChart builds scale figure id from sets: one line per variant (and
// compute mode, where the runs differ in it), a point per dataset at
// x = its feature bytes, from the runs whose memory limit is share of
// them (share 0: the runs without a limit). Points are means over the
// repeats, ± one standard deviation; OOM and failed cells are marked.
func ScaleChart(id string, sets []ScaleSet, share float64) (Chart, error) {
	e, ok := chartOf(ScopeScale, id)
	if !ok {
		return Chart{}, fmt.Errorf("scale figure %q: want one of %s", id, strings.Join(ScaleChartIDs, ", "))
	}
	if !(share >= 0) || math.IsInf(share, 0) {
		return Chart{}, fmt.Errorf("memory share %v: want a share of the feature bytes above 0 (0: no limit)", share)
	}
	return e.Build(e, ChartInput{Sets: sets, Share: share})
}

// scaleBuild is the builder of a scale figure plotting f (ylabel, in
// yunit; what names it in the note).
func scaleBuild(ylabel, yunit, what string, f func(RunData) (float64, bool)) func(ChartEntry, ChartInput) (Chart, error) {
	return func(e ChartEntry, in ChartInput) (Chart, error) {
		return scaleChart(e, in.Sets, in.Share, ylabel, yunit, what, f)
	}
}

func scaleChart(e ChartEntry, sets []ScaleSet, share float64, ylabel, yunit, what string, f func(RunData) (float64, bool)) (Chart, error) {
	shareWord := "no memory limit"
	if share > 0 {
		shareWord = fmt.Sprintf("memory limit %g %% of the feature bytes", share*100)
	}
	ch := Chart{ID: e.ID, Title: e.Title + " (" + shareWord + ")", XLabel: "dataset feature bytes", YLabel: ylabel, YUnit: yunit,
		XType: "value", YType: "value", Kind: "line", XFormat: "bytes", XUnit: "bytes", Dodge: true,
		Note: "Each variant at one memory share across datasets of different sizes: x is the dataset's feature bytes, y the mean over the repeated runs of the steady epochs' " +
			what +
			", error bars ± one sample standard deviation, n in the tooltip and CSV; ✕ marks a dataset where every run ran out of memory, ! where runs failed. Read from the runs of the experiments named, those whose limit is within 2 % of the share."}
	type key struct{ variant, compute string }
	var g cellGroups[key, int64]
	computes := map[string]bool{}
	var sizes []float64
	seenSize := map[int64]bool{}
	bounds := map[int]bool{} // the runs' bounds on training nodes per epoch (0: none)
	for _, s := range sets {
		if s.Cmp == nil || s.FeatureBytes <= 0 {
			return Chart{}, fmt.Errorf("dataset %q: no runs or no feature bytes", s.Dataset)
		}
		for _, r := range s.Cmp.runs {
			if !atShare(r.MemLimit, s.FeatureBytes, share) {
				continue
			}
			k := key{r.System, computeWord(r.Compute)}
			computes[k.compute] = true
			bounds[r.TrainMaxNodes] = true
			g.add(k, s.FeatureBytes, func() *cell {
				return &cell{x: float64(s.FeatureBytes), label: s.Dataset + " (" + units.Bytes(s.FeatureBytes) + ")"}
			}, r)
			if !seenSize[s.FeatureBytes] {
				seenSize[s.FeatureBytes] = true
				sizes = append(sizes, float64(s.FeatureBytes))
			}
		}
	}
	keys := g.keys
	if len(keys) == 0 {
		ch.Empty = fmt.Sprintf("No run of these experiments has a %s.", shareWord)
		return ch, nil
	}
	if note := boundNote(bounds); note != "" {
		ch.Title += note
		ch.Note += " These runs' epochs were bounded (train_max_nodes, a deviation each run records): the same number of training nodes on every dataset, so y is the cost of the same work as the graph grows, not of a whole epoch, whose training split grows with the graph."
	}
	sort.Float64s(sizes)
	ch.XType, ch.XLogBase = axisScale(sizes)
	sort.SliceStable(keys, func(i, j int) bool {
		vi, vj := variantIndex(keys[i].variant, nil), variantIndex(keys[j].variant, nil)
		if vi != vj {
			return vi < vj
		}
		return keys[i].compute < keys[j].compute
	})
	perVariant := map[string]int{}
	for _, k := range keys {
		col, mk := style(variantIndex(k.variant, nil))
		name := k.variant
		if len(computes) > 1 {
			name += " · " + k.compute
		}
		s := Series{Name: name, Color: col, Marker: mk, Dash: perVariant[k.variant] % 4}
		perVariant[k.variant]++
		for _, cl := range g.cells[k] {
			p := aggregate(cl, f)
			x := cl.x
			p.XReal = &x
			s.Points = append(s.Points, p)
		}
		sortPoints(s.Points)
		ch.Series = append(ch.Series, s)
	}
	return ch, nil
}

// boundNote is the title's words for the runs' bounds on training nodes
// per epoch ("" when no run was bounded): one count, or the counts seen
// when the runs differ (a whole epoch among them counts as "all").
func boundNote(bounds map[int]bool) string {
	if len(bounds) == 0 || (len(bounds) == 1 && bounds[0]) {
		return ""
	}
	var ns []int
	for n := range bounds {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	words := make([]string, len(ns))
	for i, n := range ns {
		words[i] = "all"
		if n > 0 {
			words[i] = strconv.Itoa(n)
		}
	}
	if len(words) == 1 {
		return ", epochs bounded to " + words[0] + " training nodes"
	}
	return ", epochs bounded to " + strings.Join(words, " / ") + " training nodes (the runs differ)"
}

// atShare reports whether limit is share of featureBytes (share 0: no
// limit), within scaleShareTolerance.
func atShare(limit, featureBytes int64, share float64) bool {
	if share == 0 {
		return limit <= 0
	}
	if limit <= 0 {
		return false
	}
	want := share * float64(featureBytes)
	return math.Abs(float64(limit)-want) <= scaleShareTolerance*want
}

// ParseShare reads a memory share as the scale figure takes it: "25%",
// "0.25", or "none" (0: the runs without a limit).
func ParseShare(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "none" {
		return 0, nil
	}
	in, div := s, 1.0
	if t, ok := strings.CutSuffix(s, "%"); ok {
		s, div = strings.TrimSpace(t), 100
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) || v/div > 1000 {
		return 0, fmt.Errorf("memory share %q: want a share of the feature bytes such as 25%% or 0.25, or none", in)
	}
	return v / div, nil
}

// LoadScaleSets loads each experiment's runs (with the digest cache, nil
// for none) and the feature bytes of its dataset in dataDir for
// ScaleChart; meta is the first experiment's provenance.
func LoadScaleSets(ctx context.Context, src Source, cache *DigestCache, ids []int64, dataDir string) ([]ScaleSet, FigureMeta, error) {
	var sets []ScaleSet
	var meta FigureMeta
	for i, id := range ids {
		e, err := src.Experiment(ctx, id)
		if err != nil {
			return nil, meta, err
		}
		ds, err := dataset.OpenByName(dataDir, e.Dataset)
		if err != nil {
			return nil, meta, fmt.Errorf("experiment %d: dataset %s: %w", id, e.Dataset, err)
		}
		fb := ds.Meta.FeatureBytes()
		cmp, err := LoadComparison(ctx, src, cache, id)
		if err != nil {
			return nil, meta, err
		}
		if i == 0 {
			meta = cmp.Meta()
			meta.Experiment = 0 // several experiments
		}
		sets = append(sets, ScaleSet{Dataset: e.Dataset, FeatureBytes: fb, Cmp: cmp})
	}
	return sets, meta, nil
}
