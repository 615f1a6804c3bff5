package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"outcore/store"
)

// TestRunStall: a running run's Stall is the "stall" of its newest status
// event, read back by every query of runs (brief ones included) while
// that event is among the run's newest 64: set by a stall event, kept
// while only the runner's notes follow it, cleared by the status event
// of the run running again, never shown once the run has ended.
func TestRunStall(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	e, runs := seed(t, s, "pyg+")
	id := runs[0].ID
	add := func(kind string, data map[string]string, n int) {
		t.Helper()
		raw, _ := json.Marshal(data)
		if err := s.Update(ctx, func(tx *store.Tx) error {
			for range n {
				if err := tx.AppendEvent(&store.Event{ExperimentID: e.ID, RunID: id, Kind: kind, Data: raw}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what, state, stall string) {
		t.Helper()
		for _, brief := range []bool{false, true} {
			rs, err := s.Runs(ctx, store.RunFilter{ExperimentID: e.ID, Brief: brief})
			if err != nil {
				t.Fatal(err)
			}
			if got := rs[0]; got.State() != state || got.Stall != stall {
				t.Fatalf("%s (brief %v): state %s, stall %q; want %s, %q", what, brief, got.State(), got.Stall, state, stall)
			}
		}
		if r, err := s.Run(ctx, id); err != nil || r.Stall != stall {
			t.Fatalf("%s: Run: stall %q %v", what, r.Stall, err)
		}
	}
	const cause = "stopped: state T"
	// A stall event of a queued run is none (it cannot be stalled).
	add(store.EventStatus, map[string]string{"status": store.StatusStalled, "stall": cause}, 1)
	check("queued", store.StatusQueued, "")
	if err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.ClaimRun(id); return err }); err != nil {
		t.Fatal(err)
	}
	add(store.EventStatus, map[string]string{"status": store.StatusRunning}, 1)
	add(store.EventSample, map[string]string{}, 500)
	check("sampling", store.StatusRunning, "")
	add(store.EventStatus, map[string]string{"status": store.StatusStalled, "stall": cause}, 1)
	check("stalled", store.StatusStalled, cause)
	add(store.EventLog, nil, 10) // the runner's notes while it is stalled
	check("stalled, with notes after", store.StatusStalled, cause)
	add(store.EventStatus, map[string]string{"status": store.StatusRunning}, 1)
	add(store.EventSample, map[string]string{}, 3)
	check("running again", store.StatusRunning, "")
	add(store.EventStatus, map[string]string{"status": store.StatusStalled, "stall": "disk full: x"}, 1)
	check("stalled again", store.StatusStalled, "disk full: x")
	if err := s.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.FinishRun(id, store.RunEnd{Status: store.StatusCancelled, Error: "cancelled while running"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	check("cancelled", store.StatusCancelled, "")
}
