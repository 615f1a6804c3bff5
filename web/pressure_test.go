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
	for _, want := range []string{`id="run-busy-host"`, "epoch 2: other processes used 60 % of the CPUs", "memory unavailable",
		`title="busy: other processes used 60 % of the CPUs`, `60 / 0 <span class="tag warn">busy</span>`} {
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

// The epoch table shows each epoch's other processes' CPU and steal, and
// marks an epoch busy with why, a proactive reclaim included; an epoch
// without host pressure shows a dash.
func TestEpochRowShowsHostPressure(t *testing.T) {
	e := storetest.Epoch(1, 10)
	e.HostPressure = &metrics.HostPressure{Load1: 1, OthersCPUPct: 3.4, StealPct: 2.6}
	row := epochRow(store.Run{ID: 1}, e)
	if row.Host != "3 / 3" || row.Busy || !strings.HasPrefix(row.HostTitle, "load 1.00") {
		t.Errorf("quiet epoch: %q busy %v (%s)", row.Host, row.Busy, row.HostTitle)
	}
	e.HostPressure.Reclaim = "DAMON pageout (kdamond 0) of the host's memory idle ≥ 60 s, up to 128 MiB/s"
	row = epochRow(store.Run{ID: 1}, e)
	if !row.Busy || !strings.HasPrefix(row.HostTitle, "busy: the host's proactive reclaim was on (DAMON pageout") ||
		!strings.HasSuffix(row.HostTitle, "proactive reclaim on: "+e.HostPressure.Reclaim) {
		t.Errorf("epoch under reclaim: busy %v (%s)", row.Busy, row.HostTitle)
	}
	e.HostPressure = nil
	if row = epochRow(store.Run{ID: 1}, e); row.Host != "–" || row.Busy {
		t.Errorf("no host pressure: %q busy %v", row.Host, row.Busy)
	}
}
