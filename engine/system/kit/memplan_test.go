package kit

import (
	"bytes"
	"errors"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/train"
)

// holdLimit records what a plan holds outside the budget.
type holdLimit struct{ holds []int64 }

func (*holdLimit) Lift() error              { return nil }
func (l *holdLimit) Hold(extra int64) error { l.holds = append(l.holds, extra); return nil }
func (*holdLimit) Bytes() int64             { return 512 * mib }
func (*holdLimit) Enforced() bool           { return true }

// TestApply: a plan that does not fit is refused before anything is held;
// one that fits holds its parts beside the model step, states them in one
// deviation naming the cgroup limit in force (what store.Run.CgroupLimit
// reads back), records its cuts and the memory account, and sets the
// first phase's Go limit from its numbers.
func TestApply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	newBudget := func() (*Budget, *holdLimit, *bytes.Buffer) {
		var out bytes.Buffer
		l := &holdLimit{}
		env := &train.Env{Config: train.Config{DeviceMemBytes: 100 * mib}, MemBudget: 512 * mib, Limit: l, Emit: metrics.NewEmitter(&out)}
		return &Budget{env: env, ws: Workspace{DeviceBytes: 50 * mib}}, l, &out
	}

	b, l, out := newBudget()
	refusal := errors.New("too small")
	if _, err := b.Apply(Plan{Fits: false, Refusal: refusal, Device: []Part{{Name: "gpu_cache", Bytes: 10 * mib}}}); err != refusal {
		t.Fatalf("a plan that does not fit: %v", err)
	}
	if len(l.holds) != 0 || out.Len() != 0 {
		t.Fatalf("a refused plan held %v and wrote %q", l.holds, out.String())
	}
	// the refusal names the plan's least budget, rounded up to a MiB
	_, err := b.Apply(Plan{Fits: false, Refusal: refusal, LeastBudget: 300*mib + 1})
	if !errors.Is(err, refusal) || !strings.HasSuffix(err.Error(), "; the least budget that fits is 301 MiB") {
		t.Fatalf("a refusal with its least budget: %v", err)
	}
	if len(l.holds) != 0 || out.Len() != 0 {
		t.Fatalf("a refused plan held %v and wrote %q", l.holds, out.String())
	}

	b, l, out = newBudget()
	p := Plan{Fits: true, Why: "as the GPU memory it is in the paper",
		Device: []Part{{Name: "gpu_cache", Bytes: 60 * mib, What: "the GPU cache (7 rows)"}, {Name: "batch_inputs", Bytes: 20 * mib, What: "2 batch inputs"}},
		Cuts:   []string{"queues cut to 1"},
		Heap:   &GoHeap{OffHeap: 100 * mib, HeapNeed: 80 * mib}}
	limit, err := b.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.holds) != 1 || l.holds[0] != 130*mib {
		t.Errorf("held %v, want the step and the parts, 130 MiB", l.holds)
	}
	if want := GoMemoryLimit(512*mib, 50*mib, 100*mib, 0, 80*mib); limit != want || debug.SetMemoryLimit(-1) != want {
		t.Errorf("Go limit %d MiB, want %d MiB", limit>>20, want>>20)
	}
	acc := b.env.MemoryAccount()
	if acc.DeviceTiers["gpu_cache"] != 60*mib || acc.DeviceTierBytes != 80*mib || acc.ModelStepBytes != 50*mib {
		t.Errorf("memory account %+v", acc)
	}
	for _, part := range []string{"held outside the 512 MiB host budget, as the GPU memory it is in the paper", "the GPU cache (7 rows) 60 MiB, 2 batch inputs 20 MiB, model step 50 MiB", "the cgroup limit is 642 MiB", "queues cut to 1"} {
		if !strings.Contains(out.String(), part) {
			t.Errorf("records %q lack %q", out.String(), part)
		}
	}

	b, l, out = newBudget()
	if limit, err := b.Apply(Plan{Fits: true}); err != nil || limit != 0 || len(l.holds) != 0 || out.Len() != 0 {
		t.Errorf("an empty plan: limit %d, err %v, holds %v, records %q", limit, err, l.holds, out.String())
	}
	if got, want := b.Enter(GoHeap{HeapNeed: 80 * mib}), GoMemoryLimit(512*mib, 50*mib, 0, 0, 80*mib); got != want {
		t.Errorf("Enter: %d MiB, want %d MiB", got>>20, want>>20)
	}
}

// sized is a plan that fits when the budget holds need (0: unlimited).
type sized struct{ budget, need int64 }

func (p sized) Fits() bool { return p.budget <= 0 || p.need <= p.budget }

// TestSizer: the floor (MinMemory) and a run's least budget (Size) come
// from the same sizing: the least budget its plan fits, with the
// estimated workspace and the zero profile for the floor and the run's
// own for Size.
func TestSizer(t *testing.T) {
	type profile struct{ extra int64 }
	size := Sizer[int64, profile, sized](func(s Sizing[int64, profile]) sized {
		return sized{budget: s.Budget, need: s.WS.BaseBytes + s.Opt + s.Prof.extra}
	})
	s := Sizing[int64, profile]{Budget: 100 * mib, WS: Workspace{BaseBytes: 40 * mib}, Opt: 30 * mib, Prof: profile{extra: 50 * mib}}
	p, least := Size(size, s)
	if p.Fits() || p.budget != 100*mib || least != 120*mib {
		t.Errorf("Size: plan %+v, least %d, want an unfit plan of the 100 MiB budget and 120 MiB", p, least)
	}
	s.Budget = 0
	if _, least := Size(size, s); least != 120*mib {
		t.Errorf("Size without a budget: least %d, want 120 MiB", least)
	}
}
