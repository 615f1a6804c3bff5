package experiments

import (
	"context"
	"errors"
	"strings"
	"testing"

	"outcore/experiments/grid"
	"outcore/store"
)

// The compute axis (DESIGN §10) expands like any other, reaches each
// run's configuration, and refuses unknown modes and profiles by name.
func TestComputeAxis(t *testing.T) {
	g, err := grid.ParseGrid([]byte(`{"dataset":"tiny","system":"fake","axes":{"compute":["cpu","none","model:h100-roofline"],"mem_limit":["1GiB","2GiB"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	cells := g.Cells()
	if len(cells) != 6 || cells[0].Compute != "cpu" || cells[1].Compute != "cpu" || cells[1].MemLimit != "2GiB" || cells[4].Compute != "model:h100-roofline" {
		t.Fatalf("cells %+v", cells)
	}
	cfg, err := g.CellConfig(cells[4])
	if err != nil || cfg.Compute != "model:h100-roofline" {
		t.Fatalf("config %q, %v", cfg.Compute, err)
	}
	back, err := grid.ParseGrid(g.JSON())
	if err != nil || len(back.Axes.Compute) != 3 {
		t.Fatalf("round trip: %+v, %v", back.Axes.Compute, err)
	}
	top, err := grid.ParseGrid([]byte(`{"dataset":"tiny","system":"fake","compute":"none"}`))
	if err != nil || len(top.Cells()) != 1 || top.Cells()[0].Compute != "none" {
		t.Fatalf("top-level compute: %+v, %v", top, err)
	}
	for _, tc := range []struct{ grid, want string }{
		{`{"dataset":"tiny","axes":{"compute":["gpu"]}}`, "compute modes: compute \"gpu\": want cpu, none or model:PROFILE"},
		{`{"dataset":"tiny","axes":{"compute":["model:nosuch"]}}`, `no accelerator profile "nosuch"`},
		{`{"dataset":"tiny","axes":{"compute":["cpu",""]}}`, "compute modes: \"cpu\" is listed twice"},
		{`{"dataset":"tiny","axes":{"compute":[]}}`, "compute modes: want a non-empty list"},
	} {
		_, err := grid.ParseGrid([]byte(tc.grid))
		if err == nil || !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("grid %s: %v, want %q", tc.grid, err, tc.want)
		}
	}
}

// Runs created from a compute axis carry their mode in the store.
func TestComputeAxisStored(t *testing.T) {
	h := newHarness(t, nil)
	e := h.create(`{"dataset":"tiny","system":"fake","axes":{"compute":["cpu","model:h100-roofline"]}}`)
	runs, err := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %d, %v", len(runs), err)
	}
	if runs[0].Compute != "cpu" || runs[1].Compute != "model:h100-roofline" || !strings.Contains(string(runs[1].Config), `"compute":"model:h100-roofline"`) {
		t.Errorf("stored compute %q, %q; config %s", runs[0].Compute, runs[1].Compute, runs[1].Config)
	}
}
