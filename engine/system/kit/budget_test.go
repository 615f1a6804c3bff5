package kit

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"outcore/engine/train"
)

const mib = int64(1) << 20

func TestPlanStep(t *testing.T) {
	m := StepMeasure{Arena: 128 * mib, Extra: 4 * mib, Lib: 36 * mib, Params: 2 * mib}
	// outside: reserved 128 + 16 = 144 MiB, held 144 + 18 = 162 MiB, plus
	// extras, library buffers and parameters: 204 MiB
	out := PlanStep(m, true)
	want := StepPlan{Measure: m, Reserved: 144 * mib, Outside: true, HeldArena: 162 * mib, Device: 204 * mib}
	if out != want {
		t.Fatalf("outside: %+v, want %+v", out, want)
	}
	// 162 / 128 = 1.2656: the deviation states 27%
	if p := out.ArenaMarginPct(); p != 27 {
		t.Fatalf("margin %d%%, want 27%%", p)
	}
	d := StepDeviation(out, 8, 256*mib)
	for _, part := range []string{"204 MiB", "162 MiB of activations", "largest of 8 profiled", "plus 27%", "40 MiB of matrix-library", "outside the 256 MiB memory budget", "cgroup limit is 460 MiB"} {
		if !strings.Contains(d, part) {
			t.Errorf("deviation %q lacks %q", d, part)
		}
	}
	// host: the reserve and the extras are charged to the budget
	in := PlanStep(m, false)
	want = StepPlan{Measure: m, Reserved: 144 * mib, ChargedArena: 144 * mib, ChargedExtra: 4 * mib}
	if in != want {
		t.Fatalf("host: %+v, want %+v", in, want)
	}
	var w Workspace
	w.setStep(out)
	if w.DeviceBytes != 204*mib || w.ArenaBytes != 0 || w.StepExtra != 0 || w.StepArena != 144*mib || w.StepOther != 40*mib || w.LibBytes != 36*mib {
		t.Fatalf("workspace outside: %+v", w)
	}
	w = Workspace{}
	w.setStep(in)
	if w.DeviceBytes != 0 || w.ArenaBytes != 144*mib || w.StepExtra != 4*mib || w.LibBytes != 36*mib {
		t.Fatalf("workspace host: %+v", w)
	}
	if p := (StepPlan{}).ArenaMarginPct(); p != 0 {
		t.Fatalf("no step: margin %d", p)
	}
}

func TestGoMemoryLimit(t *testing.T) {
	cases := []struct {
		name                                          string
		budget, device, offHeap, keepCached, heapNeed int64
		want                                          int64
	}{
		{"no budget", 0, 10 * mib, 0, 0, 0, 0},
		{"no plan: the budget less an eighth", 512 * mib, 0, 0, 0, 0, 448 * mib},
		{"no plan, step outside on top", 512 * mib, 100 * mib, 0, 0, 0, 548 * mib},
		{"planned heap with its quarter", 512 * mib, 0, 0, 0, 80 * mib, 100 * mib},
		{"caches and cache kept leave less", 512 * mib, 0, 300 * mib, 100 * mib, 80 * mib, 80 * mib},
		{"never below the plan", 512 * mib, 0, 400 * mib, 100 * mib, 80 * mib, 80 * mib},
		{"never below 32 MiB", 64 * mib, 0, 60 * mib, 0, 0, 32 * mib},
	}
	for _, c := range cases {
		if got := GoMemoryLimit(c.budget, c.device, c.offHeap, c.keepCached, c.heapNeed); got != c.want {
			t.Errorf("%s: %d MiB, want %d MiB", c.name, got>>20, c.want>>20)
		}
	}
}

func TestReserveBytes(t *testing.T) {
	for _, c := range []struct{ budget, want int64 }{{0, 32 * mib}, {100 * mib, 32 * mib}, {320 * mib, 32 * mib}, {1000 * mib, 100 * mib}} {
		if got := ReserveBytes(c.budget); got != c.want {
			t.Errorf("ReserveBytes(%d) = %d, want %d", c.budget, got, c.want)
		}
	}
}

func TestEstimateWorkspace(t *testing.T) {
	shape := train.DatasetShape{Nodes: 1000, Edges: 5000, FeatureDim: 16, Train: 300}
	w := EstimateWorkspace(shape, train.Config{Batch: 100})
	want := Workspace{BaseBytes: RuntimeFloor + 8*1001 + 4*1000, MaxInputs: 100, MeanInputs: 100, BatchBytes: 800, RowBytes: 64}
	if w != want {
		t.Fatalf("%+v, want %+v", w, want)
	}
	// batch 0 or beyond the split: the whole split is one batch
	if w := EstimateWorkspace(shape, train.Config{Batch: 0}); w.MaxInputs != 300 {
		t.Fatalf("whole split: %d inputs", w.MaxInputs)
	}
}

func TestMinBudget(t *testing.T) {
	for _, need := range []int64{1, 2, 12345, 1 << 30, 1<<40 + 7} {
		if got := MinBudget(func(b int64) bool { return b >= need }); got != need {
			t.Errorf("need %d: MinBudget %d", need, got)
		}
	}
	if got := MinBudget(func(int64) bool { return false }); got != 1<<50 {
		t.Errorf("never feasible: %d", got)
	}
}

// TestEnterStrict: a strict phase leaves the matrix library's buffers
// (C memory, held outside the budget with the step) out of the Go limit.
func TestEnterStrict(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	b := &Budget{env: &train.Env{MemBudget: 512 * mib}, ws: Workspace{DeviceBytes: 200 * mib, LibBytes: 30 * mib}}
	if got, want := b.Enter(GoHeap{HeapNeed: 80 * mib}), int64(300*mib); got != want {
		t.Errorf("Enter: %d MiB, want %d MiB", got>>20, want>>20)
	}
	if got, want := b.Enter(GoHeap{HeapNeed: 80 * mib, Strict: true}), int64(270*mib); got != want {
		t.Errorf("Enter strict: %d MiB, want %d MiB", got>>20, want>>20)
	}
	if got := debug.SetMemoryLimit(-1); got != 270*mib {
		t.Errorf("runtime memory limit %d MiB after a strict Enter, want 270 MiB", got>>20)
	}
}
