package fields

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// RunField is one run-level measurement: a key of the run's summary
// record as the store keeps it (store.Run.Summary, the summary_json
// column: the child's metrics.SummaryRecord with the runner's and the
// store's measurements written over it, docs/ARCHITECTURE.md "Adding a
// metric"). The runs CSV, the API's run object and the run page's
// measurement rows derive from Runs.
type RunField struct {
	// Key is the summary record's JSON key, the runs CSV column and the
	// API run object's key.
	Key  string
	Unit string // "s", "bytes", "ratio", "count" or "" (a pure number)
	Doc  string
	// Label is the run page's row for it; "" leaves it off the page.
	Label string
	// Int: an integer (bytes), written without a fraction.
	Int bool
	// Trained: an accuracy, "n/a" in the CSV (null in the API) for a run
	// that trained no model (compute other than cpu, DESIGN §10).
	Trained bool
	// Optional: the run page leaves its row out when not measured (else
	// it shows a dash).
	Optional bool
	// Column: the runs table keeps it as a SQL column too (it is filtered,
	// sorted or aggregated in SQL: store/conds.go, store/compare.go), a
	// copy the store writes with the summary. The summary is the source
	// of truth; a column is not needed to add a metric.
	Column bool
}

// Runs declares every run-level measurement, in the order of the runs
// CSV's columns (after epochs_done, before queued_at).
var Runs = []RunField{
	{Key: "mean_epoch_s", Unit: "s", Label: "mean epoch time (s)", Column: true,
		Doc: "mean epoch_s over the run's stored non-warm-up epochs"},
	{Key: "best_val_acc", Unit: "ratio", Label: "best val acc", Trained: true, Column: true,
		Doc: "the best val_acc of the run's stored epochs"},
	{Key: "test_acc", Unit: "ratio", Label: "test acc at best val", Trained: true, Column: true,
		Doc: "test_acc at the first epoch of the best val_acc"},
	{Key: "total_s", Unit: "s", Label: "total time (s)",
		Doc: "the run's wall time: the child's own when it wrote a summary, else the runner's"},
	{Key: "prepare_s", Unit: "s",
		Doc: "the variant's Prepare (offline phases), from the child's summary"},
	{Key: "peak_rss_bytes", Unit: "bytes", Int: true, Label: "peak RSS", Optional: true,
		Doc: "the child's peak resident set (the larger of the runner's and the child's reading)"},
	{Key: "peak_cgroup_bytes", Unit: "bytes", Int: true, Label: "peak cgroup (incl. page cache)", Optional: true, Column: true,
		Doc: "the run's cgroup peak, page cache included"},
	{Key: "feature_disk_bytes", Unit: "bytes", Int: true, Label: "disk space of its feature copies", Optional: true,
		Doc: "disk space of the variant's own copies of feature rows, written in Prepare (DiskGNN: packed chunks and disk caches); absent for a variant that keeps none"},
	{Key: "feature_disk_blowup", Unit: "ratio", Label: "feature copies / feature table", Optional: true,
		Doc: "feature_disk_bytes over the dataset's feature table (DiskGNN Fig. 12's disk size blowup)"},
}

// FindRun returns the run field of a key.
func FindRun(key string) (*RunField, bool) {
	for i := range Runs {
		if Runs[i].Key == key {
			return &Runs[i], true
		}
	}
	return nil, false
}

// RunValues are a run's measurements as its stored summary has them
// (nil or invalid JSON: none measured).
type RunValues map[string]json.RawMessage

// ParseRunValues reads a stored summary's keys.
func ParseRunValues(summary []byte) RunValues {
	if len(summary) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(summary, &m) != nil {
		return nil
	}
	return m
}

// Value is the field's value in v; false when not measured (absent, null
// or not a number).
func (f *RunField) Value(v RunValues) (float64, bool) {
	raw, ok := v[f.Key]
	if !ok {
		return 0, false
	}
	var x *float64
	if json.Unmarshal(raw, &x) != nil || x == nil {
		return 0, false
	}
	return *x, true
}

// Measured is the field's value for a run: false when not measured, or
// when it is Trained and the run trained no model.
func (f *RunField) Measured(v RunValues, trains bool) (float64, bool) {
	if f.Trained && !trains {
		return 0, false
	}
	return f.Value(v)
}

// Format writes x as a CSV cell: integers without a fraction, other
// numbers in the shortest form that reads back the same.
func (f *RunField) Format(x float64) string {
	if f.Int {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// Cell is the field's runs CSV cell: its value, "" when not measured,
// notTrained for a Trained field of a run that trained no model.
func (f *RunField) Cell(v RunValues, trains bool, notTrained string) string {
	if f.Trained && !trains {
		return notTrained
	}
	x, ok := f.Value(v)
	if !ok {
		return ""
	}
	return f.Format(x)
}

// JSON is the field's value for the API: a number (an integer for Int
// fields), nil (null) when not measured or not trained.
func (f *RunField) JSON(v RunValues, trains bool) any {
	x, ok := f.Measured(v, trains)
	if !ok {
		return nil
	}
	if f.Int {
		return int64(x)
	}
	return x
}

// RegisterRun adds a field to Runs (last) and returns what removes it: for
// tests that add a run metric the way a change to Runs does. It panics on
// a field without a key, or with a key Runs has.
func RegisterRun(f RunField) (remove func()) {
	if f.Key == "" {
		panic("fields: a run field needs a key")
	}
	if _, dup := FindRun(f.Key); dup {
		panic(fmt.Sprintf("fields: run field %q is declared already", f.Key))
	}
	Runs = append(slices.Clip(Runs), f)
	return func() {
		Runs = slices.DeleteFunc(slices.Clone(Runs), func(x RunField) bool { return x.Key == f.Key })
	}
}
