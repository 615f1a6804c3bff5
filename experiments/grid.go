package experiments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every error about a grid the user wrote; the
// message names the field ("axes.mem_limit[1]: ...").
var ErrInvalid = errors.New("invalid experiment")

// Axis names, as written under "axes" in a grid file.
const (
	AxisSystem     = "system"
	AxisMemLimit   = "mem_limit"
	AxisFeatureDim = "feature_dim"
	AxisBatchSize  = "batch_size"
	AxisModel      = "model"
	AxisFanout     = "fanout"
	AxisRepeat     = "repeat"
)

// AxisNames lists the axes a grid may vary, in expansion order (repeat is
// the outermost loop, mem_limit the innermost).
var AxisNames = []string{AxisRepeat, AxisSystem, AxisModel, AxisFeatureDim, AxisBatchSize, AxisFanout, AxisMemLimit}

// MaxRuns caps the runs one grid may expand into (a typo such as
// "repeat": 1000 should not queue a week of work).
const MaxRuns = 10000

// Grid is a parsed grid file:
//
//	{"name": "limits", "dataset": "tiny", "model": "sage", "epochs": 1,
//	 "axes": {"system": ["pyg+", "ginex", "gnndrive"],
//	          "mem_limit": ["256MiB", "512MiB", "1GiB"], "repeat": 2}}
//
// "executor" ("local" or "slurm") and "slurm" (SlurmGrid) say where the
// runs run. Every other top-level key besides "name" and "axes" is a field of the run
// configuration (engine/train.Config: dataset, model, epochs, hidden, lr,
// io, options, ...), shared by all runs. Each axis lists values for one
// field; the runs are the cartesian product of the axes, each repeated
// "repeat" times. An axis may instead be given once at the top level
// ("system": "ginex"). Axis → config field: system → system, model →
// model, batch_size → batch, fanout → fanout, mem_limit → mem_limit (and
// the cgroup limit), feature_dim → dataset (see Expand).
type Grid struct {
	Name    string
	Dataset string
	// Base holds the configuration keys shared by every run.
	Base map[string]json.RawMessage
	Axes Axes
	// Raw is the grid file as given (compacted).
	Raw json.RawMessage
	// Executor is the grid's "executor" ("" = the queue's default) and
	// Slurm its "slurm" settings (executor_options.go).
	Executor string
	Slurm    *SlurmGrid
	// topLevel maps an axis given once at the top level to its key there.
	topLevel map[string]string
}

// Axes are the values a grid varies. A nil list means the axis is not
// varied (the base configuration, or the engine default, applies).
type Axes struct {
	System     []string
	MemLimit   []string // "256MiB", "1GiB", "25%" (of the features), "none"
	FeatureDim []int
	BatchSize  []int
	Model      []string
	Fanout     [][]int
	Repeat     int // >= 1
}

// invalid builds an ErrInvalid error naming field.
func invalid(field, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, field, fmt.Sprintf(format, a...))
}

// ParseGrid parses and shape-checks a grid file. Values are checked
// against datasets and variants by (*Manager).Create.
func ParseGrid(b []byte) (*Grid, error) {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("%w: grid file is not a JSON object: %v", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: grid file has data after its JSON object", ErrInvalid)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, fmt.Errorf("%w: grid file: %v", ErrInvalid, err)
	}
	g := &Grid{Base: map[string]json.RawMessage{}, Raw: compact.Bytes(), Axes: Axes{Repeat: 1}, topLevel: map[string]string{}}
	for k, v := range top {
		switch k {
		case "name":
			if err := json.Unmarshal(v, &g.Name); err != nil {
				return nil, invalid("name", "want a string")
			}
		case "axes":
			if err := parseAxes(v, &g.Axes); err != nil {
				return nil, err
			}
		case "executor", "slurm":
			if err := parseExecutorKey(g, k, v); err != nil {
				return nil, err
			}
		default:
			g.Base[k] = v
		}
	}
	if v, ok := g.Base["dataset"]; ok {
		if err := json.Unmarshal(v, &g.Dataset); err != nil {
			return nil, invalid("dataset", "want a dataset name (string)")
		}
	}
	if g.Dataset == "" {
		return nil, invalid("dataset", "missing (the name of a dataset in the data directory)")
	}
	// Axes given once at the top level.
	type single struct {
		key, axis string
		set       func(json.RawMessage) error
		isSet     func() bool
	}
	singles := []single{
		{"system", AxisSystem, func(v json.RawMessage) error { return oneString(v, "system", &g.Axes.System) }, func() bool { return g.Axes.System != nil }},
		{"model", AxisModel, func(v json.RawMessage) error { return oneString(v, "model", &g.Axes.Model) }, func() bool { return g.Axes.Model != nil }},
		{"mem_limit", AxisMemLimit, func(v json.RawMessage) error {
			s, err := limitString(v)
			if err != nil {
				return invalid("mem_limit", "%v", err)
			}
			g.Axes.MemLimit = []string{s}
			return nil
		}, func() bool { return g.Axes.MemLimit != nil }},
		{"feature_dim", AxisFeatureDim, func(v json.RawMessage) error { return oneInt(v, "feature_dim", &g.Axes.FeatureDim) }, func() bool { return g.Axes.FeatureDim != nil }},
		{"batch_size", AxisBatchSize, func(v json.RawMessage) error { return oneInt(v, "batch_size", &g.Axes.BatchSize) }, func() bool { return g.Axes.BatchSize != nil }},
		{"batch", AxisBatchSize, func(v json.RawMessage) error { return oneInt(v, "batch", &g.Axes.BatchSize) }, func() bool { return g.Axes.BatchSize != nil }},
		{"fanout", AxisFanout, func(v json.RawMessage) error {
			f, err := fanoutValue(v)
			if err != nil {
				return invalid("fanout", "%v", err)
			}
			g.Axes.Fanout = [][]int{f}
			return nil
		}, func() bool { return g.Axes.Fanout != nil }},
	}
	for _, s := range singles {
		v, ok := g.Base[s.key]
		if !ok {
			continue
		}
		if s.isSet() {
			return nil, invalid(s.key, "given both at the top level and as axes.%s; keep one", s.axis)
		}
		if err := s.set(v); err != nil {
			return nil, err
		}
		delete(g.Base, s.key)
		g.topLevel[s.axis] = s.key
	}
	for _, k := range []string{"mem_limit_bytes", "data_dir"} {
		if _, ok := g.Base[k]; ok {
			return nil, invalid(k, "set by the runner; use mem_limit (axis or top level) and --data-dir")
		}
	}
	if n := g.Count(); n > MaxRuns {
		return nil, invalid("axes", "the grid expands into %d runs, more than %d", n, MaxRuns)
	}
	return g, nil
}

func oneString(v json.RawMessage, field string, dst *[]string) error {
	var s string
	if err := json.Unmarshal(v, &s); err != nil || s == "" {
		return invalid(field, "want a non-empty string")
	}
	*dst = []string{s}
	return nil
}

func oneInt(v json.RawMessage, field string, dst *[]int) error {
	var n int
	if err := json.Unmarshal(v, &n); err != nil {
		return invalid(field, "want an integer")
	}
	*dst = []int{n}
	return nil
}

// limitString accepts "256MiB" or a number of bytes.
func limitString(v json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s, nil
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&n); err == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("want a size such as \"512MiB\", a number of bytes, or \"none\"; got %s", v)
}

// fanoutValue accepts [10, 10, 10] or "10,10,10".
func fanoutValue(v json.RawMessage) ([]int, error) {
	var list []int
	if err := json.Unmarshal(v, &list); err == nil {
		if len(list) == 0 {
			return nil, errors.New("empty fanout")
		}
		return list, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("want a list such as [10, 10] or \"10,10\"; got %s", v)
	}
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("bad fanout %q", s)
		}
		list = append(list, n)
	}
	return list, nil
}

func parseAxes(raw json.RawMessage, a *Axes) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return invalid("axes", "want an object of axis name -> list of values")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		field := "axes." + k
		var err error
		switch k {
		case AxisSystem:
			err = stringList(v, field, &a.System)
		case AxisModel:
			err = stringList(v, field, &a.Model)
		case AxisMemLimit:
			var items []json.RawMessage
			if e := json.Unmarshal(v, &items); e != nil || len(items) == 0 {
				return invalid(field, "want a non-empty list of sizes such as [\"256MiB\", \"1GiB\"]")
			}
			for i, it := range items {
				s, e := limitString(it)
				if e != nil {
					return invalid(fmt.Sprintf("%s[%d]", field, i), "%v", e)
				}
				a.MemLimit = append(a.MemLimit, s)
			}
		case AxisFeatureDim:
			err = intList(v, field, &a.FeatureDim)
		case AxisBatchSize, "batch":
			err = intList(v, field, &a.BatchSize)
		case AxisFanout:
			var items []json.RawMessage
			if e := json.Unmarshal(v, &items); e != nil || len(items) == 0 {
				return invalid(field, "want a non-empty list of fanouts such as [[10,10],[15,10]] or [\"10,10\"]")
			}
			for i, it := range items {
				f, e := fanoutValue(it)
				if e != nil {
					return invalid(fmt.Sprintf("%s[%d]", field, i), "%v", e)
				}
				a.Fanout = append(a.Fanout, f)
			}
		case AxisRepeat:
			if e := json.Unmarshal(v, &a.Repeat); e != nil {
				return invalid(field, "want a positive integer")
			}
			if a.Repeat < 1 {
				return invalid(field, "%d, want >= 1", a.Repeat)
			}
		default:
			return invalid(field, "unknown axis (axes are %s)", strings.Join(AxisNames, ", "))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func stringList(v json.RawMessage, field string, dst *[]string) error {
	var l []string
	if err := json.Unmarshal(v, &l); err != nil || len(l) == 0 {
		return invalid(field, "want a non-empty list of strings")
	}
	for i, s := range l {
		if s == "" {
			return invalid(fmt.Sprintf("%s[%d]", field, i), "empty string")
		}
	}
	*dst = l
	return nil
}

func intList(v json.RawMessage, field string, dst *[]int) error {
	var l []int
	if err := json.Unmarshal(v, &l); err != nil || len(l) == 0 {
		return invalid(field, "want a non-empty list of integers")
	}
	*dst = l
	return nil
}

// Count is the number of runs the grid expands into.
func (g *Grid) Count() int {
	n := max(g.Axes.Repeat, 1)
	for _, l := range []int{len(g.Axes.System), len(g.Axes.MemLimit), len(g.Axes.FeatureDim), len(g.Axes.BatchSize), len(g.Axes.Model), len(g.Axes.Fanout)} {
		if l > 0 {
			n *= l
		}
	}
	return n
}

// Cell is one run of an expanded grid before validation: axis values
// (zero values where the axis is not varied).
type Cell struct {
	Seq        int
	Repeat     int
	System     string
	Model      string
	FeatureDim int
	BatchSize  int
	Fanout     []int
	MemLimit   string
}

// Cells expands the grid into its runs, repeat outermost and mem_limit
// innermost, so each repeat covers every cell before the next begins.
func (g *Grid) Cells() []Cell {
	orNil := func(n int) int { return max(n, 1) }
	a := g.Axes
	var out []Cell
	for rep := 0; rep < max(a.Repeat, 1); rep++ {
		for si := 0; si < orNil(len(a.System)); si++ {
			for mi := 0; mi < orNil(len(a.Model)); mi++ {
				for di := 0; di < orNil(len(a.FeatureDim)); di++ {
					for bi := 0; bi < orNil(len(a.BatchSize)); bi++ {
						for fi := 0; fi < orNil(len(a.Fanout)); fi++ {
							for li := 0; li < orNil(len(a.MemLimit)); li++ {
								c := Cell{Seq: len(out), Repeat: rep}
								if len(a.System) > 0 {
									c.System = a.System[si]
								}
								if len(a.Model) > 0 {
									c.Model = a.Model[mi]
								}
								if len(a.FeatureDim) > 0 {
									c.FeatureDim = a.FeatureDim[di]
								}
								if len(a.BatchSize) > 0 {
									c.BatchSize = a.BatchSize[bi]
								}
								if len(a.Fanout) > 0 {
									c.Fanout = a.Fanout[fi]
								}
								if len(a.MemLimit) > 0 {
									c.MemLimit = a.MemLimit[li]
								}
								out = append(out, c)
							}
						}
					}
				}
			}
		}
	}
	return out
}
