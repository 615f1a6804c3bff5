package fields

import (
	"reflect"
	"strings"
	"testing"

	"outcore/engine/metrics"
)

// TestRunTableIsWhole: every run field has a unique key, a meaning and a
// unit, and is a key of the summary record (metrics.SummaryRecord), so
// the child's summary, the store's, the CSV column and the API key are
// one name; the fields SQL filters, sorts or aggregates are columns.
func TestRunTableIsWhole(t *testing.T) {
	keys := map[string]bool{}
	st := reflect.TypeFor[metrics.SummaryRecord]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	seen := map[string]bool{}
	for _, f := range Runs {
		if f.Key == "" || f.Doc == "" || f.Unit == "" {
			t.Errorf("run field %q: want a key, a doc and a unit", f.Key)
		}
		if seen[f.Key] {
			t.Errorf("run field %q declared twice", f.Key)
		}
		seen[f.Key] = true
		if !keys[f.Key] {
			t.Errorf("run field %q is not a key of metrics.SummaryRecord", f.Key)
		}
	}
	// store/conds.go, report/filter.go and store/compare.go read these in SQL
	for _, k := range []string{"mean_epoch_s", "best_val_acc", "test_acc", "peak_cgroup_bytes"} {
		if f, ok := FindRun(k); !ok || !f.Column {
			t.Errorf("run field %q: want a declared column", k)
		}
	}
}

func TestRunFieldValues(t *testing.T) {
	v := ParseRunValues([]byte(`{"total_s":0.30000000000000004,"peak_rss_bytes":9007199254740991,"best_val_acc":0.5,"test_acc":null,"prepare_s":"x"}`))
	for _, tc := range []struct {
		key    string
		trains bool
		cell   string
		json   any
	}{
		{"total_s", true, "0.30000000000000004", 0.30000000000000004},
		{"peak_rss_bytes", true, "9007199254740991", int64(9007199254740991)},
		{"best_val_acc", true, "0.5", 0.5},
		{"best_val_acc", false, "n/a", nil}, // trained no model
		{"test_acc", true, "", nil},         // null: not measured
		{"mean_epoch_s", true, "", nil},     // absent
		{"prepare_s", true, "", nil},        // not a number
		{"peak_cgroup_bytes", false, "", nil},
	} {
		f, ok := FindRun(tc.key)
		if !ok {
			t.Fatalf("%s not declared", tc.key)
		}
		if got := f.Cell(v, tc.trains, "n/a"); got != tc.cell {
			t.Errorf("%s (trains %v) cell %q, want %q", tc.key, tc.trains, got, tc.cell)
		}
		if got := f.JSON(v, tc.trains); got != tc.json {
			t.Errorf("%s (trains %v) JSON %#v, want %#v", tc.key, tc.trains, got, tc.json)
		}
	}
	if ParseRunValues(nil) != nil || ParseRunValues([]byte("not json")) != nil {
		t.Error("no summary, or an unreadable one, has values")
	}
}

func TestRegisterRun(t *testing.T) {
	n := len(Runs)
	remove := RegisterRun(RunField{Key: "test_x", Unit: "count", Doc: "x"})
	if f, ok := FindRun("test_x"); !ok || len(Runs) != n+1 || Runs[n].Key != "test_x" || f.Key != "test_x" {
		t.Fatalf("registered field not last: %v", Runs)
	}
	for _, bad := range []RunField{{}, {Key: "total_s"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterRun(%+v) did not panic", bad)
				}
			}()
			RegisterRun(bad)
		}()
	}
	remove()
	if _, ok := FindRun("test_x"); ok || len(Runs) != n {
		t.Fatalf("removed field still declared: %v", Runs)
	}
}
