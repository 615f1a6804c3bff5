package report

import (
	"math"
	"strings"
	"testing"
)

func find(t *testing.T, ch Chart, series, label string) Point {
	t.Helper()
	for _, s := range ch.Series {
		if s.Name != series {
			continue
		}
		for _, p := range s.Points {
			if p.Label == label {
				return p
			}
		}
	}
	t.Fatalf("%s: no point %s/%s", ch.ID, series, label)
	return Point{}
}

func TestEpochTimeVsMemoryLimit(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	ch, _ := cmp.Chart("epoch-vs-mem", "")
	// 256 MiB, 512 MiB, 1 GiB double: a log₂ axis in bytes, no categories.
	if ch.Empty != "" || len(ch.Series) != 3 || len(ch.Categories) != 0 || ch.XType != "log" || ch.XLogBase != 2 || ch.XUnit != "bytes" || !ch.Dodge {
		t.Fatalf("chart %+v", ch)
	}
	if p := find(t, ch, "ginex", "512MiB"); p.X != 512<<20 {
		t.Errorf("x of 512 MiB is %v, want bytes", p.X)
	}
	if got := []string{ch.Series[0].Name, ch.Series[1].Name, ch.Series[2].Name}; got[0] != "pyg+" || got[2] != "gnndrive" {
		t.Errorf("series order %v", got)
	}
	// pyg+ at 256 MiB: both repeats OOM.
	if p := find(t, ch, "pyg+", "256MiB"); p.Status != StatusOOM || p.Y != nil || p.N != 0 {
		t.Errorf("pyg+ 256 MiB: %+v", p)
	}
	// ginex at 1 GiB (li=2, vi=1): steady epochs 1 and 2 average t+0.015 per run.
	p := find(t, ch, "ginex", "1GiB")
	r0 := 2.0*1 + 0.015
	r1 := r0 + 0.1
	if p.N != 2 || math.Abs(*p.Y-(r0+r1)/2) > 1e-9 || math.Abs(p.SD-0.1/math.Sqrt2) > 1e-9 || math.Abs(p.Min-r0) > 1e-9 || math.Abs(p.Max-r1) > 1e-9 {
		t.Errorf("ginex 1 GiB: %+v (want mean %v)", p, (r0+r1)/2)
	}
	// gnndrive at 512 MiB: one repeat failed, one measured.
	if p := find(t, ch, "gnndrive", "512MiB"); p.Status != StatusPartial || p.N != 1 {
		t.Errorf("gnndrive 512 MiB: %+v", p)
	}
	if ch, _ := cmp.Chart("epoch-vs-dim", ""); ch.Empty == "" {
		t.Error("dimension not varied but the chart is not empty")
	}
}

func TestNormalisedRuntime(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	ch, _ := cmp.Chart("normalised", "ginex")
	if p := find(t, ch, "ginex", "512MiB"); math.Abs(*p.Y-1) > 1e-12 {
		t.Errorf("baseline not 1: %v", *p.Y)
	}
	g := find(t, ch, "gnndrive", "1GiB")
	gi := find(t, NewChartOrDie(t, cmp, "epoch-vs-mem"), "ginex", "1GiB")
	gd := find(t, NewChartOrDie(t, cmp, "epoch-vs-mem"), "gnndrive", "1GiB")
	if math.Abs(*g.Y - *gd.Y / *gi.Y) > 1e-12 {
		t.Errorf("gnndrive/ginex at 1 GiB = %v, want %v", *g.Y, *gd.Y / *gi.Y)
	}
	// With pyg+ as baseline, 256 MiB has no baseline (OOM): n/a, not a bar.
	ch, _ = cmp.Chart("normalised", "pyg+")
	if p := find(t, ch, "ginex", "256MiB"); p.Y != nil || p.Status != StatusNoBaseline {
		t.Errorf("ginex 256 MiB over an OOM baseline: %+v", p)
	}
	// An unknown baseline falls back to the first variant.
	if ch, _ := cmp.Chart("normalised", "nope"); ch.Title != "Runtime normalised to pyg+" {
		t.Errorf("title %q", ch.Title)
	}
}

func NewChartOrDie(t *testing.T, cmp *Comparison, id string) Chart {
	t.Helper()
	ch, ok := cmp.Chart(id, "")
	if !ok {
		t.Fatalf("no chart %s", id)
	}
	return ch
}

func TestStagesHitsDiskAccuracy(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	st := NewChartOrDie(t, cmp, "stage-time")
	if st.Kind != "stack" || len(st.Series) != 6 || st.Series[4].Name != "inspect" || st.Series[5].Role != "marker" {
		t.Fatalf("stages: %d series, last %q", len(st.Series), st.Series[len(st.Series)-1].Name)
	}
	hv := NewChartOrDie(t, cmp, "hit-vs-mem")
	// gnndrive (vi=2) at 512 MiB (li=1): cpu hits 300+100+100 of 1000 lookups.
	if p := find(t, hv, "gnndrive", "512MiB"); math.Abs(*p.Y-0.5) > 1e-12 {
		t.Errorf("hit ratio %v, want 0.5", *p.Y)
	}
	tiers := NewChartOrDie(t, cmp, "tier-hits")
	// The tiers are gpu, cpu and ssd: none is called "device" (which
	// means the GPU everywhere else). The ssd tier is the share of all
	// lookups served from the SSD (its own hits over its own lookups are
	// 1 by construction): gnndrive at 512 MiB read 700-100-100 = 500 of
	// 1000 rows from it.
	if len(tiers.Series) != 2 || tiers.Series[0].Name != "cpu" || tiers.Series[1].Name != "ssd" {
		t.Errorf("tier series %v", tiers.Series)
	}
	if p := find(t, tiers, "ssd", "gnndrive · 512MiB"); p.Y == nil || math.Abs(*p.Y-0.5) > 1e-12 {
		t.Errorf("gnndrive 512 MiB ssd tier %+v, want 0.5 of the lookups", p)
	}
	amp := NewChartOrDie(t, cmp, "amplification")
	if p := find(t, amp, "pyg+", "1GiB"); math.Abs(*p.Y-2) > 1e-12 {
		t.Errorf("pyg+ amplification %v, want 2", *p.Y)
	}
	tta := NewChartOrDie(t, cmp, "time-to-accuracy")
	if len(tta.Series) != 8 { // 9 grid points of a variant, less pyg+ at 256 MiB (OOM)
		t.Errorf("time-to-accuracy has %d lines, want 8", len(tta.Series))
	}
	if p := find(t, tta, "ginex · 512MiB", "epoch 2"); p.N != 2 || p.SD != 0 || math.Abs(*p.Y-0.71) > 1e-12 {
		t.Errorf("ginex 512 MiB epoch 2: %+v", p)
	}
	if p := find(t, tta, "gnndrive · 512MiB", "epoch 0"); p.N != 1 {
		t.Errorf("gnndrive 512 MiB has one measured repeat: %+v", p)
	}
	rows := cmp.AccuracyRows()
	if len(rows) != 9 {
		t.Fatalf("%d accuracy rows", len(rows))
	}
	for _, r := range rows {
		if r.Variant == "ginex" && r.Cell == "256MiB" && (r.Val.N != 2 || math.Abs(*r.Val.Y-0.71) > 1e-12) {
			t.Errorf("ginex 256 MiB best val %+v", r.Val)
		}
	}
}

func TestChartsWithoutRuns(t *testing.T) {
	for _, ch := range NewComparison(nil).Charts("") {
		if ch.Empty == "" {
			t.Errorf("%s: no runs but not empty", ch.ID)
		}
	}
	runs := fixtureRuns()
	for i := range runs {
		runs[i].Status, runs[i].Digest = RunQueued, nil
	}
	if ch := NewChartOrDie(t, NewComparison(runs), "epoch-vs-mem"); ch.Empty == "" {
		t.Error("only queued runs, but the chart is not empty")
	}
}

// TestMemoryAxesSayWhatTheyPlot: a memory-limit axis plots the host
// budget and says so, naming where the limit in force is (a run's cgroup
// may hold its model step or GPU tiers beside the budget).
func TestMemoryAxesSayWhatTheyPlot(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	for _, id := range []string{"epoch-vs-mem", "hit-vs-mem"} {
		ch := NewChartOrDie(t, cmp, id)
		if ch.XLabel != MemAxisLabel || MemAxisLabel != "memory limit (host budget)" {
			t.Errorf("%s: x label %q", id, ch.XLabel)
		}
	}
	if ch := NewChartOrDie(t, cmp, "epoch-vs-mem"); !strings.Contains(ch.Note, "cgroup_limit_bytes") {
		t.Errorf("epoch-vs-mem note %q does not say where the limit in force is", ch.Note)
	}
}
