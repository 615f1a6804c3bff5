package report

import (
	"context"
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
