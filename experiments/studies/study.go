package studies

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"outcore/engine/testbed"
	"outcore/experiments/grid"
)

// Study is one study file: a grid, and for a reproduction study the
// paper block (Paper.Name != "").
type Study struct {
	// ID is the file's name without ".json": the registry key, the name of
	// the example file `outcore serve` writes, and for a reproduction
	// study the prefix of its experiment's name ("gnndrive-table2: ...").
	ID string
	// raw is the file's grid object as written there.
	raw json.RawMessage
	// Dataset, Systems and MemLimits are the grid's dataset and its system
	// and mem_limit axes (with options, see grid.ParseSystemEntry;
	// limits as shares of the feature bytes, "60%", so that a study scales
	// with the dataset). MemLimits may differ from the file's when the
	// study was rescaled (Rescaled, SmallScale).
	Dataset   string
	Systems   []string
	MemLimits []string
	// Base, when set, replaces the grid's run configuration keys (model,
	// layers, fanout, batch, hidden, epochs, eval_max_nodes): the
	// small-scale form's lighter model; a key the grid's axes sweep
	// (a batch axis, GNNDrive Fig. 10) keeps the sweep.
	Base map[string]any
	// Scale is "" for the study as registered, else what was scaled
	// ("small scale"), part of the experiment's name.
	Scale string
	// Paper is the paper block; zero for an example.
	Paper
}

// Paper is a study file's paper block: which figure or table of which
// paper the grid reproduces the shape of, the paper's numbers, and the
// text the study's pages show.
type Paper struct {
	Name   string // "GNNDrive (ICPP'24)"
	Figure string // "Table 2"
	Title  string
	// PaperSetting and OurSetting say what ran there and what runs here.
	PaperSetting, OurSetting string
	// Metric is the per-epoch mean the study compares: "epoch_s" or a
	// stage ("sample_s").
	Metric string
	// Labels name the systems as the paper does ("GNNDrive-GPU").
	Labels map[string]string
	// Points are the paper's numbers, one per system and limit.
	Points []PaperPoint
	// Ratios are the paper's headline ratios.
	Ratios []PaperRatio
	// RatioMetrics gives a ratio (by label) a metric of its own where the
	// paper's ratio compares something else than Metric: DiskGNN's Fig. 8
	// sets Ginex's epoch without its sampling beside DiskGNN's, and each
	// system's epoch plus its preparation for "+ preprocess"
	// (MetricEpochNoSample, MetricEpochPlusPrepare).
	RatioMetrics map[string]RatioMetric
	// Differ says why our numbers differ from the paper's.
	Differ []string
}

// PaperPoint is one number of the paper (seconds of Metric) for a system
// entry at a memory limit of the study.
type PaperPoint struct {
	System   string  `json:"system"`
	MemLimit string  `json:"mem_limit"`
	Value    float64 `json:"value"`
}

// RatioMetric is the metric of each side of a ratio ("" = the study's).
type RatioMetric struct {
	Num string `json:"num"`
	Den string `json:"den"`
}

// PaperRatio is a ratio the paper reports: Metric of Num over Metric of
// Den at MemLimit ("PyG+ / Ginex = 1.86–2.50×").
type PaperRatio struct {
	Label    string `json:"label"`
	Num      string `json:"num"`
	Den      string `json:"den"`
	MemLimit string `json:"mem_limit"`
	// Paper is the ratio as the paper states it, e.g. "2.64×" or "1.86–2.50×".
	Paper string `json:"paper"`
	// Low and High are its range (Low == High for one value).
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Metrics a ratio compares besides a digest's means (Paper.RatioMetrics,
// computed by report.MetricValue): DiskGNN Fig. 8's bars and
// "+ preprocess" sums.
const (
	// MetricEpochNoSample is an epoch less its wall-clock sample stage
	// (wall_sample_s, DESIGN §5 "Stage vocabulary"): Ginex's epoch without
	// its superbatch sampling, as DiskGNN's Fig. 8 draws Ginex (its
	// sampling is Ginex's pre-processing there). Runs recorded before the
	// wall-clock stages (metrics version 3) have none.
	MetricEpochNoSample = "epoch_no_sample_s"
	// MetricEpochPlusPrepare is an epoch plus the run's offline
	// preparation (the summary's prepare_s) amortised over its epochs:
	// "DiskGNN + preprocess", "Marius + preprocess" and, with Ginex's
	// sampling inside its epoch, "Ginex + sample" (DiskGNN Fig. 8).
	MetricEpochPlusPrepare = "epoch_plus_prepare_s"
	// MetricHitRatio is the share of feature lookups a memory tier served
	// (DESIGN §5's hit ratio, report.Digest.HitRatio): what a cache
	// decides, for the structure studies (issue 37 item 5).
	MetricHitRatio = "hit_ratio"
)

// IsPaper reports whether the study reproduces a paper's figure or table
// (it has a paper block); an example has none.
func (s Study) IsPaper() bool { return s.Paper.Name != "" }

// ExperimentName is the name of the study's experiment: for a
// reproduction study its ID, a colon and its figure (ByExperiment reads
// the ID back), for an example its grid's name.
func (s Study) ExperimentName() string {
	if !s.IsPaper() {
		var g struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(s.raw, &g)
		return g.Name
	}
	if s.Scale != "" {
		return fmt.Sprintf("%s: %s %s (%s)", s.ID, s.Paper.Name, s.Figure, s.Scale)
	}
	return fmt.Sprintf("%s: %s %s", s.ID, s.Paper.Name, s.Figure)
}

// Grid is the study's grid on dataset ("" = the study's own). A
// reproduction study's grid is named ExperimentName and runs at
// MemLimits; an example's is its file's grid with the dataset replaced.
func (s Study) Grid(dataset string) ([]byte, error) {
	if !s.IsPaper() && dataset == "" {
		return append([]byte(nil), s.raw...), nil
	}
	g := map[string]any{}
	if err := json.Unmarshal(s.raw, &g); err != nil {
		return nil, fmt.Errorf("study %s: grid: %w", s.ID, err)
	}
	if dataset == "" {
		dataset = s.Dataset
	}
	g["dataset"] = dataset
	if !s.IsPaper() {
		return json.Marshal(g)
	}
	axes, _ := g["axes"].(map[string]any)
	if axes == nil {
		axes = map[string]any{}
	}
	for k, v := range s.Base {
		if !sweptByAxis(axes, k) {
			g[k] = v
		}
	}
	axes["system"], axes["mem_limit"] = s.Systems, s.MemLimits
	g["axes"] = axes
	g["name"] = s.ExperimentName()
	if _, swept := axes["testbed"]; !swept {
		tb, err := s.Testbed()
		if err != nil {
			return nil, err
		}
		g["testbed"] = tb
	}
	return json.Marshal(g)
}

// Testbed is the testbed a reproduction study runs under (DESIGN §13,
// "Studies"): the one its grid names ("testbed"), else its paper's
// (testbed.ForPaper of the paper block's name). An example runs on
// this host ("this-host" when its grid names none).
func (s Study) Testbed() (string, error) {
	var g struct {
		Testbed string `json:"testbed"`
	}
	_ = json.Unmarshal(s.raw, &g)
	if g.Testbed != "" {
		return g.Testbed, nil
	}
	if !s.IsPaper() {
		return testbed.ThisHost, nil
	}
	p, err := testbed.ForPaper(s.Paper.Name)
	if err != nil {
		return "", fmt.Errorf("study %s: %w", s.ID, err)
	}
	return p.Name, nil
}

// sweptByAxis reports whether the grid's axes vary the run setting key
// (the batch under "batch" or "batch_size"): a figure's own sweep, which
// the small-scale form's lighter Base leaves to the axis.
func sweptByAxis(axes map[string]any, key string) bool {
	if key == "batch" {
		_, a := axes["batch"]
		_, b := axes[grid.AxisBatchSize]
		return a || b
	}
	_, ok := axes[key]
	return ok
}

// GridIn is Grid with every run in compute mode compute (DESIGN §10:
// "cpu", "none", "model:PROFILE"; "" leaves the default, cpu) and repeats
// runs of each cell (0: one), named so: the papers' conditions (a GPU
// stand-in) beside the CPU trainer, medians over repeats.
func (s Study) GridIn(dataset, compute string, repeats int) ([]byte, error) {
	b, err := s.Grid(dataset)
	if err != nil || (compute == "" && repeats <= 1) {
		return b, err
	}
	var g map[string]any
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, err
	}
	if compute != "" {
		g["compute"] = compute
		g["name"] = withSuffix(fmt.Sprint(g["name"]), fmt.Sprintf(" [compute %s]", compute))
	}
	if repeats > 1 {
		axes, _ := g["axes"].(map[string]any)
		if axes == nil {
			axes = map[string]any{}
			g["axes"] = axes
		}
		axes["repeat"] = repeats
	}
	return json.Marshal(g)
}

// withSuffix is name with suffix, the name cut short ("…") where both
// would be longer than an experiment name may be.
func withSuffix(name, suffix string) string {
	r := []rune(name)
	if keep := grid.MaxNameLen - utf8.RuneCountInString(suffix); len(r) > keep && keep > 1 {
		name = string(r[:keep-1]) + "…"
	}
	return name + suffix
}

// GridFile is the study's own grid as a file people read (indented), as
// `outcore serve` writes an example into the data directory's examples/.
func (s Study) GridFile() []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, s.raw, "", "  "); err != nil {
		return append([]byte(nil), s.raw...)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// Label is how the paper names a system entry (the entry itself when the
// study gives no name).
func (s Study) Label(entry string) string {
	if l, ok := s.Labels[entry]; ok {
		return l
	}
	return entry
}

// idOk says whether id can name a study: not empty, no colon (the
// experiment name's separator), a plain file name.
func idOk(id string) bool {
	return id != "" && !strings.ContainsAny(id, ":/\\") && !strings.HasPrefix(id, ".")
}
