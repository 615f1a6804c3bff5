package experiments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"outcore/engine/dataset"
	"outcore/engine/train"
)

// RunSpec is one validated run of a grid: its cell, the dataset it trains
// on, its memory limit in bytes and its full configuration.
type RunSpec struct {
	Cell
	// Dataset is the dataset the run trains on: the grid's dataset, or
	// <dataset>-d<dim> when the feature_dim axis asks for another dimension.
	Dataset string
	// MemLimitBytes is the resolved limit (0 = none).
	MemLimitBytes int64
	// Config is the engine configuration the child receives, defaults
	// filled in.
	Config train.Config
}

// DerivedName is the name of the dataset a feature_dim axis value uses:
// the base dataset regenerated at another feature dimension.
func DerivedName(base string, dim int) string { return fmt.Sprintf("%s-d%d", base, dim) }

// datasetInfo is what planning needs to know about a dataset.
type datasetInfo struct {
	Name string
	Meta dataset.Meta
	// Exists is false for a derived dataset the runner will generate.
	Exists bool
}

// plan validates a grid against the data directory and the engine's
// registry and expands it into run specs. Every error wraps ErrInvalid and
// names the grid field at fault.
func plan(g *Grid, dataDir string, minMem MinMemoryFunc) ([]RunSpec, map[string]datasetInfo, error) {
	dsDir := dataset.DatasetsDir(dataDir)
	if err := dataset.ValidateName(g.Dataset); err != nil {
		return nil, nil, invalid("dataset", "%v", err)
	}
	base, err := dataset.ReadMeta(filepath.Join(dsDir, g.Dataset))
	if err != nil {
		if errors.Is(err, dataset.ErrNotFound) {
			return nil, nil, invalid("dataset", "%q not found in %s (make it with `outcore data gen --preset tiny --name %s` or `outcore data import`)", g.Dataset, dsDir, g.Dataset)
		}
		return nil, nil, invalid("dataset", "%q: %v", g.Dataset, err)
	}
	datasets := map[string]datasetInfo{g.Dataset: {Name: g.Dataset, Meta: base, Exists: true}}

	known := train.Names()
	for i, s := range g.Axes.System {
		if !contains(known, s) {
			return nil, nil, invalid(axisField(g, AxisSystem, i), "unknown variant %q (known: %s)", s, strings.Join(known, ", "))
		}
	}
	for i, s := range g.Axes.MemLimit {
		if _, err := parseLimit(s, 1); err != nil {
			return nil, nil, invalid(axisField(g, AxisMemLimit, i), "%v", err)
		}
	}
	for i, d := range g.Axes.FeatureDim {
		field := axisField(g, AxisFeatureDim, i)
		if d <= 0 {
			return nil, nil, invalid(field, "%d, want a positive dimension", d)
		}
		if d == base.FeatureDim {
			continue
		}
		name := DerivedName(g.Dataset, d)
		if m, err := dataset.ReadMeta(filepath.Join(dsDir, name)); err == nil {
			if m.FeatureDim != d {
				return nil, nil, invalid(field, "dataset %q exists but has feature_dim %d, not %d", name, m.FeatureDim, d)
			}
			datasets[name] = datasetInfo{Name: name, Meta: m, Exists: true}
			continue
		} else if !errors.Is(err, dataset.ErrNotFound) {
			return nil, nil, invalid(field, "dataset %q: %v", name, err)
		}
		if base.Source.Kind != "generator" || base.Source.Generator == nil {
			return nil, nil, invalid(field, "dataset %q was imported (%s), not generated, so it cannot be remade at dimension %d; provide %q yourself or drop the axis",
				g.Dataset, base.Source.Kind, d, name)
		}
		m := base
		m.Name, m.FeatureDim = name, d
		datasets[name] = datasetInfo{Name: name, Meta: m, Exists: false}
	}
	for i, b := range g.Axes.BatchSize {
		if b <= 0 {
			return nil, nil, invalid(axisField(g, AxisBatchSize, i), "%d, want a positive batch size", b)
		}
	}

	absData, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	cells := g.Cells()
	specs := make([]RunSpec, 0, len(cells))
	for _, c := range cells {
		sp := RunSpec{Cell: c, Dataset: g.Dataset}
		if c.FeatureDim != 0 && c.FeatureDim != base.FeatureDim {
			sp.Dataset = DerivedName(g.Dataset, c.FeatureDim)
		}
		info := datasets[sp.Dataset]
		if c.FeatureDim == 0 {
			sp.FeatureDim = info.Meta.FeatureDim
		}
		limit, _ := parseLimit(c.MemLimit, info.Meta.FeatureBytes())
		sp.MemLimitBytes = limit

		cfg, err := runConfig(g, c, sp.Dataset, absData, limit)
		if err != nil {
			return nil, nil, err
		}
		sp.Config = cfg
		sp.System, sp.Model, sp.BatchSize, sp.Fanout = cfg.System, cfg.Model, cfg.Batch, cfg.Fanout
		if limit > 0 && minMem != nil {
			need := minMem(cfg, info.Meta)
			if limit < need {
				return nil, nil, invalid(axisField(g, AxisMemLimit, indexOf(g.Axes.MemLimit, c.MemLimit)),
					"%s is below the %s that %s needs to start on %s (%d nodes, %d-dim features)",
					FormatBytes(limit), FormatBytes(need), cfg.System, sp.Dataset, info.Meta.Nodes, info.Meta.FeatureDim)
			}
		}
		specs = append(specs, sp)
	}
	return specs, datasets, nil
}

// runConfig builds and validates the engine configuration of one cell.
func runConfig(g *Grid, c Cell, ds, dataDir string, limit int64) (train.Config, error) {
	m := map[string]any{}
	for k, v := range g.Base {
		m[k] = v
	}
	m["dataset"] = ds
	m["data_dir"] = dataDir
	if c.System != "" {
		m["system"] = c.System
	}
	if c.Model != "" {
		m["model"] = c.Model
	}
	if c.BatchSize != 0 {
		m["batch"] = c.BatchSize
	}
	if c.Fanout != nil {
		m["fanout"] = c.Fanout
		if _, ok := g.Base["layers"]; !ok {
			m["layers"] = len(c.Fanout)
		}
	}
	if limit > 0 {
		m["mem_limit"] = c.MemLimit
		m["mem_limit_bytes"] = limit
	}
	b, err := json.Marshal(m)
	if err != nil {
		return train.Config{}, fmt.Errorf("%w: encode run config: %v", ErrInvalid, err)
	}
	cfg := train.DefaultConfig()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		if f := unknownField.FindStringSubmatch(err.Error()); f != nil {
			return cfg, invalid(f[1], "not a field of the run configuration (engine/train.Config)")
		}
		return cfg, fmt.Errorf("%w: run configuration: %v", ErrInvalid, err)
	}
	if limit > 0 {
		// The grid's limit is authoritative: "25%" was resolved against the
		// run's own dataset above.
		cfg.MemLimitBytes = limit
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: run %d (%s): %v", ErrInvalid, c.Seq, describeCell(c), err)
	}
	return cfg, nil
}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

func describeCell(c Cell) string {
	var parts []string
	if c.System != "" {
		parts = append(parts, "system="+c.System)
	}
	if c.Model != "" {
		parts = append(parts, "model="+c.Model)
	}
	if c.FeatureDim != 0 {
		parts = append(parts, fmt.Sprintf("feature_dim=%d", c.FeatureDim))
	}
	if c.BatchSize != 0 {
		parts = append(parts, fmt.Sprintf("batch_size=%d", c.BatchSize))
	}
	if c.Fanout != nil {
		parts = append(parts, "fanout="+FormatFanout(c.Fanout))
	}
	if c.MemLimit != "" {
		parts = append(parts, "mem_limit="+c.MemLimit)
	}
	parts = append(parts, fmt.Sprintf("repeat=%d", c.Repeat))
	return strings.Join(parts, " ")
}

// axisField names an axis value in messages: "axes.system[1]" when the
// grid varies it, or the top-level key when it was given once.
func axisField(g *Grid, axis string, i int) string {
	if key, ok := g.topLevel[axis]; ok {
		return key
	}
	return fmt.Sprintf("axes.%s[%d]", axis, i)
}

// parseLimit parses a memory limit: "none" (or "") is 0 = no limit; sizes
// use engine/train's units ("512MiB", "2GB", bytes) or a percentage of the
// dataset's feature bytes ("25%"). Zero and negative limits are errors.
func parseLimit(s string, featureBytes int64) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" || strings.EqualFold(t, "none") {
		return 0, nil
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%q is negative; a limit must be > 0 (or \"none\")", s)
	}
	v, err := train.ParseMemLimit(t, featureBytes)
	if err != nil {
		return 0, fmt.Errorf("%q: %v", s, err)
	}
	if v <= 0 {
		return 0, fmt.Errorf("%q is zero; a limit must be > 0 (write \"none\" for no limit)", s)
	}
	return v, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return 0
}

// FormatBytes writes a byte count with a binary unit ("256MiB", "1.5GiB").
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit || u == "TiB" {
			if f == float64(int64(f)) {
				return fmt.Sprintf("%d%s", int64(f), u)
			}
			return fmt.Sprintf("%.1f%s", f, u)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// FormatFanout writes a fanout as "10,10,10".
func FormatFanout(f []int) string {
	parts := make([]string, len(f))
	for i, v := range f {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// fileExists reports whether p exists.
func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
