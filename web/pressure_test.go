package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
	"outcore/store/storetest"
)

// A run measured on a busy host says so on its page; a quiet one states
// its host pressure without a warning.
func TestRunPageFlagsBusyHost(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	runs := e.runs(x.ID)
	e.play(runs[0], 2, 1, store.StatusDone)
	code, page := e.get(fmt.Sprintf("/runs/%d", runs[0].ID))
	if code != 200 || strings.Contains(page, `id="run-busy-host"`) || !strings.Contains(page, "host while training") {
		t.Fatalf("quiet run: %d, busy banner or no host pressure in the summary", code)
	}
	busy := storetest.Epoch(2, 1)
	busy.HostPressure = &metrics.HostPressure{Load1: 5, OthersCPUPct: 60}
	if err := e.st.Update(context.Background(), func(tx *store.Tx) error { return tx.InsertEpoch(runs[0].ID, &busy) }); err != nil {
		t.Fatal(err)
	}
	_, page = e.get(fmt.Sprintf("/runs/%d", runs[0].ID))
	for _, want := range []string{`id="run-busy-host"`, "epoch 2: other processes used 60 % of the CPUs", "memory unavailable"} {
		if !strings.Contains(page, want) {
			t.Errorf("busy run page lacks %q", want)
		}
	}
}

// The run page's epoch table shows the wall-clock stages, which add up to
// the epoch; an epoch recorded before them shows its summed stage seconds
// and says so.
func TestEpochRowShowsWallClockStages(t *testing.T) {
	e := storetest.Epoch(1, 10) // summed stages 2 + 5 + 3 + 1; wall 1 + 5 + 3 + 1
	e.SampleS = 30              // parallel samplers' seconds exceed the epoch
	row := epochRow(store.Run{ID: 1}, e)
	if row.SampleS != fmtF(1) || row.ExtractS != fmtF(5) || !strings.Contains(row.StageTitle, "add up to the epoch") {
		t.Errorf("current epoch row: sample %s load %s (%s)", row.SampleS, row.ExtractS, row.StageTitle)
	}
	legacy := storetest.LegacyEpoch(1, 10)
	row = epochRow(store.Run{ID: 1}, legacy)
	if row.SampleS != fmtF(legacy.SampleS) || !strings.Contains(row.StageTitle, "before metrics version 3") {
		t.Errorf("legacy epoch row: sample %s (%s)", row.SampleS, row.StageTitle)
	}
}
