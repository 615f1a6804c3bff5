package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"outcore/store"
)

// TestStalledRunShown: a running run whose child writes no records is
// shown stalled, with its cause, on the run page (with Cancel), in the
// runs list (with cancel), in its experiment's queue and in the API's
// status; once it runs again it is shown running. The runner's part is
// played through the store: its status events, as experiments writes
// them (experiments/stall.go).
func TestStalledRunShown(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	r := e.runs(x.ID)[0]
	const cause = "stopped: the child's process is stopped (state T: SIGSTOP, SIGTSTP or a debugger)"
	status := func(data map[string]string, msg string) {
		t.Helper()
		raw, _ := json.Marshal(data)
		if err := e.st.Update(context.Background(), func(tx *store.Tx) error {
			return tx.AppendEvent(&store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: store.EventStatus, Msg: msg, Data: raw})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.st.Update(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ClaimRun(r.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	status(map[string]string{"status": store.StatusRunning}, "running as pid 1")
	status(map[string]string{"status": store.StatusStalled, "stall": cause}, "stalled: no records for 10s while its process lives; "+cause)

	apiStatus := func() (string, string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/runs/%d", r.ID), nil)
		req.Header.Set("Accept", "application/json")
		resp := e.request(req)
		var got struct{ Status, Stall string }
		if b := body(t, resp); resp.StatusCode != 200 || json.Unmarshal([]byte(b), &got) != nil {
			t.Fatalf("GET /api/runs/%d: %d %s", r.ID, resp.StatusCode, b)
		}
		return got.Status, got.Stall
	}
	if s, why := apiStatus(); s != store.StatusStalled || why != cause {
		t.Errorf("API: status %q, stall %q", s, why)
	}
	_, page := e.get(fmt.Sprintf("/runs/%d", r.ID))
	for _, want := range []string{`data-status="stalled"`, `id="run-stall"`, "state T: SIGSTOP", `id="cancel-run"`} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	_, list := e.get("/runs")
	if !strings.Contains(list, `<tr data-status="stalled">`) || !strings.Contains(list, fmt.Sprintf(`hx-post="/runs/%d/cancel"`, r.ID)) ||
		!strings.Contains(list, "state T: SIGSTOP") {
		t.Errorf("the runs list does not show the run stalled with its cause and a cancel")
	}
	_, exp := e.get(fmt.Sprintf("/experiments/%d", x.ID))
	if !strings.Contains(exp, fmt.Sprintf(`id="run-%d"`, r.ID)) || !strings.Contains(exp, `data-status="stalled"`) {
		t.Errorf("the experiment's queue does not show the run stalled")
	}

	status(map[string]string{"status": store.StatusRunning}, "running again: its records came back after 12s (it was stalled, stopped)")
	if s, why := apiStatus(); s != store.StatusRunning || why != "" {
		t.Errorf("API after the records came back: status %q, stall %q", s, why)
	}
	if _, page := e.get(fmt.Sprintf("/runs/%d", r.ID)); strings.Contains(page, `id="run-stall"`) || strings.Contains(page, `data-status="stalled"`) {
		t.Errorf("the run page still shows the run stalled")
	}

	// Stalled again, it can be cancelled.
	status(map[string]string{"status": store.StatusStalled, "stall": cause}, "stalled again")
	if resp := e.post(fmt.Sprintf("/runs/%d/cancel", r.ID), nil); resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusNoContent {
		t.Fatalf("cancel a stalled run: %d %s", resp.StatusCode, body(t, resp))
	}
	if got, _ := e.st.Run(context.Background(), r.ID); !got.CancelRequested {
		t.Errorf("cancel of the stalled run not requested: %+v", got.Status)
	}
}
