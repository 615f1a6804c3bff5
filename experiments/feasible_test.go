package experiments

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
	_ "outcore/engine/system/ginex" // the real variant of the regression below
	"outcore/engine/train"
	"outcore/experiments/grid"
	"outcore/store"
)

// TestSkipInfeasibleCells: a cell below its variant's floor refuses the
// grid and says how to skip it; with skip_infeasible the other cells are
// queued and the skipped one is stored with its reason (not dropped).
func TestSkipInfeasibleCells(t *testing.T) {
	h := newHarness(t, nil)
	gridText := `{"dataset":"tiny","epochs":1,"axes":{"system":["fake-floor"],"mem_limit":["1GiB","256MiB","512MiB"]}}`
	_, err := h.m.Create(context.Background(), []byte(gridText))
	if !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), "1 of the 3 runs cannot start") || !strings.Contains(err.Error(), "skip_infeasible") {
		t.Fatalf("grid with an infeasible cell: %v", err)
	}
	skip := strings.Replace(gridText, `"epochs":1`, `"epochs":1,"skip_infeasible":true`, 1)
	g, err := grid.ParseGrid([]byte(skip))
	if err != nil {
		t.Fatal(err)
	}
	if r := h.m.Refusals(g, nil); len(r) != 1 || r[0].MemLimitBytes != 256<<20 || r[0].NeedBytes != 300<<20 {
		t.Fatalf("refusals %+v", r)
	}
	e, err := h.m.Create(context.Background(), []byte(skip))
	if err != nil {
		t.Fatal(err)
	}
	if e.Counts.Total != 2 || e.Counts.Refused != 1 || len(e.Refused) != 1 {
		t.Fatalf("counts %+v refused %+v", e.Counts, e.Refused)
	}
	r := e.Refused[0]
	if r.System != "fake-floor" || r.Seq != 1 || !strings.Contains(r.Reason, "256MiB is below the 300MiB that fake-floor needs to start on tiny") {
		t.Fatalf("refused cell %+v", r)
	}
	// every cell infeasible: refused even when skipping
	none := strings.Replace(skip, `"1GiB","256MiB","512MiB"`, `"256MiB"`, 1)
	if _, err := h.m.Create(context.Background(), []byte(none)); !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), "none of the 1 runs can start") {
		t.Fatalf("all infeasible: %v", err)
	}
}

// TestGinexTinyFloorMatchesItsPlan is the regression of a grid the API
// accepted whose child then warned "the main loop's workspace exceeds the
// memory budget: expect an OOM kill" and was killed (ginex on tiny at
// 32 MiB): the floor every caller checks (train.MinMemoryFor, with the
// first batch probed) is the least budget at which ginex's own plan
// does not warn, so the grid is refused, and a limit at the floor passes.
func TestGinexTinyFloorMatchesItsPlan(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.MinMemory = grid.VariantMinMemory })
	_, err := h.m.Create(context.Background(), []byte(`{"dataset":"tiny","system":"ginex","mem_limit":"32MiB"}`))
	if !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), "ginex needs to start on tiny") {
		t.Fatalf("ginex on tiny at 32 MiB: %v", err)
	}
	g, _ := grid.ParseGrid([]byte(`{"dataset":"tiny","system":"ginex","mem_limit":"32MiB"}`))
	refused := h.m.Refusals(g, nil)
	if len(refused) != 1 {
		t.Fatalf("refusals %+v", refused)
	}
	need := refused[0].NeedBytes
	cfg, err := g.CellConfig(g.Cells()[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.MemLimitBytes = h.dataDir, need
	if got := train.MinMemoryFor(cfg, mustMeta(t, h.dataDir, "tiny")); got != need {
		t.Fatalf("the engine's floor %d, the grid's %d", got, need)
	}
	if err := train.CheckFeasible(cfg, mustMeta(t, h.dataDir, "tiny")); err != nil {
		t.Fatalf("at the floor: %v", err)
	}
	if need <= 32<<20 || need > 128<<20 {
		t.Fatalf("ginex's floor on tiny %d: want above its 32 MiB reserve, below 128 MiB", need)
	}
}

func mustMeta(t *testing.T, dataDir, name string) dataset.Meta {
	t.Helper()
	m, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(dataDir), name))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTestbedHostMemoryBelowFloorRefused is the regression of a grid
// under a paper's testbed with no limit of its own on a dataset far
// smaller than the paper's (helios-preprint on tiny: the mapping's host
// memory, 75 % of the features, is well under a MiB): its runs were queued
// and each failed in the child with a usage message. The mapping's host
// memory is now checked against the floor when the grid is made, as a
// given limit is.
func TestTestbedHostMemoryBelowFloorRefused(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.MinMemory = grid.VariantMinMemory })
	_, err := h.m.Create(context.Background(), []byte(`{"dataset":"tiny","system":"ginex","testbed":"ginex-vldb22","epochs":0}`))
	if !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), "testbed ginex-vldb22's host memory") || !strings.Contains(err.Error(), "that ginex needs to start on tiny") {
		t.Fatalf("a testbed's host memory below the floor: %v", err)
	}
	// a limit of the run's own (recorded as a deviation by the run) starts
	e, err := h.m.Create(context.Background(), []byte(`{"dataset":"tiny","system":"ginex","testbed":"ginex-vldb22","epochs":0,"mem_limit":"1GiB"}`))
	if err != nil {
		t.Fatalf("with a limit of its own: %v", err)
	}
	// Its run is queued with the compute it will use, the mapping's (the
	// paper's V100), not the configuration's empty one (before: "cpu" in
	// the runs CSV, the API and the estimate's past runs).
	runs, err := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	if got := runs[0].Compute; got != "model:v100-pcie-from-h100-pyg" {
		t.Fatalf("a run under ginex-vldb22 queued with compute %q, want the mapping's model:v100-pcie-from-h100-pyg", got)
	}
}
