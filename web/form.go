package web

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"outcore/engine/train"
	"outcore/experiments"
	"outcore/report"
)

// Limits on what the new-experiment form accepts.
const (
	maxGridRuns   = 5000
	maxAxisValues = 32
	maxNameLen    = 100
	maxEpochs     = 1000
	maxRepeats    = 100
	maxDim        = 65536
	maxBatch      = 1 << 20
	maxFanout     = 1000
	maxLayers     = 6
)

// Variants lists the variants the engine has registered, in display order.
func Variants() []string { return report.VariantOrder() }

// variantNote describes a registered variant in one line: its paper and
// what it does (train.Variant).
func variantNote(name string) string {
	v, ok := train.LookupVariant(name)
	if !ok {
		return ""
	}
	if v.Paper == "" {
		return name + ": " + v.Summary
	}
	return v.Paper + ": " + v.Summary
}

// defaultVariants are the variants the new-experiment form starts with:
// the first registered (the papers' common baseline) and the last paper
// variant before the reference pipeline.
func defaultVariants() []string {
	var papers []string
	for _, v := range train.Variants() {
		if v.Paper != "" && v.Name != train.ReferenceName {
			papers = append(papers, v.Name)
		}
	}
	if len(papers) <= 1 {
		return papers
	}
	return []string{papers[0], papers[len(papers)-1]}
}

// Models the form offers.
var Models = []string{"sage", "gcn", "gat"}

// FormInput is the new-experiment form as submitted, before validation.
type FormInput struct {
	Name        string
	DatasetMode string // "existing" or "generate"
	Dataset     string
	Preset      string
	NewDataset  string
	Variants    []string
	MemLimits   string
	Dims        string
	Batches     string
	Model       string
	Fanouts     string
	Epochs      string
	Repeats     string
}

// Grid is an experiment as the form builds it: the grid file of `outcore
// exp create --file` (see experiments.Grid), which the runner validates again.
type Grid struct {
	Name    string   `json:"name,omitempty"`
	Dataset string   `json:"dataset"`
	Model   string   `json:"model"`
	Epochs  int      `json:"epochs"`
	Axes    GridAxes `json:"axes"`
}

// GridAxes are the axes a grid expands into runs.
type GridAxes struct {
	System    []string `json:"system"`
	MemLimit  []string `json:"mem_limit,omitempty"`
	Dim       []int    `json:"feature_dim,omitempty"`
	BatchSize []int    `json:"batch_size,omitempty"`
	Fanout    []string `json:"fanout,omitempty"`
	Repeat    int      `json:"repeat"`
}

// JSON is the grid as the runner reads it.
func (g Grid) JSON() []byte {
	b, _ := json.Marshal(g)
	return b
}

// Runs is how many runs the grid expands into.
func (g Grid) Runs() int {
	n := len(g.Axes.System) * max(1, len(g.Axes.MemLimit)) * max(1, len(g.Axes.Dim)) *
		max(1, len(g.Axes.BatchSize)) * max(1, len(g.Axes.Fanout)) * max(1, g.Axes.Repeat)
	return n
}

// Factors describes the expansion in words: "3 variants × 2 limits × 2 repeats".
func (g Grid) Factors() string {
	part := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	}
	parts := []string{part(len(g.Axes.System), "variant", "variants")}
	if n := len(g.Axes.MemLimit); n > 0 {
		parts = append(parts, part(n, "memory limit", "memory limits"))
	}
	if n := len(g.Axes.Dim); n > 0 {
		parts = append(parts, part(n, "dimension", "dimensions"))
	}
	if n := len(g.Axes.BatchSize); n > 0 {
		parts = append(parts, part(n, "batch size", "batch sizes"))
	}
	if n := len(g.Axes.Fanout); n > 0 {
		parts = append(parts, part(n, "fanout", "fanouts"))
	}
	parts = append(parts, part(max(1, g.Axes.Repeat), "repeat", "repeats"))
	return strings.Join(parts, " × ")
}

// DatasetFacts is what validation needs to know about the chosen dataset.
type DatasetFacts struct {
	Exists       bool
	FeatureBytes int64 // size of features.bin, for limits given in %
}

// FormEnv answers the questions validation asks about the world.
type FormEnv struct {
	// Dataset looks up an existing dataset by name.
	Dataset func(name string) (DatasetFacts, bool)
	// Preset returns the feature size a preset would generate, false if unknown.
	Preset func(name string) (featureBytes int64, ok bool)
	// ValidName checks a new dataset name (nil = valid).
	ValidName func(name string) error
}

// ValidateForm checks every field and builds the grid. errs maps form field
// names to a message naming what is wrong; it is empty when the grid is valid.
func ValidateForm(in FormInput, env FormEnv) (Grid, map[string]string) {
	errs := map[string]string{}
	g := Grid{Model: in.Model}

	name := strings.TrimSpace(in.Name)
	switch {
	case utf8.RuneCountInString(name) > maxNameLen:
		errs["name"] = fmt.Sprintf("name: at most %d characters", maxNameLen)
	case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		errs["name"] = "name: only printable characters"
	}
	g.Name = name

	var featureBytes int64
	switch in.DatasetMode {
	case "generate":
		fb, ok := env.Preset(in.Preset)
		if !ok {
			errs["preset"] = fmt.Sprintf("preset: unknown preset %q", in.Preset)
		}
		featureBytes = fb
		nd := strings.TrimSpace(in.NewDataset)
		if nd == "" {
			errs["new_dataset"] = "new dataset: give the generated dataset a name"
		} else if err := env.ValidName(nd); err != nil {
			errs["new_dataset"] = "new dataset: " + err.Error()
		} else if _, exists := env.Dataset(nd); exists {
			errs["new_dataset"] = fmt.Sprintf("new dataset: %q exists already; pick another name or use it as an existing dataset", nd)
		}
		g.Dataset = nd
	case "existing", "":
		facts, ok := env.Dataset(in.Dataset)
		if in.Dataset == "" {
			errs["dataset"] = "dataset: choose a dataset (or generate one from a preset)"
		} else if !ok {
			errs["dataset"] = fmt.Sprintf("dataset: no dataset named %q in the data directory", in.Dataset)
		}
		featureBytes = facts.FeatureBytes
		g.Dataset = in.Dataset
	default:
		errs["dataset"] = fmt.Sprintf("dataset: unknown choice %q", in.DatasetMode)
	}

	seen := map[string]bool{}
	known := Variants()
	for _, v := range in.Variants {
		if seen[v] {
			continue
		}
		seen[v] = true
		if !contains(known, v) {
			errs["variants"] = fmt.Sprintf("variants: unknown variant %q (have %s)", v, strings.Join(known, ", "))
			break
		}
		g.Axes.System = append(g.Axes.System, v)
	}
	if len(g.Axes.System) == 0 && errs["variants"] == "" {
		errs["variants"] = "variants: tick at least one"
	}

	if lims, err := parseMemLimits(in.MemLimits, featureBytes); err != nil {
		errs["mem_limits"] = "memory limits: " + err.Error()
	} else {
		g.Axes.MemLimit = lims
	}
	if dims, err := parseInts(in.Dims, 1, maxDim); err != nil {
		errs["dims"] = "feature dimensions: " + err.Error()
	} else {
		g.Axes.Dim = dims
	}
	if bs, err := parseInts(in.Batches, 1, maxBatch); err != nil {
		errs["batches"] = "batch sizes: " + err.Error()
	} else {
		g.Axes.BatchSize = bs
	}
	if !contains(Models, in.Model) {
		errs["model"] = fmt.Sprintf("model: unknown model %q (have %s)", in.Model, strings.Join(Models, ", "))
	}
	if fs, err := parseFanouts(in.Fanouts); err != nil {
		errs["fanouts"] = "fanouts: " + err.Error()
	} else {
		g.Axes.Fanout = fs
	}
	if n, err := parseCount(in.Epochs, 1, maxEpochs); err != nil {
		errs["epochs"] = "epochs: " + err.Error()
	} else {
		g.Epochs = n
	}
	if n, err := parseCount(in.Repeats, 1, maxRepeats); err != nil {
		errs["repeats"] = "repeats: " + err.Error()
	} else {
		g.Axes.Repeat = n
	}
	if len(errs) == 0 && g.Runs() > maxGridRuns {
		errs[""] = fmt.Sprintf("the grid makes %d runs; at most %d per experiment", g.Runs(), maxGridRuns)
	}
	return g, errs
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseCount(s string, lo, hi int) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("required (%d to %d)", lo, hi)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q is not a whole number from %d to %d", s, lo, hi)
	}
	return n, nil
}

// parseInts reads a comma-separated list of distinct integers in [lo, hi]; empty = none.
func parseInts(s string, lo, hi int) ([]int, error) {
	items := splitList(s)
	if len(items) > maxAxisValues {
		return nil, fmt.Errorf("at most %d values", maxAxisValues)
	}
	var out []int
	seen := map[int]bool{}
	for _, it := range items {
		n, err := strconv.Atoi(it)
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("%q is not a whole number from %d to %d", it, lo, hi)
		}
		if seen[n] {
			return nil, fmt.Errorf("%d is listed twice", n)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

// parseFanouts reads fanouts separated by ';' (or new lines), each a comma list of per-layer counts.
func parseFanouts(s string) ([]string, error) {
	s = strings.ReplaceAll(s, "\n", ";")
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ";") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		var layers []string
		for _, l := range strings.Split(f, ",") {
			l = strings.TrimSpace(l)
			n, err := strconv.Atoi(l)
			if err != nil || n < 1 || n > maxFanout {
				return nil, fmt.Errorf("%q: each layer's fanout is a whole number from 1 to %d", f, maxFanout)
			}
			layers = append(layers, strconv.Itoa(n))
		}
		if len(layers) > maxLayers {
			return nil, fmt.Errorf("%q: at most %d layers", f, maxLayers)
		}
		norm := strings.Join(layers, ",")
		if seen[norm] {
			return nil, fmt.Errorf("%s is listed twice", norm)
		}
		seen[norm] = true
		out = append(out, norm)
	}
	if len(out) > maxAxisValues {
		return nil, fmt.Errorf("at most %d fanouts", maxAxisValues)
	}
	return out, nil
}

// parseMemLimits reads the memory-limit list: sizes with a unit, a
// percentage of the dataset's feature file, or "none" (engine/train's
// syntax, which the runner reads again). Each must come to at least 1 MiB.
func parseMemLimits(s string, featureBytes int64) ([]string, error) {
	items := splitList(s)
	if len(items) > maxAxisValues {
		return nil, fmt.Errorf("at most %d values", maxAxisValues)
	}
	var out []string
	seen := map[int64]string{}
	for _, it := range items {
		var b int64
		if !strings.EqualFold(it, "none") {
			if strings.HasSuffix(it, "%") && featureBytes <= 0 {
				return nil, fmt.Errorf("%q: a percentage needs a dataset whose feature size is known", it)
			}
			v, err := train.ParseMemLimit(it, featureBytes)
			if err != nil {
				return nil, err
			}
			if v < 1<<20 {
				return nil, fmt.Errorf("%q is %s, below 1 MiB; no run starts in that", it, experiments.FormatBytes(v))
			}
			b = v
		} else {
			it = "none"
		}
		if prev, dup := seen[b]; dup {
			return nil, fmt.Errorf("%s and %s are the same limit", prev, it)
		}
		seen[b] = it
		out = append(out, it)
	}
	return out, nil
}
