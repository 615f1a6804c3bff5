package grid

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every error about a grid the user wrote. Such
// an error is an *InvalidError listing every problem found, each in words
// ("memory limits: "1e30" is above the largest memory limit, 1 PiB").
var ErrInvalid = errors.New("invalid experiment")

// Axis names, as written under "axes" in a grid file.
const (
	AxisSystem     = "system"
	AxisMemLimit   = "mem_limit"
	AxisFeatureDim = "feature_dim"
	AxisBatchSize  = "batch_size"
	AxisModel      = "model"
	AxisFanout     = "fanout"
	AxisCompute    = "compute"
	AxisRepeat     = "repeat"
	AxisIDs        = "ids"
)

// The values of a grid's "mem_share_of" (Grid.MemShareOf).
const (
	MemShareRun  = ""     // "run": each run's own dataset
	MemShareBase = "base" // the grid's dataset
)

// AxisNames lists the axes a grid may vary, in expansion order (repeat is
// the outermost loop, mem_limit the innermost).
var AxisNames = []string{AxisRepeat, AxisSystem, AxisModel, AxisFeatureDim, AxisBatchSize, AxisFanout, AxisCompute, AxisIDs, AxisMemLimit}

// Grid is a parsed grid file:
//
//	{"name": "limits", "dataset": "tiny", "model": "sage", "epochs": 1,
//	 "axes": {"system": ["pyg+", "ginex", "gnndrive"],
//	          "mem_limit": ["256MiB", "512MiB", "1GiB"], "repeat": 2}}
//
// "executor" (a registered executor's name, experiments/executors) and
// the options block under that executor's name say where the runs run. "skip_infeasible": true queues the cells that can start and
// records the others (a memory limit below the variant's floor) as
// refused, each with its reason; without it such a cell refuses the grid.
// "mem_share_of": "base" resolves share limits ("60%") against the grid's
// dataset for every run, where by default each run's own dataset (a
// feature_dim axis's regenerated one) is the base (MemShareOf). Every other top-level key besides "name" and "axes" is a field of the run
// configuration (engine/vocab.Config: dataset, model, epochs, hidden, lr,
// io, options, ...), shared by all runs. Each axis lists values for one
// field; the runs are the cartesian product of the axes, each repeated
// "repeat" times. An axis may instead be given once at the top level
// ("system": "ginex"). Axis → config field: system → system, model →
// model, batch_size → batch, fanout → fanout, compute → compute (cpu,
// none, model:PROFILE; DESIGN §10), mem_limit → mem_limit (and the cgroup
// limit), feature_dim → dataset (see Expand), ids → dataset (the same
// graph with scattered or community-local node ids, IDsDataset).
//
// The dashboard's form builds one with NewGrid; grid files and the JSON
// API go through ParseGrid. Both are held to the same limits (Problems)
// and the same checks against the data directory (Manager.Check).
type Grid struct {
	Name    string
	Dataset string
	// Base holds the configuration keys shared by every run.
	Base map[string]json.RawMessage
	Axes Axes
	// Raw is the grid file as given (compacted).
	Raw json.RawMessage
	// Executor is the grid's "executor" ("" = the queue's default) and
	// ExecutorOptions the options blocks of the grid's keys named after
	// registered executors, by executor name: opaque to the grid, checked
	// by the executor (executor_keys.go).
	Executor        string
	ExecutorOptions map[string]json.RawMessage
	// Frontier, when set, makes the grid a memory-frontier search
	// (frontier.go): no mem_limit axis, one repeat; the limits are probed.
	Frontier *FrontierSpec
	// RunOrder is the grid's "run_order" ("" = grid order) and
	// RunOrderSeed its "run_order_seed" (run_order.go).
	RunOrder     string
	RunOrderSeed *int64
	// SkipInfeasible is the grid's "skip_infeasible": cells that cannot
	// start are recorded as refused instead of refusing the grid.
	SkipInfeasible bool
	// MemShareOf is the grid's "mem_share_of": what a limit given as a
	// share ("60%") is a share of. MemShareRun ("", the default): each
	// run's own dataset, so under a feature_dim axis the limit grows with
	// the dimension. MemShareBase: the grid's dataset, so every feature
	// dimension runs under the same bytes, as a paper that holds its
	// host memory fixed while it sweeps the dimension (GNNDrive Fig. 8,
	// Ginex Fig. 17).
	MemShareOf string
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
	Compute    []string // "cpu", "none", "model:PROFILE"
	// IDs are node numberings, IDsScattered or IDsLocal: each runs on the
	// grid's dataset renumbered so (IDsDataset).
	IDs    []string
	Repeat int // >= 1
	// Extra are the axes over other configuration paths, by path
	// (path_axes.go): "device_mem", "options.window", ...
	Extra []PathAxis
}

// ParseGrid parses a grid file and checks it against every limit
// (Problems). Values are checked against datasets and variants by
// (*Manager).Check and (*Manager).Create. The error is an *InvalidError
// listing every problem found.
func ParseGrid(b []byte) (*Grid, error) {
	var ps ProblemList
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&top); err != nil || top == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, ps.Add("", "the grid file is not a JSON object: %v", err).Err()
	}
	if dec.More() {
		return nil, ps.Add("", "the grid file has data after its JSON object").Err()
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, ps.Add("", "the grid file: %v", err).Err()
	}
	g := &Grid{Base: map[string]json.RawMessage{}, Raw: compact.Bytes(), Axes: Axes{Repeat: 1}, topLevel: map[string]string{}}
	for _, k := range sortedKeys(top) {
		v := top[k]
		switch k {
		case "name":
			if err := json.Unmarshal(v, &g.Name); err != nil {
				ps.Add("name", "name: want a string")
			}
		case "axes":
			parseAxes(v, &g.Axes, &ps)
		case "frontier":
			g.Frontier = parseFrontier(v, &ps)
		case "executor":
			if err := parseExecutorKey(g, k, v); err != nil {
				ps = append(ps, ProblemsOf(err)...)
			}
		case "run_order", "run_order_seed":
			if msg := parseRunOrderKey(g, k, v); msg != "" {
				ps.Add(k, "%s", msg)
			}
		case "skip_infeasible":
			if err := json.Unmarshal(v, &g.SkipInfeasible); err != nil {
				ps.Add("skip_infeasible", "skip_infeasible: want true or false")
			}
		case "mem_share_of":
			var w string
			if err := json.Unmarshal(v, &w); err != nil || (w != "run" && w != MemShareBase) {
				ps.Add("mem_share_of", "mem_share_of: want %q (a share limit is of each run's own dataset, the default) or %q (of the grid's dataset: the same bytes at every feature dimension)", "run", MemShareBase)
			} else if w == MemShareBase {
				g.MemShareOf = MemShareBase
			}
		default:
			if isExecutorKey(k) {
				if err := parseExecutorKey(g, k, v); err != nil {
					ps = append(ps, ProblemsOf(err)...)
				}
				continue
			}
			g.Base[k] = v
		}
	}
	if v, ok := g.Base["dataset"]; ok {
		if err := json.Unmarshal(v, &g.Dataset); err != nil {
			ps.Add("dataset", "dataset: want a dataset name (a string)")
		}
		delete(g.Base, "dataset")
	} else {
		ps.Add("dataset", "dataset: missing (the name of a dataset in the data directory)")
	}
	// Axes given once at the top level.
	type single struct {
		key, axis string
		set       func(json.RawMessage) bool
		isSet     func() bool
	}
	singles := []single{
		{"system", AxisSystem, func(v json.RawMessage) bool { return oneString(v, &g.Axes.System) }, func() bool { return g.Axes.System != nil }},
		{"model", AxisModel, func(v json.RawMessage) bool { return oneString(v, &g.Axes.Model) }, func() bool { return g.Axes.Model != nil }},
		{"mem_limit", AxisMemLimit, func(v json.RawMessage) bool {
			s, ok := limitString(v)
			if ok {
				g.Axes.MemLimit = []string{s}
			}
			return ok
		}, func() bool { return g.Axes.MemLimit != nil }},
		{"compute", AxisCompute, func(v json.RawMessage) bool { return oneString(v, &g.Axes.Compute) }, func() bool { return g.Axes.Compute != nil }},
		{"ids", AxisIDs, func(v json.RawMessage) bool { return oneString(v, &g.Axes.IDs) }, func() bool { return g.Axes.IDs != nil }},
		{"feature_dim", AxisFeatureDim, func(v json.RawMessage) bool { return oneInt(v, &g.Axes.FeatureDim) }, func() bool { return g.Axes.FeatureDim != nil }},
		{"batch_size", AxisBatchSize, func(v json.RawMessage) bool { return oneInt(v, &g.Axes.BatchSize) }, func() bool { return g.Axes.BatchSize != nil }},
		{"batch", AxisBatchSize, func(v json.RawMessage) bool { return oneInt(v, &g.Axes.BatchSize) }, func() bool { return g.Axes.BatchSize != nil }},
		{"fanout", AxisFanout, func(v json.RawMessage) bool {
			f, ok := fanoutValue(v)
			if ok {
				g.Axes.Fanout = [][]int{f}
			}
			return ok
		}, func() bool { return g.Axes.Fanout != nil }},
	}
	for _, s := range singles {
		v, ok := g.Base[s.key]
		if !ok {
			continue
		}
		delete(g.Base, s.key)
		if s.isSet() {
			ps.Add(s.axis, "%s: given both at the top level (%q) and under axes; keep one", axisWords[s.axis].plural, s.key)
			continue
		}
		if !s.set(v) {
			ps.Add(s.axis, "%s: %s", axisWords[s.axis].plural, axisWords[s.axis].want1)
			continue
		}
		g.topLevel[s.axis] = s.key
	}
	for _, k := range []string{"mem_limit_bytes", "data_dir"} {
		if _, ok := g.Base[k]; ok {
			ps.Add(k, "%s: set by the runner; give mem_limit (axis or top level) and --data-dir instead", k)
		}
	}
	ps = append(ps, g.Problems()...)
	return g, ps.Err()
}

// NewGrid builds a grid from typed values, as the dashboard's form does:
// base holds run settings shared by every run (e.g. "epochs": 3), and
// axes.Repeat must be set (1 for a single run of each cell). The grid is
// not checked here; see Problems and (*Manager).Check.
func NewGrid(name, datasetName string, base map[string]any, axes Axes) (*Grid, error) {
	g := &Grid{Name: name, Dataset: datasetName, Base: map[string]json.RawMessage{}, Axes: axes, topLevel: map[string]string{}}
	for k, v := range base {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("grid setting %s: %w", k, err)
		}
		g.Base[k] = b
	}
	g.Raw = g.JSON()
	return g, nil
}

// JSON is the grid as a grid file: name, dataset, the base settings and
// the axes. ParseGrid reads it back into the same grid.
func (g *Grid) JSON() json.RawMessage {
	m := map[string]any{"dataset": g.Dataset}
	if g.Name != "" {
		m["name"] = g.Name
	}
	for k, v := range g.Base {
		m[k] = v
	}
	if g.Executor != "" {
		m["executor"] = g.Executor
	}
	for name, block := range g.ExecutorOptions {
		m[name] = block
	}
	if g.Frontier != nil {
		m["frontier"] = g.Frontier
	}
	if g.RunOrder != "" {
		m["run_order"] = g.RunOrder
	}
	if g.RunOrderSeed != nil {
		m["run_order_seed"] = *g.RunOrderSeed
	}
	if g.SkipInfeasible {
		m["skip_infeasible"] = true
	}
	if g.MemShareOf != MemShareRun {
		m["mem_share_of"] = g.MemShareOf
	}
	axes := map[string]any{"repeat": g.Axes.Repeat}
	a := g.Axes
	if a.System != nil {
		axes[AxisSystem] = a.System
	}
	if a.Model != nil {
		axes[AxisModel] = a.Model
	}
	if a.MemLimit != nil {
		axes[AxisMemLimit] = a.MemLimit
	}
	if a.FeatureDim != nil {
		axes[AxisFeatureDim] = a.FeatureDim
	}
	if a.BatchSize != nil {
		axes[AxisBatchSize] = a.BatchSize
	}
	if a.Fanout != nil {
		axes[AxisFanout] = a.Fanout
	}
	if a.Compute != nil {
		axes[AxisCompute] = a.Compute
	}
	if a.IDs != nil {
		axes[AxisIDs] = a.IDs
	}
	for _, ax := range a.Extra {
		axes[ax.Path] = ax.Values
	}
	m["axes"] = axes
	b, err := json.Marshal(m)
	if err != nil {
		panic("experiments: grid JSON: " + err.Error()) // only JSON values are stored
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func oneString(v json.RawMessage, dst *[]string) bool {
	var s string
	if err := json.Unmarshal(v, &s); err != nil || s == "" {
		return false
	}
	*dst = []string{s}
	return true
}

func oneInt(v json.RawMessage, dst *[]int) bool {
	var n int
	if err := json.Unmarshal(v, &n); err != nil {
		return false
	}
	*dst = []int{n}
	return true
}

// limitString accepts "256MiB" or a number of bytes.
func limitString(v json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s, true
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&n); err == nil {
		return n.String(), true
	}
	return "", false
}

// fanoutValue accepts [10, 10, 10] or "10,10,10".
func fanoutValue(v json.RawMessage) ([]int, bool) {
	var list []int
	if err := json.Unmarshal(v, &list); err == nil {
		return list, list != nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, false
	}
	list = []int{}
	for _, p := range strings.Split(s, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, false
		}
		list = append(list, n)
	}
	return list, true
}

func parseAxes(raw json.RawMessage, a *Axes, ps *ProblemList) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		ps.Add("axes", "axes: want an object of axis name → list of values (axes are %s)", strings.Join(AxisNames, ", "))
		return
	}
	for _, k := range sortedKeys(m) {
		v := m[k]
		axis := k
		if k == "batch" {
			axis = AxisBatchSize
		}
		w, known := axisWords[axis]
		if !known {
			parsePathAxis(k, v, a, ps)
			continue
		}
		ok := true
		switch axis {
		case AxisSystem:
			ok = stringList(v, &a.System)
		case AxisModel:
			ok = stringList(v, &a.Model)
		case AxisCompute:
			ok = stringList(v, &a.Compute)
		case AxisIDs:
			ok = stringList(v, &a.IDs)
		case AxisMemLimit:
			var items []json.RawMessage
			if ok = json.Unmarshal(v, &items) == nil && len(items) > 0; ok {
				for _, it := range items {
					s, good := limitString(it)
					if !good {
						ps.Add(axis, "%s: %s is not a size such as \"512MiB\", a number of bytes, or \"none\"", w.plural, it)
						continue
					}
					a.MemLimit = append(a.MemLimit, s)
				}
			}
		case AxisFeatureDim:
			ok = intList(v, &a.FeatureDim)
		case AxisBatchSize:
			ok = intList(v, &a.BatchSize)
		case AxisFanout:
			var items []json.RawMessage
			if ok = json.Unmarshal(v, &items) == nil && len(items) > 0; ok {
				for _, it := range items {
					f, good := fanoutValue(it)
					if !good {
						ps.Add(axis, "%s: %s is not a fanout such as [10, 5] or \"10,5\"", w.plural, it)
						continue
					}
					a.Fanout = append(a.Fanout, f)
				}
			}
		case AxisRepeat:
			ok = json.Unmarshal(v, &a.Repeat) == nil
		}
		if !ok {
			ps.Add(axis, "%s: %s", w.plural, w.want)
		}
	}
}

func stringList(v json.RawMessage, dst *[]string) bool {
	var l []string
	if err := json.Unmarshal(v, &l); err != nil || len(l) == 0 {
		return false
	}
	*dst = l
	return true
}

func intList(v json.RawMessage, dst *[]int) bool {
	var l []int
	if err := json.Unmarshal(v, &l); err != nil || len(l) == 0 {
		return false
	}
	*dst = l
	return true
}

// Count is the number of runs the grid expands into, or math.MaxInt when
// that number does not fit an int (the product is checked, never wrapped).
func (g *Grid) Count() int {
	n := max(g.Axes.Repeat, 1)
	lens := []int{len(g.Axes.System), len(g.Axes.MemLimit), len(g.Axes.FeatureDim), len(g.Axes.BatchSize), len(g.Axes.Model), len(g.Axes.Fanout), len(g.Axes.Compute), len(g.Axes.IDs)}
	for _, ax := range g.Axes.Extra {
		lens = append(lens, len(ax.Values))
	}
	for _, l := range lens {
		if l > 0 {
			if n > math.MaxInt/l {
				return math.MaxInt
			}
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
	Compute    string
	IDs        string // IDsScattered, IDsLocal, or "" (the dataset as it is)
	MemLimit   string
	// Extra are the cell's values on the path axes, in Axes.Extra's order.
	Extra []AxisValue
}

// Cells expands the grid into its runs in their run order (run_order.go):
// by default repeat outermost, then system, model, feature_dim,
// batch_size, fanout, compute, the path axes by path, and mem_limit
// innermost; every order covers each repeat's cells before the next
// repeat begins. A grid of more than MaxRuns runs has no cells (it is
// invalid).
func (g *Grid) Cells() []Cell {
	if g.Count() > MaxRuns {
		return nil
	}
	a := g.Axes
	// the axes' lengths in expansion order after repeat (0 = not varied)
	lens := []int{len(a.System), len(a.Model), len(a.FeatureDim), len(a.BatchSize), len(a.Fanout), len(a.Compute)}
	for _, ax := range a.Extra {
		lens = append(lens, len(ax.Values))
	}
	lens = append(lens, len(a.IDs), len(a.MemLimit))
	out := make([]Cell, 0, g.Count())
	idx := make([]cellIndex, 0, g.Count())
	for rep := 0; rep < max(a.Repeat, 1); rep++ {
		pos := make([]int, len(lens))
		for {
			c := Cell{Seq: len(out), Repeat: rep}
			if len(a.System) > 0 {
				c.System = a.System[pos[0]]
			}
			if len(a.Model) > 0 {
				c.Model = a.Model[pos[1]]
			}
			if len(a.FeatureDim) > 0 {
				c.FeatureDim = a.FeatureDim[pos[2]]
			}
			if len(a.BatchSize) > 0 {
				c.BatchSize = a.BatchSize[pos[3]]
			}
			if len(a.Fanout) > 0 {
				c.Fanout = a.Fanout[pos[4]]
			}
			if len(a.Compute) > 0 {
				c.Compute = a.Compute[pos[5]]
			}
			for i, ax := range a.Extra {
				if len(ax.Values) > 0 {
					c.Extra = append(c.Extra, AxisValue{Path: ax.Path, Value: ax.Values[pos[6+i]]})
				}
			}
			if len(a.IDs) > 0 {
				c.IDs = a.IDs[pos[len(pos)-2]]
			}
			if len(a.MemLimit) > 0 {
				c.MemLimit = a.MemLimit[pos[len(pos)-1]]
			}
			out = append(out, c)
			idx = append(idx, append(cellIndex(nil), pos...))
			// the next position, the last axis fastest
			k := len(pos) - 1
			for ; k >= 0; k-- {
				pos[k]++
				if pos[k] < max(lens[k], 1) {
					break
				}
				pos[k] = 0
			}
			if k < 0 {
				break
			}
		}
	}
	return orderCells(out, idx, g.RunOrder, g.orderSeed())
}
