package store

import (
	"context"
	"strings"
	"testing"
)

// TestFloorlessEpochsUseTheirIndex: the search for epochs whose floor can
// be filled in (every server start) reads the partial index of migration
// 0013, not every epoch's record.
func TestFloorlessEpochsUseTheirIndex(t *testing.T) {
	s, err := Open(context.Background(), t.TempDir()+"/plan.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.r.Query(`EXPLAIN QUERY PLAN SELECT r.host_json, e.run_id FROM epochs e JOIN runs r ON r.id = e.run_id
		WHERE ` + floorlessSQL + ` ORDER BY e.run_id, e.epoch`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if !strings.Contains(strings.Join(plan, "; "), "USING INDEX epochs_floorless") {
		t.Fatalf("the floorless search does not use epochs_floorless: %q", plan)
	}
}
