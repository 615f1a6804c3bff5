// Package fields is the one declaration of the epoch measurements
// (docs/ARCHITECTURE.md "Adding a metric"): each metric of an epoch
// record with its key, unit, meaning and how it is read from the record.
// The store's epoch CSV, the digest's means (report) and the API's epoch
// JSON derive from Epochs; the store keeps each epoch's record JSON whole,
// so a metric added here needs no migration, no insert and no codec.
// Runs (run.go) declares the run-level measurements the same way: keys of
// the run's stored summary, from which the runs CSV, the API's run object
// and the run page's measurement rows derive.
//
// A leaf of the engine: it imports engine/metrics only.
package fields

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"outcore/engine/metrics"
)

// Field is one epoch measurement.
type Field struct {
	// Key is the record's JSON key, the CSV column and the digest's mean
	// key. Keys of derived fields (Derived) are not in the record.
	Key  string
	Unit string // "s", "bytes", "rows", "count", "ratio", "%" or "" (a pure number)
	Doc  string
	// Since is the first metrics version (metrics.EpochMetricsVersion)
	// whose records measured it: older records have it not measured
	// (an empty CSV cell, left out of the means). 0 and 1: always.
	Since int
	// Int: an integer (a count of bytes, rows, batches), written without
	// a fraction.
	Int bool
	// Trained: a loss or accuracy, "n/a" for a run that trained no model
	// (compute other than cpu, DESIGN §10).
	Trained bool
	// Mean: the digest (report.Digest.Mean) keeps its mean over the steady
	// epochs that have it.
	Mean bool
	// NoCSV: not a column of the epoch CSV (a digest mean only).
	NoCSV bool
	// Derived: computed from other fields, not a key of the record.
	Derived bool
	// Get reads it from the record; false: not measured in that record.
	// Nil: the record's JSON value at Key (EpochRecord.Extra), a number.
	Get func(e *metrics.EpochRecord) (float64, bool)
}

// Value is the field's value in e; false when e did not measure it (a
// record older than Since, an absent optional value).
func (f *Field) Value(e *metrics.EpochRecord) (float64, bool) {
	if max(e.MetricsVersion, 1) < f.Since {
		return 0, false
	}
	if f.Get != nil {
		return f.Get(e)
	}
	raw, ok := e.Extra[f.Key]
	if !ok {
		return 0, false
	}
	var v *float64
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return 0, false
	}
	return *v, true
}

// Format writes v as a CSV cell: integers without a fraction, other
// numbers in the shortest form that reads back the same.
func (f *Field) Format(v float64) string {
	if f.Int {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Cell is the field's CSV cell for e: its value, "" when not measured,
// notTrained for a Trained field of a run that trained no model.
func (f *Field) Cell(e *metrics.EpochRecord, trains bool, notTrained string) string {
	if f.Trained && !trains {
		return notTrained
	}
	v, ok := f.Value(e)
	if !ok {
		return ""
	}
	return f.Format(v)
}

// Find returns the epoch field of a key.
func Find(key string) (*Field, bool) {
	for i := range Epochs {
		if Epochs[i].Key == key {
			return &Epochs[i], true
		}
	}
	return nil, false
}

// CSV are the fields that are columns of the epoch CSV, in order.
func CSV() []*Field {
	var out []*Field
	for i := range Epochs {
		if !Epochs[i].NoCSV {
			out = append(out, &Epochs[i])
		}
	}
	return out
}

// Means are the fields whose means a digest keeps.
func Means() []*Field {
	var out []*Field
	for i := range Epochs {
		if Epochs[i].Mean {
			out = append(out, &Epochs[i])
		}
	}
	return out
}

// MeanFingerprint identifies the set of digested fields (their keys and
// versions, in order): a digest stored under another fingerprint was made
// with other fields and is made again (report/digest_codec.go).
func MeanFingerprint() uint32 {
	h := fnv.New32a()
	for _, f := range Means() {
		h.Write([]byte(f.Key))
		h.Write([]byte{0, byte(f.Since), 0})
	}
	return h.Sum32()
}

// Register adds a field to Epochs (last, so its CSV column comes after the
// others) and returns what removes it: for tests that add a metric the way
// a change to Epochs does. It panics on a field without a key, or with a
// key Epochs has.
func Register(f Field) (remove func()) {
	if f.Key == "" {
		panic("fields: a field needs a key")
	}
	if _, dup := Find(f.Key); dup {
		panic(fmt.Sprintf("fields: %q is declared already", f.Key))
	}
	Epochs = append(slices.Clip(Epochs), f)
	return func() {
		Epochs = slices.DeleteFunc(slices.Clone(Epochs), func(x Field) bool { return x.Key == f.Key })
	}
}
