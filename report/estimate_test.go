package report

import (
	"math"
	"testing"
	"time"
)

// TestEstimateRun: a planned run takes the median epoch time of the past
// runs of its cell times its epochs; without any, of its variant and
// dataset; without those, it is unknown. Under a testbed that decides the
// epochs (0) the past runs' median epochs are taken.
func TestEstimateRun(t *testing.T) {
	cellA := func(s float64, ep int) PastRun {
		return PastRun{System: "ginex", Dataset: "medium", Compute: "model:x", Testbed: "ginex-vldb22", MemLimitBytes: 100, MeanEpochS: s, Epochs: ep}
	}
	other := func(s float64, ep int) PastRun { // same variant and dataset, another limit
		r := cellA(s, ep)
		r.MemLimitBytes = 200
		return r
	}
	plan := PlannedRun{System: "ginex", Dataset: "medium", Compute: "model:x", Testbed: "ginex-vldb22", MemLimitBytes: 100, Epochs: 3}
	for _, c := range []struct {
		name  string
		plan  PlannedRun
		past  []PastRun
		want  float64
		known bool
		match string
		n     int
	}{
		{"no past run", plan, nil, 0, false, "", 0},
		{"the cell's median", plan, []PastRun{cellA(10, 3), cellA(30, 3), cellA(12, 3), other(1, 3)}, 36, true, MatchCell, 3},
		{"even count: mean of the middle two", plan, []PastRun{cellA(10, 3), cellA(20, 3)}, 45, true, MatchCell, 2},
		{"the variant's when the cell has none", plan, []PastRun{other(5, 1), other(7, 1), other(9, 1)}, 21, true, MatchVariant, 3},
		{"another dataset is not the variant's", plan, []PastRun{{System: "ginex", Dataset: "small", MeanEpochS: 5, Epochs: 1}}, 0, false, "", 0},
		{"another variant is not counted", plan, []PastRun{{System: "pyg+", Dataset: "medium", MeanEpochS: 5, Epochs: 1}}, 0, false, "", 0},
		{"runs without an epoch time are left out", plan, []PastRun{cellA(0, 3), cellA(4, 0), other(2, 2)}, 6, true, MatchVariant, 1},
		{"testbed's epochs: the past runs' median", PlannedRun{System: "ginex", Dataset: "medium", Compute: "model:x", Testbed: "ginex-vldb22", MemLimitBytes: 100},
			[]PastRun{cellA(10, 4), cellA(10, 6), cellA(10, 5)}, 50, true, MatchCell, 3},
	} {
		got := EstimateRun(c.plan, c.past)
		if got.Known != c.known || math.Abs(got.Seconds-c.want) > 1e-9 || got.Match != c.match || got.N != c.n {
			t.Errorf("%s: %+v; want %.1f s known=%v match %q n=%d", c.name, got, c.want, c.known, c.match, c.n)
		}
	}
}

// TestEstimateStudyAndBudget: a study's estimate sums its runs' and
// counts the unknown ones; FitBudget picks, in order, the known studies
// that fit one after another, passing over the ones that do not.
func TestEstimateStudyAndBudget(t *testing.T) {
	past := []PastRun{{System: "a", Dataset: "d", MeanEpochS: 10, Epochs: 1}}
	e := EstimateStudy("s", []PlannedRun{{System: "a", Dataset: "d", Epochs: 2}, {System: "a", Dataset: "d", Epochs: 1}, {System: "b", Dataset: "d", Epochs: 1}}, 2, past)
	if e.Runs != 3 || e.Refused != 2 || e.Seconds != 30 || e.Unknown != 1 || e.Known() {
		t.Errorf("EstimateStudy: %+v; want 3 runs, 2 refused, 30 s known, 1 unknown", e)
	}
	es := []StudyEstimate{
		{Study: "a", Seconds: 600},
		{Study: "b", Seconds: 2900},
		{Study: "unknown", Seconds: 10, Unknown: 1},
		{Study: "c", Seconds: 1100},
		{Study: "broken", Err: "cannot plan"},
		{Study: "d", Seconds: 1},
	}
	for _, c := range []struct {
		budget time.Duration
		want   []string
	}{
		{0, []string{"a", "b", "unknown", "c", "broken", "d"}},
		{30 * time.Minute, []string{"a", "c", "d"}},
		{time.Hour, []string{"a", "b", "d"}},
		{time.Second, []string{"d"}},
	} {
		got := FitBudget(es, c.budget)
		if len(got) != len(c.want) {
			t.Errorf("budget %v: %v; want %v", c.budget, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("budget %v: %v; want %v", c.budget, got, c.want)
				break
			}
		}
	}
}
