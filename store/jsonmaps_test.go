package store

import (
	"encoding/json"
	"reflect"
	"testing"

	"outcore/engine/metrics"
)

var jsonMapSeeds = []string{
	`{}`, `{"forward_s":0.125,"backward_s":1e-3}`, `{"a":-0,"b":12345678901234567890}`, `{"a":1,"a":2}`,
	`{"cpu":{"lookups":1000,"hits":400},"device":{"lookups":600,"hits":600}}`, `{"cpu":{"hits":4,"lookups":10}}`,
	`{"cpu":{"Lookups":3}}`, `{"cpu":{"lookups":1.5}}`, `{"x":"s"}`, `{"\u0041":1}`, `{ "a" : 1 }`, `{"a":+1}`, `{"a":01}`,
	`{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":1}x`, `{"a":1,}`, `{"é":2}`, `null`, ``, `{"cpu":{"lookups":9223372036854775808}}`,
}

// checkLikeJSON fails unless the scanner's result is encoding/json's.
func checkLikeJSON(t *testing.T, s string) {
	var wantF map[string]float64
	errF := json.Unmarshal([]byte(s), &wantF)
	gotF, gerrF := decodeStages(s)
	if (errF == nil) != (gerrF == nil) || (errF == nil && !reflect.DeepEqual(gotF, wantF)) {
		t.Errorf("stages %q: got %v (%v), encoding/json %v (%v)", s, gotF, gerrF, wantF, errF)
	}
	var wantT map[string]metrics.TierCount
	errT := json.Unmarshal([]byte(s), &wantT)
	gotT, gerrT := decodeTiers(s)
	if (errT == nil) != (gerrT == nil) || (errT == nil && !reflect.DeepEqual(gotT, wantT)) {
		t.Errorf("tiers %q: got %v (%v), encoding/json %v (%v)", s, gotT, gerrT, wantT, errT)
	}
}

func TestJSONMapsLikeEncodingJSON(t *testing.T) {
	for _, s := range jsonMapSeeds {
		checkLikeJSON(t, s)
	}
	// What the store writes takes the fast path.
	b, _ := json.Marshal(map[string]metrics.TierCount{"cpu": {Lookups: 10, Hits: 4}, "gpu": {}})
	if _, ok := scanTierMap(string(b)); !ok {
		t.Errorf("the store's own tiers %s fall back to encoding/json", b)
	}
	b, _ = json.Marshal(map[string]float64{"forward_s": 0.1, "backward_s": 3.3e-7, "x": 12})
	if _, ok := scanFloatMap(string(b)); !ok {
		t.Errorf("the store's own stages %s fall back to encoding/json", b)
	}
}

// FuzzJSONMaps: stages_json and tiers_json decode as encoding/json does.
func FuzzJSONMaps(f *testing.F) {
	for _, s := range jsonMapSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkLikeJSON(t, s) })
}
