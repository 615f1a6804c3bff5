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

// TestHasUnknownKeyIsTheDecodersAnswer: the scan that spares the second
// decode finds an unknown key exactly where decoding the object into a
// map does (nested objects' keys, strings holding quotes, braces and
// commas are not top-level keys; an escaped key takes the full decode).
func TestHasUnknownKeyIsTheDecodersAnswer(t *testing.T) {
	known := epochKeys()
	for _, c := range []struct {
		line    string
		unknown bool
	}{
		{`{"type":"epoch","epoch":1}`, false},
		{`{"type":"epoch","stages":{"new_s":1},"host_pressure":{"load1":2}}`, false},
		{`{"type":"epoch","compute":"a\",\"x\":{","epoch":1}`, false},
		{`{"type":"epoch","tiers":{"gpu":{"lookups":1,"hits":1}},"z":[{"a":1}]}`, true},
		{`{"counters":{"a":1},"io_requests":[1,2],"new_metric":1}`, true},
		{` { "epoch_s" : 1 , "other" : 2 } `, true},
		{`{"ep\u006fch":1}`, true},
		{`{}`, false},
	} {
		if got := hasUnknownKey([]byte(c.line), known); got != c.unknown {
			t.Errorf("%s: unknown key %v, want %v", c.line, got, c.unknown)
		}
		var e EpochRecord
		if err := json.Unmarshal([]byte(c.line), &e); err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		var all map[string]json.RawMessage
		json.Unmarshal([]byte(c.line), &all)
		want := 0
		for k := range all {
			if !known[k] {
				want++
			}
		}
		if len(e.Extra) != want {
			t.Errorf("%s: Extra %v, want %d keys", c.line, e.Extra, want)
		}
	}
}
