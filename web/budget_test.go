package web

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments/grid"
	"outcore/internal/units"
	"outcore/store"
)

// TestBudgetPreview: the cells a variant cannot start in are marked, the
// others estimated from past runs; limits given as shares resolve to bytes.
func TestBudgetPreview(t *testing.T) {
	meta := dataset.Meta{Name: "m", Nodes: 1 << 20, FeatureDim: 128, Classes: 4, Train: 1000} // 512 MiB of features
	past := pastRuns{"pyg+": {{limit: 128 << 20, secPerEpoch: 10}, {limit: 128 << 20, secPerEpoch: 12}}}
	in := FormInput{Variants: []string{"pyg+", "gnndrive"}, MemLimits: "1%, 25%, none", Batches: "1024", Fanouts: "10,5", Model: "sage", Epochs: "3", Repeats: "2"}
	refused := []store.RefusedCell{{System: "pyg+", MemLimit: "1%", Reason: "5.1MiB is below the 40MiB that pyg+ needs to start on m"}}
	m, est := budgetPreview(in, meta, past, refused)
	if m == nil || len(m.Rows) != 2 || strings.Join(m.Limits, "|") != "5.1MiB (1%)|128MiB (25%)|no limit" {
		t.Fatalf("matrix %+v", m)
	}
	pyg := m.Rows[0].Cells
	if !pyg[0].Impossible || pyg[0].Title != "cannot start: "+refused[0].Reason || m.Refused != 1 {
		t.Errorf("pyg+ at 1%% of the features: %+v", pyg[0])
	}
	if pyg[1].Impossible || pyg[1].Text != "33s" {
		t.Errorf("pyg+ at 25%%: %+v (want 3 epochs × 11 s)", pyg[1])
	}
	if m.Rows[1].Cells[1].Text != "?" {
		t.Errorf("gnndrive without past runs: %+v", m.Rows[1].Cells[1])
	}
	if !strings.Contains(est, "about 2m") || !strings.Contains(est, "cell(s) without one") {
		t.Errorf("estimate %q (2 known cells × 2 repeats × 33 s)", est)
	}
	// The default limits are the example's (ExampleLimits) from every
	// chosen variant's floor (train.MinMemoryFor, the submit's check):
	// the largest is at or above every floor; a dataset whose features
	// are smaller than the floors gets doubling sizes from the floor.
	for _, md := range []dataset.Meta{meta, {Name: "s", Nodes: 8192, FeatureDim: 32, Classes: 4, Train: 4000}} {
		got := defaultLimits(in, md, t.TempDir())
		cfg := formConfig(in, md, "")
		var floors []int64
		var need int64
		for _, v := range in.Variants {
			cfg.System = v
			floors = append(floors, train.MinMemoryFor(cfg, md))
			need = max(need, floors[len(floors)-1])
		}
		if want := strings.Join(ExampleLimits(md, floors), ", "); got != want {
			t.Errorf("default limits on %s: %q, ExampleLimits %q", md.Name, got, want)
		}
		lims := splitList(got)
		if len(lims) < 3 {
			t.Fatalf("default limits on %s: %q", md.Name, got)
		}
		if b, err := units.ParseMemLimit(lims[len(lims)-1], md.FeatureBytes()); err != nil || b < need {
			t.Errorf("default limits on %s: %q, the largest below the floor %d (%v)", md.Name, got, need, err)
		}
	}
}

// TestTimeLeft: queued runs take as long as their finished cell-mates,
// a running run the rest of what its own progress predicts.
func TestTimeLeft(t *testing.T) {
	now := time.Unix(1e9, 0)
	f := func(v float64) *float64 { return &v }
	prog, _ := json.Marshal(map[string]any{"epoch": 1, "batch": 5, "batches": 10, "phase": "train"})
	runs := []store.Run{
		{System: "pyg+", MemLimitBytes: 1, Status: store.StatusDone, TotalS: f(100)},
		{System: "pyg+", MemLimitBytes: 1, Status: store.StatusQueued},
		{System: "pyg+", MemLimitBytes: 2, Status: store.StatusQueued}, // its variant's mean
		{System: "ginex", MemLimitBytes: 1, Status: store.StatusRunning, StartedAt: now.Add(-60 * time.Second),
			Progress: prog, Config: json.RawMessage(`{"epochs":4}`)}, // 1.5 of 4 epochs in 60 s: 100 s left
	}
	got := timeLeft(runs, now)
	if !strings.HasPrefix(got, "about 5m left (3 run(s) to go, from 1 finished)") {
		t.Errorf("time left %q (100 + 100 + 100 s)", got)
	}
	if timeLeft(runs[:1], now) != "" {
		t.Error("a finished experiment has time left")
	}
	// Early on, before any run finished: each queued run counts as long
	// as the running run's own estimate (160 s), not zero.
	early := []store.Run{runs[3], {System: "ginex", MemLimitBytes: 1, Status: store.StatusQueued}, {System: "pyg+", Status: store.StatusQueued}}
	if got := timeLeft(early, now); !strings.HasPrefix(got, "about 7m left (3 run(s) to go") || strings.Contains(got, "without an estimate") {
		t.Errorf("early time left %q (100 + 160 + 160 s)", got)
	}
}

// TestChartsCacheFollowsTheRuns: charts.json is drawn once for settled
// runs and drawn again when a run reports an epoch.
func TestChartsCacheFollowsTheRuns(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	runs := e.runs(x.ID)
	e.play(runs[0], 2, 1, store.StatusDone)
	path := "/experiments/" + strconv.FormatInt(x.ID, 10) + "/charts.json"
	_, first := e.get(path)
	_, again := e.get(path)
	if first != again || len(e.srv.charts.m) != 1 {
		t.Fatalf("the second load differs or was not cached (%d entries)", len(e.srv.charts.m))
	}
	e.play(runs[1], 1, 5, "")
	_, later := e.get(path)
	if later == first {
		t.Error("charts.json did not change after a new epoch")
	}
	c := newChartsCache(2)
	c.put("a", []byte("1"))
	c.put("b", []byte("2"))
	c.put("c", []byte("3"))
	if _, ok := c.get("a"); ok {
		t.Error("the oldest entry was kept past the limit")
	}
	if b, ok := c.get("c"); !ok || string(b) != "3" {
		t.Error("the newest entry is missing")
	}
}

// TestExampleLimits: the example's limits start at the lowest floor and
// reach the highest, as shares of the features where they can.
func TestExampleLimits(t *testing.T) {
	mib := int64(1 << 20)
	small := dataset.Meta{Nodes: 400000, FeatureDim: 64} // 97.7 MiB of features
	floors := []int64{26 * mib, 67 * mib, 53 * mib, 34 * mib, 59 * mib, 108 * mib, 107 * mib}
	if got := strings.Join(ExampleLimits(small, floors), ", "); got != "50%, 75%, 100%, 150%" {
		t.Errorf("small: %s", got)
	}
	if got := strings.Join(ExampleLimits(small, floors[:5]), ", "); got != "50%, 75%, 100%" {
		t.Errorf("small without the topology-pinning variants: %s", got)
	}
	tiny := dataset.Meta{Nodes: 8192, FeatureDim: 32} // 1 MiB
	if got := strings.Join(ExampleLimits(tiny, []int64{20 * mib, 70 * mib}), ", "); got != "32MiB, 64MiB, 128MiB" {
		t.Errorf("tiny: %s", got)
	}
	if got := strings.Join(ExampleLimits(tiny, []int64{20 * mib, 200 * mib}), ", "); got != "32MiB, 64MiB, 128MiB, 256MiB" {
		t.Errorf("tiny, a high floor: %s", got)
	}
}

// TestGridEstimate: without past runs the prior counts every run that
// starts (refused ones left out) and says it is a prior; past runs of a
// variant replace it.
func TestGridEstimate(t *testing.T) {
	meta := dataset.Meta{Name: "default", Nodes: 400000, FeatureDim: 64, Train: 39919}
	g, err := grid.ParseGrid([]byte(`{"dataset":"default","epochs":2,"axes":{"system":["pyg+","ginex"],"mem_limit":["50%","100%"],"batch_size":[1024],"fanout":["10,5"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	per := priorEpochSeconds(meta, 1024, []int{10, 5})
	if per < 15 || per > 20 {
		t.Fatalf("prior %.1f s an epoch of pyg+ on small, measured 17 s", per)
	}
	got := gridEstimate(g, meta, nil, []store.RefusedCell{{Seq: 2}})
	want := units.Estimate(3 * (2*per + priorRunOverheadSec))
	if !strings.Contains(got, "roughly "+want) || !strings.Contains(got, "prior") {
		t.Fatalf("estimate %q, want roughly %s", got, want)
	}
	past := pastRuns{"pyg+": {{limit: 0, secPerEpoch: 100}}, "ginex": {{limit: 0, secPerEpoch: 100}}}
	if got := gridEstimate(g, meta, past, nil); !strings.Contains(got, "about "+units.Estimate(4*(200+priorRunOverheadSec))) || !strings.Contains(got, "from past runs") {
		t.Fatalf("estimate from past runs %q", got)
	}
}

// smallLike is the shape of the `small` preset, the default dataset of a
// fresh data directory (meta only: the floors use the shape's bound).
var smallLike = dataset.Meta{Name: "default", Nodes: 400000, Edges: 4849448, FeatureDim: 64, Classes: 16, Train: 39919, Val: 19781, Test: 39696}

// TestFormDefaultsGoOutOfCore: the form's first grid is the example's
// batch and fanout (one declaration), at the limits ExampleLimits picks
// from the chosen variants' floors on the chosen dataset: below its
// features where the floors allow, never 150/200/300 %.
func TestFormDefaultsGoOutOfCore(t *testing.T) {
	dir := t.TempDir()
	in := defaultForm([]dataset.Entry{{Name: smallLike.Name, Meta: smallLike}}, dir)
	if in.Batches != strconv.Itoa(ExampleBatch) || in.Fanouts != grid.FormatFanout(ExampleFanout()) {
		t.Errorf("form batch %q fanout %q, the example's %d and %s", in.Batches, in.Fanouts, ExampleBatch, grid.FormatFanout(ExampleFanout()))
	}
	cfg := formConfig(in, smallLike, dir)
	var floors []int64
	for _, v := range in.Variants {
		cfg.System = v
		floors = append(floors, train.MinMemoryFor(cfg, smallLike))
	}
	if want := strings.Join(ExampleLimits(smallLike, floors), ", "); in.MemLimits != want {
		t.Errorf("form limits %q, ExampleLimits of its variants' floors %q", in.MemLimits, want)
	}
	below := 0
	for _, l := range splitList(in.MemLimits) {
		b, err := units.ParseMemLimit(l, smallLike.FeatureBytes())
		if err != nil {
			t.Fatal(err)
		}
		if b < smallLike.FeatureBytes() {
			below++
		}
	}
	if below < 2 {
		t.Errorf("form limits %q: %d below the %d bytes of features, want the grid out of core", in.MemLimits, below, smallLike.FeatureBytes())
	}
	if !in.SkipInfeasible {
		t.Error("the form's first grid does not skip the cells below a floor, as the example does")
	}
}

// TestGridEstimateFromTheSameCell: a cell this host ran before (the same
// variant, limit, batch, fanout, model, compute and epoch bound on the
// dataset) is estimated from those runs — their fixed part plus the grid's
// epochs at their mean epoch — with no range; other cells give a range.
// (The old estimate divided a run's whole time by its epochs and added a
// prior overhead again: a 1-epoch run of 60 s, 30 s of it preparation,
// estimated a 3-epoch run at 195 s where 120 s is the measure.)
func TestGridEstimateFromTheSameCell(t *testing.T) {
	meta := dataset.Meta{Name: "default", Nodes: 400000, FeatureDim: 64, Train: 39919}
	g, err := grid.ParseGrid([]byte(`{"dataset":"default","epochs":3,"axes":{"system":["pyg+"],"mem_limit":["none"],"batch_size":[1024],"fanout":["10,5"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	cell := pastCell{model: "sage", fanout: "10,5", compute: "cpu", batch: 1024}
	past := pastRuns{"pyg+": {{limit: 0, secPerEpoch: 30, fixedS: 30, cell: cell}, {limit: 0, secPerEpoch: 30, fixedS: 30, cell: cell}}}
	got := gridEstimate(g, meta, past, nil)
	if !strings.Contains(got, "about "+units.Estimate(30+3*30)) || strings.Contains(got, "between") || !strings.Contains(got, "every run's cell ran on default before") {
		t.Errorf("estimate %q, want about %s and no range", got, units.Estimate(120))
	}
	// Another fanout: the same variant's runs at other settings, with a range.
	other := pastRuns{"pyg+": {{limit: 0, secPerEpoch: 30, fixedS: 30, cell: pastCell{model: "sage", fanout: "15,10", compute: "cpu", batch: 1024}}}}
	got = gridEstimate(g, meta, other, nil)
	if !strings.Contains(got, "between "+units.Estimate(0.5*(3*30+priorRunOverheadSec))+" and "+units.Estimate(2*(3*30+priorRunOverheadSec))) ||
		!strings.Contains(got, "1 from past runs of their variant at another limit or other settings") {
		t.Errorf("estimate %q from other settings", got)
	}
}

// TestLoadPastRunsSplitsTheFixedPart: a stored run's time is split into
// its mean epoch and the rest, and its cell read from the store.
func TestLoadPastRunsSplitsTheFixedPart(t *testing.T) {
	e := newEnv(t)
	x := e.create(`{"dataset":"tiny","epochs":2,"batch_size":512,"fanout":"5,5","axes":{"system":["pyg+"],"mem_limit":["none"]}}`)
	r := e.runs(x.ID)[0]
	e.play(r, 2, 10, store.StatusDone)
	past := loadPastRuns(context.Background(), e.st, "tiny")
	runs := past["pyg+"]
	if len(runs) != 1 {
		t.Fatalf("past runs %+v", past)
	}
	got, _ := e.st.Run(context.Background(), r.ID)
	pr := runs[0]
	if got.MeanEpochS == nil || got.TotalS == nil || pr.secPerEpoch != *got.MeanEpochS || math.Abs(pr.fixedS-(*got.TotalS-2**got.MeanEpochS)) > 1e-9 ||
		pr.cell != (pastCell{model: "sage", fanout: "5,5", compute: "cpu", batch: 512}) {
		t.Errorf("past run %+v of run %+v", pr, got)
	}
}
