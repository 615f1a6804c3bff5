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
