package report

import (
	"errors"
	"math"
	"testing"

	"outcore/store"
)

func TestParallelGroupsRuns(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	run := func(id int64, sys string, lim int64, rep int, status string, epoch, acc float64, peak int64) store.Run {
		r := store.Run{ID: id, System: sys, MemLimitBytes: lim, Repeat: rep, Status: status, Model: "sage", FeatureDim: 32, BatchSize: 1000, Fanout: "10,5"}
		if status == store.StatusDone {
			r.MeanEpochS, r.TestAcc = f(epoch), f(acc)
		}
		r.PeakCgroupBytes = i(peak)
		return r
	}
	runs := []store.Run{
		run(1, "pyg+", 256<<20, 0, store.StatusDone, 2, 0.60, 200<<20),
		run(2, "pyg+", 256<<20, 1, store.StatusDone, 4, 0.70, 220<<20),
		run(3, "pyg+", 128<<20, 0, store.StatusOOM, 0, 0, 128<<20),
		run(4, "gnndrive", 128<<20, 0, store.StatusDone, 1, 0.65, 100<<20),
	}
	v, err := Parallel(runs, "")
	if err != nil {
		t.Fatal(err)
	}
	// varying axes (variant, memory limit, repeat) then the three results
	var keys []string
	for _, d := range v.Dims {
		keys = append(keys, d.Key)
	}
	if got := join(keys); got != "system,mem_limit,repeat,epoch_s,peak_mib,test_acc" {
		t.Errorf("dims %s", got)
	}
	if got := join(v.Dims[1].Categories); got != "128MiB,256MiB" {
		t.Errorf("memory limits in order: %s", got)
	}
	if len(v.Lines) != 4 || v.Lines[2].Values[3] != nil || v.Lines[2].Values[4] != 128.0 || v.Lines[0].Values[0] != "pyg+" {
		t.Errorf("lines %+v", v.Lines)
	}
	var pyg RunGroup
	for _, g := range v.Groups {
		if g.Key == "pyg+" {
			pyg = g
		}
	}
	if pyg.Runs != 3 || pyg.Done != 2 || pyg.OOM != 1 || pyg.EpochS.N != 2 || pyg.EpochS.Mean != 3 || math.Abs(pyg.EpochS.SD-math.Sqrt2) > 1e-12 || pyg.PeakMiB.N != 3 {
		t.Errorf("pyg+ group %+v", pyg)
	}
	// another grouping: by memory limit, coloured per limit
	byLim, err := Parallel(runs, "mem_limit")
	if err != nil || len(byLim.Groups) != 2 || byLim.Groups[0].Key != "128MiB" || byLim.Groups[0].Runs != 2 || byLim.Groups[0].Color == byLim.Groups[1].Color {
		t.Errorf("by memory limit: %+v %v", byLim.Groups, err)
	}
	// grouping by an axis the grid does not vary still shows that axis
	byModel, err := Parallel(runs, "model")
	hasModel := false
	for _, d := range byModel.Dims {
		hasModel = hasModel || d.Key == "model"
	}
	if err != nil || len(byModel.Groups) != 1 || !hasModel {
		t.Errorf("by model: %+v %v", byModel.Dims, err)
	}
	if _, err := Parallel(runs, "colour"); err == nil || !errors.Is(err, ErrFilter) {
		t.Errorf("unknown grouping: %v", err)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
