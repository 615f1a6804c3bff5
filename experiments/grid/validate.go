package grid

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"outcore/engine/accel"
	"outcore/engine/testbed"
	"outcore/engine/vocab"
	"outcore/internal/units"
)

// Limits every grid is held to, whether it comes from the dashboard's
// form, the JSON API or a grid file (`outcore exp create --file`).
const (
	// MaxRuns caps the runs one grid may expand into (a typo such as
	// "repeat": 1000 should not queue a week of work).
	MaxRuns       = 10000
	MaxAxisValues = 32 // values per axis
	MaxNameLen    = 100
	MaxEpochs     = 1000
	MaxRepeats    = 100
	MaxFeatureDim = 65536
	MaxBatch      = 1 << 20
	MaxFanout     = 1000 // per layer; -1 (all neighbours) is also allowed
	MaxLayers     = 6
	MaxHidden     = 8192
	MaxHeads      = 64
	// MinMemLimit is the smallest memory limit a grid may ask for; no
	// variant starts in less (see vocab.RuntimeFloor).
	MinMemLimit = 1 << 20
)

// Models are the models a run may train.
var Models = []string{"sage", "gcn", "gat"}

// Problem is one thing wrong with a grid.
type Problem struct {
	// Field is the grid key at fault: "name", "dataset", an axis
	// ("system", "mem_limit", "feature_dim", "batch_size", "model",
	// "fanout", "repeat"), a run setting ("epochs", "hidden", "options",
	// ...), or "" for the grid as a whole.
	Field string `json:"field"`
	// Message says what is wrong in words, starting with what it is about
	// ("memory limits: ...").
	Message string `json:"message"`
}

// InvalidError is the error of a grid with problems; errors.Is(err,
// ErrInvalid) holds for it.
type InvalidError struct {
	Problems []Problem
}

func (e *InvalidError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Message
	}
	return ErrInvalid.Error() + ": " + strings.Join(msgs, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// ProblemsOf returns the problems of an error from ParseGrid or Create
// (nil when err is not about the grid).
func ProblemsOf(err error) []Problem {
	var ie *InvalidError
	if errors.As(err, &ie) {
		return ie.Problems
	}
	return nil
}

// invalid is a grid error with one problem about field.
func invalid(field, format string, a ...any) error {
	return &InvalidError{Problems: []Problem{{Field: field, Message: field + ": " + fmt.Sprintf(format, a...)}}}
}

// ProblemList collects the problems of a grid as they are found; Err
// makes the error that lists them.
type ProblemList []Problem

// Add records a problem once (a second identical one is dropped).
func (ps *ProblemList) Add(field, format string, a ...any) *ProblemList {
	msg := fmt.Sprintf(format, a...)
	for _, p := range *ps {
		if p.Field == field && p.Message == msg {
			return ps
		}
	}
	*ps = append(*ps, Problem{Field: field, Message: msg})
	return ps
}

// Err is nil without problems, else an *InvalidError.
func (ps ProblemList) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return &InvalidError{Problems: ps}
}

// words name an axis in messages.
type words struct {
	plural string // "memory limits"
	want   string // what the axis takes, as a list
	want1  string // what the axis takes, given once at the top level
}

var axisWords = map[string]words{
	AxisSystem:     {"variants", "want a non-empty list of variant names", "want a variant name"},
	AxisModel:      {"models", "want a non-empty list of models (" + strings.Join(Models, ", ") + ")", "want a model name"},
	AxisMemLimit:   {"memory limits", `want a non-empty list of sizes such as ["256MiB", "1GiB", "25%", "none"]`, `want a size such as "512MiB", a number of bytes, or "none"`},
	AxisFeatureDim: {"feature dimensions", "want a non-empty list of whole numbers", "want a whole number"},
	AxisBatchSize:  {"batch sizes", "want a non-empty list of whole numbers", "want a whole number"},
	AxisFanout:     {"fanouts", `want a non-empty list of fanouts such as [[10, 5], [15, 10]] or ["10,5"]`, `want a fanout such as [10, 5] or "10,5"`},
	AxisCompute:    {"compute modes", `want a non-empty list of compute modes such as ["cpu", "none", "model:h100-roofline"]`, `want a compute mode: "cpu", "none" or "model:PROFILE"`},
	AxisIDs:        {"node numberings", `want a non-empty list of node numberings: ["scattered", "local"]`, `want a node numbering: "scattered" or "local"`},
	AxisRepeat:     {"repeats", fmt.Sprintf("want a whole number from 1 to %d", MaxRepeats), ""},
}

// Problems checks the grid against every limit that needs no knowledge of
// the data directory: name, value ranges, duplicate axis values, run
// count, the shared run settings. (*Manager).Check adds the checks that
// need the data directory and the variants.
func (g *Grid) Problems() []Problem {
	var ps ProblemList
	name := g.Name
	switch {
	case !utf8.ValidString(name):
		ps.Add("name", "name: not valid UTF-8 text")
	case utf8.RuneCountInString(name) > MaxNameLen:
		ps.Add("name", "name: %d characters, at most %d", utf8.RuneCountInString(name), MaxNameLen)
	case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		ps.Add("name", "name: only printable characters")
	}
	a := g.Axes
	countValues := func(axis string, n int) {
		if n > MaxAxisValues {
			ps.Add(axis, "%s: %d values, at most %d", axisWords[axis].plural, n, MaxAxisValues)
		}
	}
	twice := func(axis string, seen map[string]bool, v string) {
		if seen[v] {
			ps.Add(axis, "%s: %s is listed twice", axisWords[axis].plural, v)
		}
		seen[v] = true
	}
	seen := map[string]bool{}
	countValues(AxisSystem, len(a.System))
	for _, s := range a.System {
		if s == "" {
			ps.Add(AxisSystem, "variants: an empty name")
			continue
		}
		twice(AxisSystem, seen, strconv.Quote(s))
	}
	seen = map[string]bool{}
	countValues(AxisModel, len(a.Model))
	for _, m := range a.Model {
		if !slices.Contains(Models, m) {
			ps.Add(AxisModel, "models: %q is not a model (have %s)", m, strings.Join(Models, ", "))
			continue
		}
		twice(AxisModel, seen, strconv.Quote(m))
	}
	seen = map[string]bool{}
	countValues(AxisFeatureDim, len(a.FeatureDim))
	for _, d := range a.FeatureDim {
		if d < 1 || d > MaxFeatureDim {
			ps.Add(AxisFeatureDim, "feature dimensions: %d is not a whole number from 1 to %d", d, MaxFeatureDim)
			continue
		}
		twice(AxisFeatureDim, seen, strconv.Itoa(d))
	}
	seen = map[string]bool{}
	for _, v := range a.IDs {
		if v != IDsScattered && v != IDsLocal {
			ps.Add(AxisIDs, "node numberings: %q is not one (have %q: ids scattered by a keyed permutation, %q: numbered community by community)", v, IDsScattered, IDsLocal)
			continue
		}
		twice(AxisIDs, seen, strconv.Quote(v))
	}
	if len(a.IDs) > 0 && len(a.FeatureDim) > 0 {
		ps.Add(AxisIDs, "node numberings: not together with feature dimensions (each derives a dataset of its own); vary one of them")
	}
	seen = map[string]bool{}
	countValues(AxisBatchSize, len(a.BatchSize))
	for _, b := range a.BatchSize {
		if b < 1 || b > MaxBatch {
			ps.Add(AxisBatchSize, "batch sizes: %d is not a whole number from 1 to %d", b, MaxBatch)
			continue
		}
		twice(AxisBatchSize, seen, strconv.Itoa(b))
	}
	seen = map[string]bool{}
	countValues(AxisFanout, len(a.Fanout))
	for _, f := range a.Fanout {
		if msg := fanoutProblem(f); msg != "" {
			ps.Add(AxisFanout, "fanouts: %s", msg)
			continue
		}
		twice(AxisFanout, seen, strconv.Quote(FormatFanout(f)))
	}
	seen = map[string]bool{}
	countValues(AxisCompute, len(a.Compute))
	for _, c := range a.Compute {
		m, err := accel.ParseMode(c)
		if err != nil {
			ps.Add(AxisCompute, "compute modes: %v", err)
			continue
		}
		if m.Kind == accel.ComputeModel {
			if _, err := accel.LoadProfile(m.Profile); err != nil {
				ps.Add(AxisCompute, "compute modes: %q: %v", c, err)
				continue
			}
		}
		twice(AxisCompute, seen, strconv.Quote(m.String()))
	}
	seen = map[string]bool{}
	countValues(AxisMemLimit, len(a.MemLimit))
	for _, l := range a.MemLimit {
		if msg := limitSyntaxProblem(l); msg != "" {
			ps.Add(AxisMemLimit, "memory limits: %s", msg)
			continue
		}
		key := strings.ToLower(strings.TrimSpace(l))
		if key == "" {
			key = "none"
		}
		twice(AxisMemLimit, seen, strconv.Quote(key))
	}
	if g.Frontier != nil {
		if len(a.MemLimit) > 0 {
			ps.Add(AxisMemLimit, "memory limits: a frontier search chooses its own limits (from each variant's floor to 100 %%); leave mem_limit out")
		}
		if a.Repeat > 1 {
			ps.Add(AxisRepeat, "repeats: a frontier search runs each probe once (repeat 1)")
		}
	}
	if a.Repeat < 1 || a.Repeat > MaxRepeats {
		ps.Add(AxisRepeat, "repeats: %d is not a whole number from 1 to %d", a.Repeat, MaxRepeats)
	}
	ps = append(ps, baseProblems(g.Base)...)
	ps = append(ps, pathAxisProblems(g)...)
	if n := g.Count(); n > MaxRuns {
		if n == int(^uint(0)>>1) {
			ps.Add("", "the grid makes more runs than can be counted; at most %d per experiment", MaxRuns)
		} else {
			ps.Add("", "the grid makes %d runs; at most %d per experiment", n, MaxRuns)
		}
	}
	return ps
}

// fanoutProblem says what is wrong with one fanout ("" when nothing).
func fanoutProblem(f []int) string {
	if len(f) == 0 {
		return "an empty fanout (give one count per layer)"
	}
	if len(f) > MaxLayers {
		return fmt.Sprintf("%q has %d layers, at most %d", FormatFanout(f), len(f), MaxLayers)
	}
	for _, n := range f {
		if n != -1 && (n < 1 || n > MaxFanout) {
			return fmt.Sprintf("%q: each layer's fanout is a whole number from 1 to %d, or -1 for all neighbours", FormatFanout(f), MaxFanout)
		}
	}
	return ""
}

// limitSyntaxProblem checks a memory limit without the dataset (a
// percentage is resolved per dataset by the world checks).
func limitSyntaxProblem(s string) string {
	t := strings.TrimSpace(s)
	if t == "" || strings.EqualFold(t, "none") {
		return ""
	}
	if strings.HasPrefix(t, "-") {
		return fmt.Sprintf("%q is negative; a limit must be > 0 (or \"none\")", s)
	}
	v, err := units.ParseMemLimit(t, 1<<30)
	if err != nil {
		return err.Error()
	}
	if v <= 0 && !strings.HasSuffix(t, "%") {
		return fmt.Sprintf("%q is zero; a limit must be > 0 (write \"none\" for no limit)", s)
	}
	return ""
}

// baseProblems checks the run settings shared by every run: each key must
// be a field of the run configuration with a value of its type, within the
// same bounds as the form's.
func baseProblems(base map[string]json.RawMessage) []Problem {
	var ps ProblemList
	cfg := vocab.DefaultConfig()
	for _, k := range sortedKeys(base) {
		if k == "mem_limit_bytes" || k == "data_dir" {
			continue // reported by ParseGrid
		}
		b, _ := json.Marshal(map[string]json.RawMessage{k: base[k]})
		if _, err := vocab.ParseConfig(b); err != nil {
			if strings.Contains(err.Error(), "unknown field") {
				ps.Add(k, "%s: not a setting of a run (the settings are %s)", k, strings.Join(configKeys(), ", "))
			} else {
				ps.Add(k, "%s: %s is not a value of the right type (%s)", k, truncateRaw(base[k]), jsonTypeOf(k))
			}
			continue
		}
		_ = json.Unmarshal(b, &cfg)
	}
	given := func(key string) bool { _, ok := base[key]; return ok }
	ps = append(ps, RangeProblems(cfg, given)...)
	if given("testbed") && cfg.Testbed != "" && !slices.Contains(testbed.Names(), cfg.Testbed) {
		ps.Add("testbed", "testbed: unknown testbed %q (have %s)", cfg.Testbed, strings.Join(testbed.Names(), ", "))
	}
	if _, given := base["eval_fanout"]; given && cfg.EvalFanout != nil {
		if msg := fanoutProblem(cfg.EvalFanout); msg != "" {
			ps.Add("eval_fanout", "eval_fanout: %s", msg)
		}
	}
	for k, v := range cfg.Options {
		if len(k) > 100 || len(v) > 1000 {
			ps.Add("options", "options: %q is longer than an option name (100) or value (1000) may be", units.Clip(k, 40))
		}
	}
	return ps
}

// configKeys lists the JSON names of the run configuration's fields that
// a grid may set.
func configKeys() []string {
	var keys []string
	t := reflect.TypeOf(vocab.Config{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && name != "data_dir" && name != "mem_limit_bytes" {
			keys = append(keys, name)
		}
	}
	sort.Strings(keys)
	return keys
}

// jsonTypeOf names the JSON type a run setting takes.
func jsonTypeOf(key string) string {
	switch key {
	case "dataset", "system", "model", "eval", "io", "mem_limit", "model_mem", "compute", "testbed":
		return "want a string"
	case "fanout", "eval_fanout":
		return "want a list of whole numbers"
	case "dropout", "lr", "weight_decay", "step_dilation":
		return "want a number"
	case "row_normalize", "allow_buffered":
		return "want true or false"
	case "options":
		return `want an object of option name → string value, e.g. {"cache": "25%"}`
	}
	return "want a whole number within the bounds of its type"
}

func truncateRaw(b json.RawMessage) string { return units.Clip(string(b), 60) }
