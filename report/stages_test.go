package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/system/systest"
	"outcore/engine/vocab"
	"outcore/store"
)

// nestedVariant times its extract inside its stall, as pyg+ does.
const nestedVariant = "report-test-nested"

func init() {
	vocab.RegisterVariant(vocab.Variant{Name: nestedVariant, Order: 900,
		NestedStages: map[string]string{"extract_s": "stall_s"}})
}

// TestStagesStackOnlyDisjointReference trains the reference pipeline (a
// sequential sample → gather → train loop) and checks that the height of
// every stacked bar equals the epoch time within 5%: forward and backward
// are drawn inside train, not beside it.
func TestStagesStackOnlyDisjointReference(t *testing.T) {
	res := systest.Run(t, systest.Config(t, "reference", nil))
	var epochs []store.Epoch
	for _, e := range res.Epochs {
		if e.Stages[metrics.StageForward] <= 0 || e.Stages[metrics.StageBackward] <= 0 {
			t.Fatalf("epoch %d has no forward/backward seconds: %v", e.Epoch, e.Stages)
		}
		epochs = append(epochs, store.Epoch{EpochRecord: e})
	}
	run := store.Run{ID: 1, System: "reference", Status: store.StatusDone}
	ch := runChart("run-stage-time", run, epochs, nil)
	names := map[string]Series{}
	for _, s := range ch.Series {
		names[s.Name] = s
	}
	for _, want := range []string{"sample", "extract", "train · forward", "train · backward", "train · other", "epoch time"} {
		if _, ok := names[want]; !ok {
			t.Errorf("run-stage-time has no layer %q (has %v)", want, ch.Series)
		}
	}
	if _, ok := names["forward"]; ok {
		t.Error("forward is stacked beside train")
	}
	if names["train · forward"].Parent != "train" || names["sample"].Parent != "" || names["epoch time"].Role != "marker" {
		t.Errorf("parents: forward %q, sample %q; marker role %q", names["train · forward"].Parent, names["sample"].Parent, names["epoch time"].Role)
	}
	totals, marks := StackedTotals(ch)
	for j, e := range res.Epochs {
		if math.Abs(totals[j]-e.EpochS) > 0.05*e.EpochS || marks[j] != e.EpochS {
			t.Errorf("epoch %d: stacked %.4f s, epoch_s %.4f s (mark %.4f)", e.Epoch, totals[j], e.EpochS, marks[j])
		}
	}

	// The experiment chart: the same over steady-epoch means.
	cmp := NewComparison([]RunData{RunDataOf(run, epochs)})
	for _, id := range []string{"stages", "stage-time"} {
		st, _ := cmp.Chart(id, "")
		totals, marks = StackedTotals(st)
		if len(totals) != 1 || math.Abs(totals[0]-marks[0]) > 0.05*marks[0] {
			t.Errorf("experiment %s: stacked %v, epoch time %v", id, totals, marks)
		}
	}
	// The wall-clock breakdown: sample, load, train, stall, summing to the epoch.
	wall := runChart("run-stages", run, epochs, nil)
	var layers []string
	for _, s := range wall.Series {
		layers = append(layers, s.Name)
	}
	if got := strings.Join(layers, ","); got != "sample,load,train,stall,epoch time" {
		t.Errorf("run-stages layers %s", got)
	}
	totals, marks = StackedTotals(wall)
	for j, e := range res.Epochs {
		if math.Abs(totals[j]-e.EpochS) > 0.05*e.EpochS || marks[j] != e.EpochS {
			t.Errorf("wall epoch %d: stacked %.4f s, epoch_s %.4f s (mark %.4f)", e.Epoch, totals[j], e.EpochS, marks[j])
		}
	}
}

// A pipelined run's concurrent worker-seconds exceed its epoch in the
// stage-time view; the stage breakdown still adds up to the epoch (the
// 305 s bar of a 103.5 s pyg+ epoch).
func TestStageBreakdownIsWallClock(t *testing.T) {
	e := metrics.EpochRecord{Type: metrics.TypeEpoch, MetricsVersion: metrics.EpochMetricsVersion, EpochS: 103.5,
		SampleS: 180, ExtractS: 60, TrainS: 40, StallS: 25,
		WallSampleS: 30, WallLoadS: 30, WallTrainS: 40, WallStallS: 3.5}
	run := store.Run{ID: 7, System: "pyg+", Status: store.StatusDone}
	eps := []store.Epoch{{EpochRecord: e}}
	old, _ := StackedTotals(runChart("run-stage-time", run, eps, nil))
	if old[0] < 300 {
		t.Fatalf("stage-time stacks %v s: the fixture should sum concurrent workers", old[0])
	}
	for _, ch := range []Chart{runChart("run-stages", run, eps, nil), NewChartOrDie(t, NewComparison([]RunData{RunDataOf(run, eps)}), "stages")} {
		totals, marks := StackedTotals(ch)
		if math.Abs(totals[0]-103.5) > 1e-9 || marks[0] != 103.5 {
			t.Errorf("%s: stacked %v, mark %v; want 103.5", ch.ID, totals[0], marks[0])
		}
	}
	// A run recorded before the wall-clock stages says so instead of drawing 0.
	e.MetricsVersion = 2
	legacy := runChart("run-stages", run, []store.Epoch{{EpochRecord: e}}, nil)
	if !strings.Contains(legacy.Empty, "metrics version 3") {
		t.Errorf("legacy run-stages: empty %q", legacy.Empty)
	}
	p := NewChartOrDie(t, NewComparison([]RunData{RunDataOf(run, []store.Epoch{{EpochRecord: e}})}), "stages").Series[0].Points[0]
	if p.Y != nil || p.Status != StatusUnmeasured {
		t.Errorf("legacy stages point %+v", p)
	}
}

func TestStageTreeNestsPerVariant(t *testing.T) {
	sec := map[string]float64{"sample_s": 1, "extract_s": 2, "train_s": 4, "stall_s": 3, "forward_s": 1.5, "backward_s": 2, "inspect_s": 0.5}
	get := func(n string) float64 { return sec[n] }
	tree := newStageTree([]string{"reference", nestedVariant}, map[string]bool{"forward_s": true, "backward_s": true, "inspect_s": true})
	type want struct {
		ok bool
		v  float64
	}
	cases := map[string]map[string]want{
		"reference": {"sample": {true, 1}, "extract": {true, 2}, "train · forward": {true, 1.5}, "train · backward": {true, 2},
			"train · other": {true, 0.5}, "stall · extract": {false, 0}, "stall · other": {true, 3}, "inspect": {true, 0.5}},
		nestedVariant: {"sample": {true, 1}, "extract": {false, 0}, "stall · extract": {true, 2}, "stall · other": {true, 1},
			"train · other": {true, 0.5}},
	}
	for sys, layers := range cases {
		total := 0.0
		for _, l := range tree.layers {
			v, ok, _ := tree.value(l, sys, get)
			if ok {
				total += v
			}
			if w, listed := layers[l.name]; listed && (ok != w.ok || math.Abs(v-w.v) > 1e-12) {
				t.Errorf("%s %s = %v %v, want %v %v", sys, l.name, v, ok, w.v, w.ok)
			}
		}
		// The stack adds up to the top-level stages: nothing counted twice.
		top := sec["sample_s"] + sec["train_s"] + sec["stall_s"] + sec["inspect_s"]
		if sys == "reference" {
			top += sec["extract_s"]
		}
		if math.Abs(total-top) > 1e-12 {
			t.Errorf("%s: layers add to %v, top-level stages %v", sys, total, top)
		}
	}
	// Nested stages whose worker-seconds exceed the parent leave a rest of 0, said so.
	over := func(n string) float64 { return map[string]float64{"train_s": 1, "forward_s": 1, "backward_s": 1}[n] }
	for _, l := range tree.layers {
		if l.name == "train · other" {
			if v, ok, short := tree.value(l, "reference", over); !ok || v != 0 || short != 1 {
				t.Errorf("over-full train: %v %v short %v", v, ok, short)
			}
		}
	}
	seen := map[string]string{}
	for _, l := range tree.layers {
		if other, dup := seen[l.color]; dup {
			t.Errorf("layers %q and %q share colour %s", other, l.name, l.color)
		}
		seen[l.color] = l.name
	}
}

func TestSeriesStylesDiffer(t *testing.T) {
	seen := map[string]int{}
	for i := 0; i < 2*len(okabeIto); i++ {
		col, _ := style(i)
		if j, dup := seen[col]; dup {
			t.Errorf("series %d and %d share colour %s", j, i, col)
		}
		seen[col] = i
	}
}

func TestMemoryChartDrawsTheLimit(t *testing.T) {
	devs, _ := json.Marshal([]string{"the CPU trainer's model step (40 MiB: ...) is held outside the 256 MiB memory budget, as the GPU memory it occupies in the papers; the cgroup limit is 296 MiB"})
	run := store.Run{ID: 3, System: "reference", Status: store.StatusDone, MemLimitBytes: 256 << 20, Deviations: devs}
	samples := []store.Sample{{SampleRecord: metrics.SampleRecord{T: 1, RSSBytes: 100 << 20, CgroupBytes: 200 << 20}},
		{SampleRecord: metrics.SampleRecord{T: 5, RSSBytes: 120 << 20, CgroupBytes: 280 << 20}}}
	ch := runChart("run-memory", run, nil, samples)
	var budget, cg bool
	for _, s := range ch.Series {
		for _, p := range s.Points {
			switch {
			case s.Name == "memory budget (256MiB)" && *p.Y == 256:
				budget = true
			case s.Name == "cgroup limit (296MiB, budget + model step)" && *p.Y == 296:
				cg = true
			}
		}
	}
	if !budget || !cg {
		t.Errorf("memory chart series %+v", ch.Series)
	}
	// A finished run without samples says so, not "yet".
	if ch := runChart("run-memory", run, nil, nil); ch.Empty == "" || contains([]string{ch.Empty}, "No resource sample yet (one arrives every second while the run runs).") {
		t.Errorf("finished run without samples: %q", ch.Empty)
	}
}
