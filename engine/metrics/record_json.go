package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// An epoch record's JSON is the source of truth of its measurements
// (docs/ARCHITECTURE.md "Adding a metric"): the store keeps it whole, and
// a key the EpochRecord struct does not declare is kept too, in Extra,
// so that a metric declared only in engine/metrics/fields (read from the
// record by its key) reaches the store, the CSV, the digest and the API
// without a struct field.

// epochKeys are the JSON keys EpochRecord's fields declare.
var epochKeys = sync.OnceValue(func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[EpochRecord]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
})

// UnmarshalJSON reads an epoch record, keeping the keys EpochRecord does
// not declare in Extra (nil when there are none).
func (e *EpochRecord) UnmarshalJSON(b []byte) error {
	type plain EpochRecord // without this method
	*e = EpochRecord{}
	if err := json.Unmarshal(b, (*plain)(e)); err != nil {
		return err
	}
	known := epochKeys()
	if !hasUnknownKey(b, known) {
		return nil // the common case: one decode
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k, v := range all {
		if !known[k] {
			if e.Extra == nil {
				e.Extra = map[string]json.RawMessage{}
			}
			e.Extra[k] = v
		}
	}
	return nil
}

// hasUnknownKey reports whether the JSON object b (valid JSON) has a
// top-level key outside known, or a key with an escape (which only the
// full decode reads right): a scan of its bytes, without decoding values.
func hasUnknownKey(b []byte, known map[string]bool) bool {
	depth, expectKey := 0, false
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			depth++
			expectKey = depth == 1
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		case '"':
			j, escaped := i+1, false
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					escaped = true
					j++
				}
			}
			if expectKey {
				if escaped || !known[string(b[i+1:j])] {
					return true
				}
				expectKey = false
			}
			i = j
		}
	}
	return false
}

// JSON is the record as JSON: its fields, then its Extra keys in order
// (json.Marshal of the struct alone leaves Extra out).
func (e *EpochRecord) JSON() ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("epoch %d record: %w", e.Epoch, err)
	}
	return appendExtra(b, e.Extra)
}

// appendExtra adds extra's keys, sorted, to the JSON object b.
func appendExtra(b []byte, extra map[string]json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return b, nil
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = bytes.TrimRight(b, " \n")
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("epoch record JSON is not an object")
	}
	out := append([]byte(nil), b[:len(b)-1]...)
	for _, k := range keys {
		if !json.Valid(extra[k]) {
			return nil, fmt.Errorf("epoch record key %q: invalid JSON value", k)
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		kb, _ := json.Marshal(k)
		out = append(append(append(out, kb...), ':'), extra[k]...)
	}
	return append(out, '}'), nil
}

// JSONWith is the record's JSON with more keys before its own (the API's
// run_id and received_at): head is a JSON object whose members come
// first, and win over an Extra key of the same name (a line that carried
// its run_id).
func (e *EpochRecord) JSONWith(head any) ([]byte, error) {
	h, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	var headKeys map[string]json.RawMessage
	if err := json.Unmarshal(h, &headKeys); err != nil || headKeys == nil {
		return nil, fmt.Errorf("epoch record head is not a JSON object")
	}
	r := *e
	for k := range r.Extra {
		if _, dup := headKeys[k]; dup {
			r.Extra = maps.Clone(e.Extra)
			for k := range headKeys {
				delete(r.Extra, k)
			}
			break
		}
	}
	b, err := r.JSON()
	if err != nil {
		return nil, err
	}
	h = bytes.TrimSpace(h)
	if len(headKeys) == 0 {
		return b, nil
	}
	return append(append(h[:len(h)-1:len(h)-1], ','), b[1:]...), nil
}
