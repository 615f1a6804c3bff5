package metrics

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestRecordJSONKeepsUnknownKeys: a record's keys that EpochRecord does not
// declare survive reading and writing it, after its own.
func TestRecordJSONKeepsUnknownKeys(t *testing.T) {
	var e EpochRecord
	if err := json.Unmarshal([]byte(`{"type":"epoch","epoch":1,"epoch_s":2,"zeta":[1,2],"alpha":{"x":1}}`), &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Extra) != 2 || string(e.Extra["zeta"]) != "[1,2]" || e.EpochS != 2 {
		t.Fatalf("read %+v extra %v", e, e.Extra)
	}
	b, err := e.JSON()
	if err != nil || !strings.HasSuffix(string(b), `,"alpha":{"x":1},"zeta":[1,2]}`) {
		t.Fatalf("JSON %s %v", b, err)
	}
	var back EpochRecord
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, e) {
		t.Fatalf("round trip: %+v, want %+v (%v)", back, e, err)
	}
	w, err := e.JSONWith(struct {
		RunID int `json:"run_id"`
	}{7})
	if err != nil || !strings.HasPrefix(string(w), `{"run_id":7,"type":"epoch",`) || !json.Valid(w) {
		t.Fatalf("JSONWith %s %v", w, err)
	}
	// a key of the head wins over an Extra key of the same name
	e.Extra["run_id"] = json.RawMessage("3")
	w, err = e.JSONWith(struct {
		RunID int `json:"run_id"`
	}{7})
	if err != nil || strings.Count(string(w), `"run_id"`) != 1 || !strings.HasPrefix(string(w), `{"run_id":7,`) || e.Extra["run_id"] == nil {
		t.Fatalf("JSONWith over a record that carried run_id: %s %v", w, err)
	}
	// a record without unknown keys has no Extra
	var plain EpochRecord
	if err := json.Unmarshal([]byte(`{"type":"epoch","epoch":0}`), &plain); err != nil || plain.Extra != nil {
		t.Fatalf("plain record: %v %v", plain.Extra, err)
	}
}
