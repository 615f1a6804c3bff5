package grid

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"outcore/engine/accel"
	"outcore/engine/dataset"
	"outcore/engine/vocab"
	"outcore/experiments/external"
	"outcore/internal/units"
)

// RunSpec is one validated run of a grid: its cell, the dataset it trains
// on, its memory limit in bytes and its full configuration.
type RunSpec struct {
	Cell
	// Dataset is the dataset the run trains on: the grid's dataset, or
	// <dataset>-d<dim> when the feature_dim axis asks for another dimension,
	// or <dataset>-ids-<numbering> for a cell of the ids axis (IDsDataset).
	Dataset string
	// MemLimitBytes is the resolved limit (0 = none).
	MemLimitBytes int64
	// Config is the engine configuration the child receives, defaults
	// filled in.
	Config vocab.Config
}

// DerivedName is the name of the dataset a feature_dim axis value uses:
// the base dataset regenerated at another feature dimension.
func DerivedName(base string, dim int) string { return fmt.Sprintf("%s-d%d", base, dim) }

// DatasetInfo is what planning needs to know about a dataset.
type DatasetInfo struct {
	Name string
	Meta dataset.Meta
	// Exists is false for a derived dataset the runner will generate, or a
	// pending one a dataset job is making.
	Exists bool
}

// World is what the checks beyond a grid's own limits consult.
type World struct {
	DataDir string
	// MinMem is the floor of a run (VariantMinMemory); nil checks none.
	MinMem MinMemoryFunc
	// Pending are datasets that will exist when the grid is created (a
	// dataset job is generating them), by name.
	Pending map[string]dataset.Meta
	// External is the operator's registry of external systems (DESIGN
	// §14): an "external:NAME" entry must name one of its systems and set
	// only its declared options. nil registers none.
	External *external.Registry
}

// Plan checks a grid against the data directory and the engine's
// registry and expands it into run specs. It lists every problem it finds;
// the runs are expanded and their configurations checked only when the
// grid has no other problem (limitsOK: g.Problems() found none).
//
// refused are the cells that cannot start under their memory limit
// (w.MinMem, vocab.MinMemoryFor: the one floor every caller uses), each
// with its reason; they are not in specs. They are problems too unless the
// grid skips them (SkipInfeasible) and at least one cell can start.
func Plan(g *Grid, w World, limitsOK bool) ([]RunSpec, map[string]DatasetInfo, ProblemList, []RefusedCell) {
	var ps ProblemList
	dsDir := dataset.DatasetsDir(w.DataDir)
	datasets := map[string]DatasetInfo{}
	var base dataset.Meta
	haveBase := false
	switch err := dataset.ValidateName(g.Dataset); {
	case g.Dataset == "":
		// reported by ParseGrid or the form
	case err != nil:
		ps.Add("dataset", "dataset: %v", err)
	default:
		if m, ok := w.Pending[g.Dataset]; ok {
			base, haveBase = m, true
			datasets[g.Dataset] = DatasetInfo{Name: g.Dataset, Meta: m}
			break
		}
		m, err := dataset.ReadMeta(filepath.Join(dsDir, g.Dataset))
		switch {
		case errors.Is(err, dataset.ErrNotFound):
			preset := "tiny"
			if _, err := dataset.Preset(g.Dataset); err == nil {
				preset = g.Dataset // a preset's name: make that preset
			}
			ps.Add("dataset", "dataset: %q not found in %s (make it with `outcore data gen --preset %s --name %s` or `outcore data import`)", g.Dataset, dsDir, preset, g.Dataset)
		case err != nil:
			ps.Add("dataset", "dataset: %q: %v", g.Dataset, err)
		default:
			base, haveBase = m, true
			datasets[g.Dataset] = DatasetInfo{Name: g.Dataset, Meta: m, Exists: true}
		}
	}

	known := vocab.Names()
	variantsOK := true
	for _, s := range g.Axes.System {
		if s == "" {
			continue
		}
		e, err := ParseSystemEntry(s)
		if err != nil {
			variantsOK = false
			ps.Add(AxisSystem, "variants: %v", err)
			continue
		}
		if name, isExt := external.ParseRef(e.Variant); isExt {
			if err := w.External.CheckText(name, e.Options); err != nil {
				variantsOK = false
				ps.Add(AxisSystem, "variants: %s", strings.TrimPrefix(err.Error(), external.ErrRegistry.Error()+": "))
			}
			continue
		}
		if !slices.Contains(known, e.Variant) {
			variantsOK = false
			ps.Add(AxisSystem, "variants: %q is not a variant (known: %s)", e.Variant, strings.Join(known, ", "))
			continue
		}
		v, _ := vocab.LookupVariant(e.Variant)
		for _, k := range sortedKeys(e.Options) {
			if _, declared := v.Option(k); !declared {
				ps.Add(AxisSystem, "variants: %s has no option %q (its options are %s)", e.Variant, k, strings.Join(v.OptionKeys(), ", "))
			}
		}
	}
	// Option keys: each must be declared by every variant of the grid
	// (vocab.Variant.Options); their values are checked per run below.
	if raw, ok := g.Base["options"]; ok {
		var opts map[string]string
		if json.Unmarshal(raw, &opts) == nil && len(opts) > 0 {
			systems := g.Axes.System
			if systems == nil {
				systems = []string{vocab.DefaultConfig().System}
			}
			for _, name := range systems {
				name = VariantOf(name)
				v, ok := vocab.LookupVariant(name)
				if !ok {
					continue
				}
				for _, k := range sortedKeys(opts) {
					if _, declared := v.Option(k); !declared {
						its := "it has none"
						if len(v.Options) > 0 {
							its = "its options are " + strings.Join(v.OptionKeys(), ", ")
						}
						ps.Add("options", "options: %s has no option %q (%s)", name, k, its)
					}
				}
			}
		}
	}
	if variantsOK {
		ps = append(ps, OptionAxisProblems(g)...)
	}
	if haveBase {
		for _, d := range g.Axes.FeatureDim {
			if d <= 0 || d > MaxFeatureDim || d == base.FeatureDim {
				continue
			}
			name := DerivedName(g.Dataset, d)
			if m, err := dataset.ReadMeta(filepath.Join(dsDir, name)); err == nil {
				if m.FeatureDim != d {
					ps.Add(AxisFeatureDim, "feature dimensions: dataset %q exists but has feature dimension %d, not %d", name, m.FeatureDim, d)
					continue
				}
				datasets[name] = DatasetInfo{Name: name, Meta: m, Exists: true}
				continue
			} else if !errors.Is(err, dataset.ErrNotFound) {
				ps.Add(AxisFeatureDim, "feature dimensions: dataset %q: %v", name, err)
				continue
			}
			if base.Source.Kind != "generator" || base.Source.Generator == nil {
				ps.Add(AxisFeatureDim, "feature dimensions: dataset %q was imported (%s), not generated, so it cannot be remade at dimension %d; provide %q yourself or drop the axis",
					g.Dataset, base.Source.Kind, d, name)
				continue
			}
			m := base
			m.Name, m.FeatureDim = name, d
			datasets[name] = DatasetInfo{Name: name, Meta: m, Exists: false}
		}
		for _, ids := range g.Axes.IDs {
			name := IDsDataset(g.Dataset, base, ids)
			if (ids != IDsScattered && ids != IDsLocal) || name == g.Dataset {
				continue // a bad value is reported by Problems
			}
			local := ids == IDsLocal
			if m, err := dataset.ReadMeta(filepath.Join(dsDir, name)); err == nil {
				if gen := m.Source.Generator; gen == nil || !gen.Structured() || gen.IDLocality != local {
					ps.Add(AxisIDs, "node numberings: dataset %q exists but was not made as %s with %s ids (GenConfig.WithIDs); remove it or drop the axis", name, g.Dataset, ids)
					continue
				}
				datasets[name] = DatasetInfo{Name: name, Meta: m, Exists: true}
				continue
			} else if !errors.Is(err, dataset.ErrNotFound) {
				ps.Add(AxisIDs, "node numberings: dataset %q: %v", name, err)
				continue
			}
			if base.Source.Kind != "generator" || base.Source.Generator == nil {
				ps.Add(AxisIDs, "node numberings: dataset %q was imported (%s), not generated, so it cannot be renumbered as the same graph; drop the axis",
					g.Dataset, base.Source.Kind)
				continue
			}
			m := base
			gen := base.Source.Generator.WithIDs(local)
			m.Name, m.Source.Generator = name, &gen
			datasets[name] = DatasetInfo{Name: name, Meta: m, Exists: false}
		}
		// Memory limits resolved per dataset: at least MinMemLimit, and
		// two values must not be the same limit.
		for _, name := range sortedKeys(datasets) {
			info := datasets[name]
			seen := map[int64]string{}
			for _, l := range g.Axes.MemLimit {
				if limitSyntaxProblem(l) != "" {
					continue
				}
				v, err := ParseLimit(l, g.shareBase(info.Meta, base))
				if err != nil {
					ps.Add(AxisMemLimit, "memory limits: %v", err)
					continue
				}
				if v > 0 && v < MinMemLimit {
					ps.Add(AxisMemLimit, "memory limits: %q is %s of %s, below %s; no run starts in that", l, units.Bytes(v), name, units.Bytes(MinMemLimit))
				}
				if prev, dup := seen[v]; dup && !strings.EqualFold(strings.TrimSpace(prev), strings.TrimSpace(l)) {
					ps.Add(AxisMemLimit, "memory limits: %q and %q are the same limit (%s) on %s", prev, l, units.Limit(v), name)
				}
				seen[v] = l
			}
		}
	}
	if !limitsOK || !haveBase || !variantsOK || len(ps) > 0 {
		return nil, datasets, ps, nil
	}

	absData, err := filepath.Abs(w.DataDir)
	if err != nil {
		ps.Add("", "data directory %s: %v", w.DataDir, err)
		return nil, datasets, ps, nil
	}
	var refused []RefusedCell
	cells := g.Cells()
	specs := make([]RunSpec, 0, len(cells))
	for _, c := range cells {
		sp := RunSpec{Cell: c, Dataset: g.Dataset}
		if c.FeatureDim != 0 && c.FeatureDim != base.FeatureDim {
			sp.Dataset = DerivedName(g.Dataset, c.FeatureDim)
		}
		if c.IDs != "" {
			sp.Dataset = IDsDataset(g.Dataset, base, c.IDs)
		}
		info := datasets[sp.Dataset]
		if c.FeatureDim == 0 {
			sp.FeatureDim = info.Meta.FeatureDim
		}
		limit, _ := ParseLimit(c.MemLimit, g.shareBase(info.Meta, base))
		sp.MemLimitBytes = limit

		cfg, msg := runConfig(g, c, sp.Dataset, absData, limit)
		if msg.Message == "" && IsExternal(c.System) {
			cfg, msg = externalConfig(cfg, c, w.External)
		}
		if msg.Message != "" {
			ps.Add(msg.Field, "%s", msg.Message)
			continue
		}
		sp.Config = cfg
		sp.System, sp.Model, sp.BatchSize, sp.Fanout = cfg.System, cfg.Model, cfg.Batch, cfg.Fanout
		// The cell as its run sizes itself (FloorConfig) and the host
		// memory a paper's testbed gives it, from one mapping.
		floorCfg, testbedHost := floorAndHost(cfg, info.Meta)
		// The compute the run will use: under a paper's testbed the
		// mapping's (model:<the paper GPU's profile>) unless the config
		// sets one, as the run applies it; the runs CSV, the API and the
		// estimate's past runs read this.
		if m, err := accel.ParseMode(floorCfg.Compute); err == nil {
			sp.Compute = m.String() // validated with the configuration
		}
		if c.System != "" && c.System != cfg.System {
			sp.System = c.System // a variant with options of its own: its own series
		}
		// An external system has no floor: outcore does not know what it
		// needs to start, so its runs are never refused for memory (a limit
		// too small for it ends as oom, a result like any other).
		// Without a limit of its own, a run under a paper's testbed takes the
		// mapping's host memory (outcore train --testbed), which is checked
		// against the floor here as a given limit is.
		floorLimit, limitWords := limit, c.MemLimit
		if limit == 0 && testbedHost > 0 {
			floorLimit, limitWords = testbedHost, "testbed "+cfg.Testbed+"'s host memory"
		}
		if floorLimit > 0 && w.MinMem != nil && !IsExternal(c.System) {
			if need := w.MinMem(floorCfg, info.Meta); floorLimit < need { // after a testbed's mapping
				refused = append(refused, RefusedCell{Seq: c.Seq, System: sp.System, Dataset: sp.Dataset, Model: sp.Model,
					MemLimit: c.MemLimit, MemLimitBytes: floorLimit, NeedBytes: need, FeatureDim: sp.FeatureDim, BatchSize: sp.BatchSize,
					Fanout: FormatFanout(sp.Fanout), Repeat: c.Repeat,
					Reason: fmt.Sprintf("%s is below the %s that %s needs to start on %s (%d nodes, %d-dim features)",
						units.Bytes(floorLimit), units.Bytes(need), cfg.System, sp.Dataset, info.Meta.Nodes, info.Meta.FeatureDim)})
				if !g.SkipInfeasible {
					ps.Add(AxisMemLimit, "memory limits: %q is %s, below the %s that %s needs to start on %s (%d nodes, %d-dim features)",
						limitWords, units.Bytes(floorLimit), units.Bytes(need), cfg.System, sp.Dataset, info.Meta.Nodes, info.Meta.FeatureDim)
				}
				continue
			}
		}
		specs = append(specs, sp)
	}
	switch {
	case len(refused) > 0 && len(specs) == 0 && g.SkipInfeasible:
		ps.Add(AxisMemLimit, "memory limits: none of the %d runs can start (every limit is below its variant's floor); raise the limits", len(refused))
	case len(refused) > 0 && !g.SkipInfeasible && len(specs) > 0:
		ps.Add(AxisMemLimit, "memory limits: %d of the %d runs cannot start; skip them (grid key \"skip_infeasible\": true, the form's \"Skip the cells that cannot start\") to run the other %d and record these as refused",
			len(refused), len(refused)+len(specs), len(specs))
	}
	if len(ps) > 0 {
		return nil, datasets, ps, refused
	}
	return specs, datasets, nil, refused
}

// runConfig builds and validates the engine configuration of one cell. A
// problem comes back as a Problem (Message "" when there is none).
func runConfig(g *Grid, c Cell, ds, dataDir string, limit int64) (vocab.Config, Problem) {
	m := map[string]any{}
	for k, v := range g.Base {
		m[k] = v
	}
	m["dataset"] = ds
	m["data_dir"] = dataDir
	if c.System != "" {
		e, err := ParseSystemEntry(c.System)
		if err != nil {
			return vocab.Config{}, Problem{Field: AxisSystem, Message: "variants: " + err.Error()}
		}
		m["system"] = e.Variant
		if IsExternal(e.Variant) {
			// The run settings common to every system (dataset, model,
			// batch, fanout, epochs, seed) are checked as a built-in's;
			// externalConfig puts the external system in afterwards.
			m["system"] = vocab.DefaultConfig().System
			delete(m, "options")
		} else if len(e.Options) > 0 {
			opts := map[string]string{}
			if raw, ok := g.Base["options"]; ok {
				if err := json.Unmarshal(raw, &opts); err != nil {
					return vocab.Config{}, Problem{Field: "options", Message: fmt.Sprintf("options: %v", err)}
				}
			}
			for k, v := range e.Options {
				opts[k] = v
			}
			m["options"] = opts
		}
	}
	if c.Model != "" {
		m["model"] = c.Model
	}
	if c.BatchSize != 0 {
		m["batch"] = c.BatchSize
	}
	if c.Compute != "" {
		m["compute"] = c.Compute
	}
	if c.IDs != "" {
		m["ids"] = c.IDs
	}
	if c.Fanout != nil {
		m["fanout"] = c.Fanout
		if _, ok := g.Base["layers"]; !ok {
			m["layers"] = len(c.Fanout)
		}
	}
	if limit > 0 {
		m["mem_limit"] = c.MemLimit
		if g.MemShareOf == MemShareBase && strings.HasSuffix(strings.TrimSpace(c.MemLimit), "%") {
			// a share of the grid's dataset, not of the run's: the run
			// gets the bytes, which it would otherwise re-resolve
			// against its own features (train.Run)
			m["mem_limit"] = strconv.FormatInt(limit, 10)
		}
		m["mem_limit_bytes"] = limit
	}
	if err := applyPathValues(m, c.Extra); err != nil {
		return vocab.Config{}, Problem{Field: "axes", Message: err.Error()}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return vocab.Config{}, Problem{Message: fmt.Sprintf("run %d: the run settings cannot be encoded: %v", c.Seq, err)}
	}
	cfg, err := vocab.ParseConfig(b)
	if err != nil {
		if f := unknownField.FindStringSubmatch(err.Error()); f != nil {
			return cfg, Problem{Field: f[1], Message: fmt.Sprintf("%s: not a setting of a run", f[1])}
		}
		return cfg, Problem{Message: fmt.Sprintf("run %d (%s): %v", c.Seq, describeCell(c), err)}
	}
	if limit > 0 {
		// The grid's limit is authoritative: "25%" was resolved against the
		// run's own dataset above.
		cfg.MemLimitBytes = limit
	}
	// Each repeat its own seed, recorded in the run's configuration
	// (run_order.go).
	cfg.Seed = RepeatSeed(cfg.Seed, c.Repeat)
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		msg := strings.TrimPrefix(err.Error(), vocab.ErrConfig.Error()+": ")
		field, _, _ := strings.Cut(msg, ":")
		if strings.HasPrefix(field, "options.") {
			field = "options"
		}
		return cfg, Problem{Field: field, Message: fmt.Sprintf("%s (run %d: %s)", msg, c.Seq, describeCell(c))}
	}
	return cfg, Problem{}
}

// CellConfig is the validated engine configuration of one cell of g on
// g's own dataset with no memory limit (what runConfig builds for a run,
// without the data directory's checks).
func (g *Grid) CellConfig(c Cell) (vocab.Config, error) {
	cfg, p := runConfig(g, c, g.Dataset, "", 0)
	if p.Message != "" {
		return cfg, errors.New(p.Message)
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
	if c.IDs != "" {
		parts = append(parts, "ids="+c.IDs)
	}
	if c.BatchSize != 0 {
		parts = append(parts, fmt.Sprintf("batch_size=%d", c.BatchSize))
	}
	if c.Fanout != nil {
		parts = append(parts, "fanout="+FormatFanout(c.Fanout))
	}
	if c.Compute != "" {
		parts = append(parts, "compute="+c.Compute)
	}
	if c.MemLimit != "" {
		parts = append(parts, "mem_limit="+c.MemLimit)
	}
	for _, av := range c.Extra {
		parts = append(parts, av.Path+"="+string(av.Value))
	}
	parts = append(parts, fmt.Sprintf("repeat=%d", c.Repeat))
	return strings.Join(parts, " ")
}

// shareBase is the feature bytes a share limit of g is a share of, for a
// run on the dataset whose meta is run: that dataset's own, or with
// "mem_share_of": "base" the grid's dataset's (base).
func (g *Grid) shareBase(run, base dataset.Meta) int64 {
	if g.MemShareOf == MemShareBase && base.Nodes > 0 {
		return base.FeatureBytes()
	}
	return run.FeatureBytes()
}

// ParseLimit parses a memory limit: "none" (or "") is 0 = no limit; sizes
// use internal/units' ParseMemLimit ("512MiB", "2GB", bytes) or a percentage of the
// dataset's feature bytes ("25%"). Zero and negative limits are errors.
func ParseLimit(s string, featureBytes int64) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" || strings.EqualFold(t, "none") {
		return 0, nil
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%q is negative; a limit must be > 0 (or \"none\")", s)
	}
	v, err := units.ParseMemLimit(t, featureBytes)
	if err != nil {
		return 0, err
	}
	if v <= 0 {
		return 0, fmt.Errorf("%q is zero; a limit must be > 0 (write \"none\" for no limit)", s)
	}
	return v, nil
}

// FormatFanout writes a fanout as "10,10,10".
func FormatFanout(f []int) string {
	parts := make([]string, len(f))
	for i, v := range f {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// externalConfig makes a built-in's checked configuration the one of an
// external system's run: System is the entry's "external:NAME" and Options
// are the options the entry sets (checked against reg: the registry
// declares them), as the runner gives them to the program
// (external.Argv). The default variant's own options are dropped.
func externalConfig(cfg vocab.Config, c Cell, reg *external.Registry) (vocab.Config, Problem) {
	e, err := ParseSystemEntry(c.System)
	if err != nil {
		return cfg, Problem{Field: AxisSystem, Message: "variants: " + err.Error()}
	}
	name, _ := external.ParseRef(e.Variant)
	if err := reg.CheckText(name, e.Options); err != nil {
		return cfg, Problem{Field: AxisSystem, Message: "variants: " + strings.TrimPrefix(err.Error(), external.ErrRegistry.Error()+": ")}
	}
	cfg.System = e.Variant
	cfg.Options = e.Options
	return cfg, Problem{}
}
