package web

import (
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
)

// A run that trained no model shows n/a for its losses and accuracies,
// never 0; its I/O floor shows when measured, "–" when not.
func TestRowsOfARunWithoutTraining(t *testing.T) {
	val := 0.0
	floor, eff := 2.5, 0.5
	model := store.Run{ID: 1, Compute: "model:h100-roofline", BestValAcc: &val}
	e := metrics.EpochRecord{EpochS: 5, Evaluated: false, IOFloorS: &floor, IOEfficiency: &eff}
	row := epochRow(model, e)
	if row.Loss != "n/a" || row.TrainAcc != "n/a" || row.ValAcc != "n/a" || row.TestAcc != "n/a" {
		t.Errorf("model-mode epoch row %+v", row)
	}
	if row.IOFloor != "2.50" || row.IOEff != "0.500" {
		t.Errorf("io floor %q, efficiency %q", row.IOFloor, row.IOEff)
	}
	if got := runRow(model).BestVal; got != "n/a" {
		t.Errorf("best val %q", got)
	}
	if f := computeFact(model); !strings.Contains(f, "model:h100-roofline") || !strings.Contains(f, "n/a") {
		t.Errorf("compute fact %q", f)
	}
	// an epoch faster than its floor says why the floor was not one
	// (GNNDrive-GPU at 1.06: 104.8 M reads at depth 226, the profile's
	// deepest 64)
	floor, over := 1178.7, 1.06
	row = epochRow(model, metrics.EpochRecord{EpochS: 1110.5, IOFloorS: &floor, IOEfficiency: &over,
		DiskService: &metrics.DiskService{Reads: 104819951, Depth: 226.1}})
	if row.IOEff != "1.06" || !strings.Contains(row.IOTitle, "above 1") || !strings.Contains(row.IOTitle, "104819951 reads at a mean depth of 226") {
		t.Errorf("epoch above its floor: %q %q", row.IOEff, row.IOTitle)
	}
	if row = epochRow(model, e); strings.Contains(row.IOTitle, "above 1") {
		t.Errorf("an epoch at half its floor is above it: %q", row.IOTitle)
	}
	cpu := store.Run{ID: 2, Compute: "cpu"}
	e = metrics.EpochRecord{EpochS: 5, TrainLoss: 0.75, Evaluated: true, ValAcc: 0.5}
	row = epochRow(cpu, e)
	if row.Loss == "n/a" || row.ValAcc == "n/a" || row.IOFloor != "–" || !strings.Contains(row.IOTitle, "had not been measured") {
		t.Errorf("cpu epoch row %+v", row)
	}
}

func TestFrontierFacts(t *testing.T) {
	runs := []store.Run{
		{Seq: 0, System: "pyg+", MemLimitBytes: 256 << 20, Status: store.StatusDone, EpochsDone: 1},
		{Seq: 1, System: "pyg+", MemLimitBytes: 16 << 20, Status: store.StatusOOM},
		{Seq: 2, System: "pyg+", MemLimitBytes: 20 << 20, Status: store.StatusDone, EpochsDone: 1},
	}
	f := frontierFacts(runs)
	if len(f) != 1 || f[0].K != "pyg+" || !strings.Contains(f[0].V, "20") || !strings.Contains(f[0].V, "failed at 16") || !strings.Contains(f[0].V, "3 probes") {
		t.Errorf("frontier facts %+v", f)
	}
}
