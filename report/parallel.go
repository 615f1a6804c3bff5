package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"outcore/store"
)

// The runs view of an experiment (DESIGN §6, "Find and compare"): every
// run as one line across parallel axes — the grid's varying configuration
// axes, then epoch time, peak memory and test accuracy — coloured by a
// grouping the user picks, and the runs' groups with mean ± sd of each
// result: the view MLflow, W&B and Aim users reach for first. The
// dashboard draws it with ECharts' parallel series (static/js/app.js).

// GroupKeys are the run fields a runs view can group by, in menu order.
var GroupKeys = []string{"system", "mem_limit", "feature_dim", "batch_size", "fanout", "model", "repeat"}

// groupNames are the keys in words.
var groupNames = map[string]string{"system": "variant", "mem_limit": "memory limit", "feature_dim": "feature dim",
	"batch_size": "batch size", "fanout": "fanout", "model": "model", "repeat": "repeat"}

// ParallelView is an experiment's runs across parallel axes, grouped.
type ParallelView struct {
	GroupBy string        `json:"group_by"`
	Keys    []GroupKey    `json:"keys"` // what can be grouped by
	Dims    []ParallelDim `json:"dims"`
	Lines   []RunLine     `json:"lines"`
	Groups  []RunGroup    `json:"groups"`
	Note    string        `json:"note"`
}

// GroupKey is one choice of grouping.
type GroupKey struct {
	Key  string `json:"key"`
	Name string `json:"name"`
}

// ParallelDim is one axis: a configuration axis (Categories: its values in
// grid order) or a result (Unit).
type ParallelDim struct {
	Key        string   `json:"key"`
	Name       string   `json:"name"`
	Unit       string   `json:"unit,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// RunLine is one run: its value on each dim (a category name, a number,
// or nil where the run has none: an OOM run has no epoch time).
type RunLine struct {
	Run    int64  `json:"run"`
	Group  string `json:"group"`
	Color  string `json:"color"`
	Status string `json:"status"`
	Values []any  `json:"values"`
}

// RunGroup is one group's runs and the mean ± sd of their results.
type RunGroup struct {
	Key     string  `json:"key"`
	Color   string  `json:"color"`
	Runs    int     `json:"runs"`
	Done    int     `json:"done"`
	OOM     int     `json:"oom"`
	EpochS  Summary `json:"epoch_s"`
	PeakMiB Summary `json:"peak_mib"`
	TestAcc Summary `json:"test_acc"`
}

// Summary is mean ± sd over n runs (n = 0: none had a value).
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
}

// runField is a run's value of a grouping key, in words.
func runField(r store.Run, key string) string {
	switch key {
	case "system":
		return r.System
	case "mem_limit":
		return MemLabel(r.MemLimitBytes)
	case "feature_dim":
		return strconv.Itoa(r.FeatureDim)
	case "batch_size":
		return strconv.Itoa(r.BatchSize)
	case "fanout":
		return r.Fanout
	case "model":
		return r.Model
	case "repeat":
		return strconv.Itoa(r.Repeat)
	}
	return ""
}

// runFieldOrder is a sort key for a grouping value: numbers and byte
// limits in their order, words alphabetically.
func runFieldOrder(r store.Run, key string) float64 {
	switch key {
	case "mem_limit":
		return float64(r.MemLimitBytes)
	case "feature_dim":
		return float64(r.FeatureDim)
	case "batch_size":
		return float64(r.BatchSize)
	case "repeat":
		return float64(r.Repeat)
	case "system":
		return float64(variantIndex(r.System, nil))
	}
	return 0
}

// Parallel builds the runs view of runs (an experiment's current runs)
// grouped by groupBy ("" = by variant). An unknown key is an error naming
// the keys there are.
func Parallel(runs []store.Run, groupBy string) (ParallelView, error) {
	if groupBy == "" {
		groupBy = "system"
	}
	if !contains(GroupKeys, groupBy) {
		return ParallelView{}, fmt.Errorf("%w: group by %q: want one of %s", ErrFilter, groupBy, strings.Join(GroupKeys, ", "))
	}
	v := ParallelView{GroupBy: groupBy,
		Note: "One line per run across the grid's varying settings and its results (mean steady epoch time, peak memory of its cgroup, page cache included, or RSS without one, and test accuracy at the best validation epoch); runs without a result (out of memory, failed, not finished) leave that axis empty. Colour and the table's groups follow the grouping chosen; the table gives mean ± s.d. over each group's runs."}
	for _, k := range GroupKeys {
		v.Keys = append(v.Keys, GroupKey{Key: k, Name: groupNames[k]})
	}
	// configuration axes that vary, plus the grouping key always
	values := map[string][]store.Run{}
	for _, k := range GroupKeys {
		seen := map[string]bool{}
		for _, r := range runs {
			if s := runField(r, k); !seen[s] {
				seen[s] = true
				values[k] = append(values[k], r)
			}
		}
	}
	for _, k := range GroupKeys {
		if len(values[k]) < 2 && k != groupBy {
			continue
		}
		rs := values[k]
		sort.SliceStable(rs, func(i, j int) bool {
			a, b := runFieldOrder(rs[i], k), runFieldOrder(rs[j], k)
			if a != b {
				return a < b
			}
			return runField(rs[i], k) < runField(rs[j], k)
		})
		d := ParallelDim{Key: k, Name: groupNames[k]}
		for _, r := range rs {
			d.Categories = append(d.Categories, runField(r, k))
		}
		v.Dims = append(v.Dims, d)
	}
	v.Dims = append(v.Dims, ParallelDim{Key: "epoch_s", Name: "epoch time", Unit: "s"},
		ParallelDim{Key: "peak_mib", Name: "peak memory", Unit: "MiB"},
		ParallelDim{Key: "test_acc", Name: "test accuracy"})

	// groups in the grouping axis's order, each with a colour
	var order []string
	for _, d := range v.Dims {
		if d.Key == groupBy {
			order = d.Categories
		}
	}
	color := map[string]string{}
	for i, g := range order {
		if groupBy == "system" {
			color[g], _ = style(variantIndex(g, nil))
		} else {
			color[g], _ = style(i + 1)
		}
	}
	obs := map[string]*[3][]float64{}
	groups := map[string]*RunGroup{}
	for _, g := range order {
		groups[g] = &RunGroup{Key: g, Color: color[g]}
		obs[g] = &[3][]float64{}
	}
	for _, r := range runs {
		g := runField(r, groupBy)
		l := RunLine{Run: r.ID, Group: g, Color: color[g], Status: r.Status}
		res := runResults(r)
		for _, d := range v.Dims {
			switch d.Key {
			case "epoch_s", "peak_mib", "test_acc":
				if p := res[d.Key]; p != nil {
					l.Values = append(l.Values, *p)
				} else {
					l.Values = append(l.Values, nil)
				}
			default:
				l.Values = append(l.Values, runField(r, d.Key))
			}
		}
		v.Lines = append(v.Lines, l)
		grp := groups[g]
		grp.Runs++
		switch r.Status {
		case store.StatusDone:
			grp.Done++
		case store.StatusOOM:
			grp.OOM++
		}
		for i, k := range []string{"epoch_s", "peak_mib", "test_acc"} {
			if p := res[k]; p != nil {
				obs[g][i] = append(obs[g][i], *p)
			}
		}
	}
	for _, g := range order {
		grp := groups[g]
		for i, dst := range []*Summary{&grp.EpochS, &grp.PeakMiB, &grp.TestAcc} {
			s := summarise(obs[g][i])
			*dst = Summary{N: s.n, Mean: s.mean, SD: s.sd}
		}
		v.Groups = append(v.Groups, *grp)
	}
	return v, nil
}

// runResults are a run's results on the result axes (nil: none).
func runResults(r store.Run) map[string]*float64 {
	out := map[string]*float64{}
	if r.Status == store.StatusDone || r.Status == store.StatusRunning {
		out["epoch_s"] = r.MeanEpochS
		out["test_acc"] = r.TestAcc
	}
	peak := r.PeakCgroupBytes
	if peak == nil || *peak == 0 {
		peak = r.PeakRSSBytes
	}
	if peak != nil && *peak > 0 {
		mib := float64(*peak) / (1 << 20)
		out["peak_mib"] = &mib
	}
	return out
}
