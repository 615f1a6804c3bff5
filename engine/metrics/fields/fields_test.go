package fields

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"outcore/engine/metrics"
)

// recordKeys are the JSON keys EpochRecord declares.
func recordKeys() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[metrics.EpochRecord]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}

// TestEpochTableIsWhole: every field has a unique key, a meaning and a
// reader; a field read from the record has the record's own key (so its
// CSV column, digest key and API key are one name) and a derived one has
// a key the record does not use; no field is newer than the records.
func TestEpochTableIsWhole(t *testing.T) {
	keys := recordKeys()
	seen := map[string]bool{}
	for _, f := range Epochs {
		if f.Key == "" || f.Doc == "" || f.Get == nil {
			t.Errorf("field %q: want a key, a doc and a reader (Get)", f.Key)
		}
		if seen[f.Key] {
			t.Errorf("field %q declared twice", f.Key)
		}
		seen[f.Key] = true
		if f.Derived == keys[f.Key] {
			t.Errorf("field %q: derived %v, but the record %s the key", f.Key, f.Derived, map[bool]string{true: "has", false: "lacks"}[keys[f.Key]])
		}
		if f.Since > metrics.EpochMetricsVersion {
			t.Errorf("field %q: since metrics version %d, records are at %d", f.Key, f.Since, metrics.EpochMetricsVersion)
		}
		if f.NoCSV && !f.Mean {
			t.Errorf("field %q is in neither the CSV nor the digest", f.Key)
		}
	}
}

// TestFieldValuesFromTheRecord reads fields from a record as its JSON
// says: versions before a field's Since, absent optional values and a
// missing host pressure are not measured; a field without a reader reads
// the record's own key.
func TestFieldValuesFromTheRecord(t *testing.T) {
	line := `{"type":"epoch","epoch":2,"epoch_s":1.5,"bytes_read":300,"feature_bytes_read":100,"topology_bytes_read":50,
		"metrics_version":2,"wall_stall_s":0.25,"io_floor_s":0.5,"host_pressure":{"load1":2,"others_cpu_pct":0,"steal_pct":0,"psi_io_some_pct":7},
		"disk_service":{"reads":4000,"read_bytes":16384000,"read_ms":0.5,"depth":8,"busy_s":2,"profile_ms":0.125,"slowdown":4},
		"new_metric":12.5,"not_a_number":"x"}`
	var e metrics.EpochRecord
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatal(err)
	}
	newMetric := Field{Key: "new_metric"}
	text := Field{Key: "not_a_number"}
	absent := Field{Key: "absent"}
	for _, c := range []struct {
		f    *Field
		want float64
		ok   bool
		cell string
	}{
		{must(t, "epoch_s"), 1.5, true, "1.5"},
		{must(t, "feature_bytes_read"), 100, true, "100"},
		{must(t, "other_bytes_read"), 150, true, "150"},
		{must(t, "wall_stall_s"), 0, false, ""}, // version 2: the wall stages came with 3
		{must(t, "io_floor_s"), 0.5, true, "0.5"},
		{must(t, "io_efficiency"), 0, false, ""},
		{must(t, "host_load1"), 2, true, "2"},
		{must(t, "psi_io_pct"), 7, true, "7"},
		{must(t, "psi_cpu_pct"), 0, false, ""},
		{must(t, "val_acc"), 0, true, "0"},
		{must(t, "disk_reads"), 4000, true, "4000"},
		{must(t, "disk_read_ms"), 0.5, true, "0.5"},
		{must(t, "disk_slowdown"), 4, true, "4"},
		{must(t, "disk_lost_s"), 1.5, true, "1.5"}, // 2 s busy, a quarter of it the profile's
		{&newMetric, 12.5, true, "12.5"},
		{&text, 0, false, ""},
		{&absent, 0, false, ""},
	} {
		v, ok := c.f.Value(&e)
		if v != c.want || ok != c.ok || c.f.Cell(&e, true, "n/a") != c.cell {
			t.Errorf("%s: %v %v cell %q, want %v %v %q", c.f.Key, v, ok, c.f.Cell(&e, true, "n/a"), c.want, c.ok, c.cell)
		}
	}
	if got := must(t, "val_acc").Cell(&e, false, "n/a"); got != "n/a" {
		t.Errorf("val_acc of a run that trained no model: %q", got)
	}
	// a disk measured without a profile is not judged; an epoch without a
	// disk service measured none of it
	e.DiskService.ProfileMs, e.DiskService.Slowdown = nil, nil
	for _, k := range []string{"disk_profile_read_ms", "disk_slowdown", "disk_lost_s"} {
		if _, ok := must(t, k).Value(&e); ok {
			t.Errorf("%s measured without a profile", k)
		}
	}
	if v, ok := must(t, "disk_busy_s").Value(&e); !ok || v != 2 {
		t.Errorf("disk_busy_s without a profile: %v %v", v, ok)
	}
	e.DiskService = nil
	if _, ok := must(t, "disk_reads").Value(&e); ok {
		t.Error("disk_reads measured without a disk service")
	}
	// a record of version 1 (metrics_version absent) has no version-2 fields
	e.MetricsVersion = 0
	if _, ok := must(t, "feature_bytes_read").Value(&e); ok {
		t.Error("feature_bytes_read measured in a version-1 record")
	}
}

func must(t *testing.T, key string) *Field {
	t.Helper()
	f, ok := Find(key)
	if !ok {
		t.Fatalf("no field %q", key)
	}
	return f
}

// TestRegisterChangesTheFingerprint: a digested field added or removed
// changes the fingerprint stored digests are checked against; Register
// refuses a key declared already.
func TestRegisterChangesTheFingerprint(t *testing.T) {
	before, n := MeanFingerprint(), len(Epochs)
	remove := Register(Field{Key: "test_metric_s", Unit: "s", Mean: true, Doc: "a test's metric"})
	if MeanFingerprint() == before || len(Epochs) != n+1 || CSV()[len(CSV())-1].Key != "test_metric_s" {
		t.Errorf("after Register: fingerprint %x (was %x), %d fields", MeanFingerprint(), before, len(Epochs))
	}
	remove()
	if MeanFingerprint() != before || len(Epochs) != n {
		t.Errorf("after remove: fingerprint %x, want %x; %d fields, want %d", MeanFingerprint(), before, len(Epochs), n)
	}
	defer func() {
		if recover() == nil {
			t.Error("Register of epoch_s again did not panic")
		}
	}()
	Register(Field{Key: "epoch_s"})
}
