package report

import (
	"context"
	"fmt"
	"testing"

	"outcore/store"
	"outcore/store/storetest"
)

// TestCrossComparison pools two experiments: the charts show each cell
// per experiment, and a cell that got twice as slow is flagged while one
// within its spread is not.
func TestCrossComparison(t *testing.T) {
	st, a, _ := openStore(t)
	ctx := context.Background()
	slow := storetest.Grid()
	for i := range slow {
		if slow[i].System == "gnndrive" && slow[i].MemLimit == 256<<20 {
			slow[i].EpochS *= 2 // a regression
		}
	}
	b, _, err := storetest.Experiment(ctx, st, "again", slow)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := LoadCrossComparison(ctx, st, nil, []int64{a.ID, b.ID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := cmp.Chart("epoch-vs-mem", "")
	names := map[string]bool{}
	for _, s := range ch.Series {
		names[s.Name] = true
	}
	for _, want := range []string{"gnndrive · exp #1", "gnndrive · exp #2", "pyg+ · exp #2"} {
		if !names[want] {
			t.Errorf("no series %q in %v", want, names)
		}
	}
	flagged := map[string]bool{}
	for _, c := range cmp.Changes() {
		flagged[c.Variant+" "+c.Cell] = c.Slower
		if c.FromExp != "#1" || c.ToExp != "#2" {
			t.Errorf("change %+v between %s and %s", c, c.FromExp, c.ToExp)
		}
	}
	if !flagged["gnndrive 256MiB"] || flagged["gnndrive 128MiB"] || flagged["pyg+ 256MiB"] {
		t.Errorf("flags %v", flagged)
	}
	if _, ok := flagged["pyg+ 128MiB"]; ok {
		t.Error("an OOM cell was compared")
	}
	// Picking cells: only gnndrive's.
	cmp, err = LoadCrossComparison(ctx, st, nil, []int64{a.ID, b.ID}, []store.Cond{{Field: "system", Op: "=", Value: "gnndrive"}})
	if err != nil || len(cmp.Variants()) != 1 {
		t.Errorf("picked cells: %v %v", cmp.Variants(), err)
	}
}

func TestSlowerBeyondSpread(t *testing.T) {
	p := func(y, sd float64, n int) Point { return Point{Y: &y, SD: sd, N: n} }
	for _, c := range []struct {
		a, b Point
		want bool
	}{
		{p(1, 0.05, 3), p(1.2, 0.05, 3), true},
		{p(1, 0.3, 3), p(1.2, 0.3, 3), false},
		{p(1, 0, 1), p(1.05, 0, 1), false},
		{p(1, 0, 1), p(1.2, 0, 1), true},
		{p(1, 0.01, 3), p(0.5, 0.01, 3), false},
	} {
		if got := SlowerBeyondSpread(c.a, c.b); got != c.want {
			t.Errorf("%v±%v → %v±%v: %v, want %v", *c.a.Y, c.a.SD, *c.b.Y, c.b.SD, got, c.want)
		}
	}
	if ids, err := ParseIDs([]string{"3,5", "7 3"}); err != nil || len(ids) != 3 {
		t.Errorf("ParseIDs: %v %v", ids, err)
	}
	if _, err := ParseIDs([]string{"3x"}); err == nil {
		t.Error("bad id accepted")
	}
}

// TestChangesCompareLikeWithLike: an experiment's cold single epochs are
// not set against another's warm epochs (that was called a +22 %
// regression); the pair is reported as unlike instead, and warm runs are
// compared with warm runs.
func TestChangesCompareLikeWithLike(t *testing.T) {
	run := func(id int64, exp int, epochS float64, warm bool) RunData {
		d := &Digest{Epochs: 1, Steady: 1, Mean: map[string]float64{"epoch_s": epochS}}
		if warm {
			d.Epochs, d.Warm = 3, 1
		}
		return RunData{ID: id, System: "gnndrive", MemLimit: 256 << 20, Status: RunDone, Digest: d, EpochsDone: d.Epochs,
			Experiment: int64(exp), ExpLabel: fmt.Sprintf("#%d", exp), ExpOrder: exp}
	}
	cmp := NewComparison([]RunData{
		run(1, 1, 10, false), run(2, 1, 10, false), // #1: cold
		run(3, 2, 12.2, true), run(4, 2, 12.2, true), // #2: warm, 22 % "slower"
		run(5, 3, 20, true), run(6, 3, 20, true), // #3: warm, slower than #2
	})
	chs := cmp.Changes()
	if len(chs) != 2 {
		t.Fatalf("changes %+v", chs)
	}
	if c := chs[0]; c.FromExp != "#1" || c.ToExp != "#2" || c.Slower || c.Unlike != "#1 cold, #2 warm" || c.From.Y != nil {
		t.Errorf("cold against warm: %+v", c)
	}
	if c := chs[1]; c.FromExp != "#2" || c.ToExp != "#3" || !c.Slower || c.Epochs != EpochsWarm || c.From.N != 2 || c.Unlike != "" {
		t.Errorf("warm against warm: %+v", c)
	}
}
