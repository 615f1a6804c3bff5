package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/metrics/fields"
	"outcore/report"
	"outcore/store"
)

// TestMetricAddedInOnePlace adds a metric the way docs/ARCHITECTURE.md
// "Adding a metric" says, by its declaration in engine/metrics/fields alone
// (no struct field, no column, no migration, no codec), and finds it in
// the store, the epoch CSV, the digest and the API. The child's epoch
// records carry it as a key of their JSON; a record without it (an older
// child) has it not measured.
func TestMetricAddedInOnePlace(t *testing.T) {
	const key = "test_pages_touched"
	t.Cleanup(fields.Register(fields.Field{
		Key: key, Unit: "count", Int: true, Mean: true, Doc: "pages the epoch touched (a test's metric)"}))

	e := newEnv(t)
	e.login()
	ctx := context.Background()
	code, m := e.api("POST", "/api/experiments", tinyGrid)
	if code != 201 {
		t.Fatalf("create: %d %v", code, m)
	}
	r := e.runs(int64(m["id"].(float64)))[0]
	// two epoch records as a child writes them, read as the runner reads
	// them (json.Unmarshal of the line), the first from a child without
	// the metric
	lines := []string{
		`{"type":"epoch","epoch":0,"warmup":false,"epoch_s":1.5,"batches":3,"metrics_version":3}`,
		`{"type":"epoch","epoch":1,"warmup":false,"epoch_s":2.5,"batches":3,"metrics_version":3,"` + key + `":4096}`,
	}
	if err := e.st.Update(ctx, func(tx *store.Tx) error {
		if ok, err := tx.ClaimRun(r.ID); err != nil || !ok {
			return fmt.Errorf("claim: %v %v", ok, err)
		}
		for _, l := range lines {
			var rec metrics.EpochRecord
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				return err
			}
			if err := tx.InsertEpoch(r.ID, &rec); err != nil {
				return err
			}
		}
		_, err := tx.FinishRun(r.ID, store.RunEnd{Status: store.StatusDone})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// the store
	f, ok := fields.Find(key)
	if !ok {
		t.Fatalf("fields.Find(%q): not declared", key)
	}
	eps, err := e.st.Epochs(ctx, r.ID)
	if err != nil || len(eps) != 2 {
		t.Fatalf("epochs: %d %v", len(eps), err)
	}
	if _, ok := f.Value(&eps[0].EpochRecord); ok {
		t.Errorf("epoch 0 (no %s in its record) has it measured", key)
	}
	if v, ok := f.Value(&eps[1].EpochRecord); !ok || v != 4096 {
		t.Errorf("store: epoch 1 %s = %v %v, want 4096", key, v, ok)
	}

	// the epoch CSV: its column, empty where not measured
	_, body := e.get(fmt.Sprintf("/experiments/%d/export/epochs.csv", r.ExperimentID))
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("epochs.csv: %d rows, %v:\n%s", len(recs), err, body)
	}
	col := slices.Index(recs[0], key)
	if col < 0 {
		t.Fatalf("epochs.csv has no %s column: %v", key, recs[0])
	}
	if recs[1][col] != "" || recs[2][col] != "4096" {
		t.Errorf("epochs.csv %s cells %q, %q; want \"\", \"4096\"", key, recs[1][col], recs[2][col])
	}

	// the digest: its mean over the epochs that measured it
	recsOnly := []metrics.EpochRecord{eps[0].EpochRecord, eps[1].EpochRecord}
	if d := report.DigestEpochs(recsOnly); d.Mean[key] != 4096 {
		t.Errorf("digest mean of %s = %v, want 4096", key, d.Mean[key])
	}

	// the API: the record's key, as the child wrote it
	code, m = e.api("GET", fmt.Sprintf("/api/runs/%d/epochs", r.ID), "")
	apiEps, _ := m["epochs"].([]any)
	if code != 200 || len(apiEps) != 2 {
		t.Fatalf("API epochs: %d %v", code, m)
	}
	first, second := apiEps[0].(map[string]any), apiEps[1].(map[string]any)
	if _, has := first[key]; has || second[key] != float64(4096) || second["run_id"] != float64(r.ID) || second["epoch_s"] != 2.5 {
		t.Errorf("API epochs: %v", apiEps)
	}
}

// TestRunMetricAddedInOnePlace adds a run-level metric by its declaration
// in engine/metrics/fields.Runs alone (no struct field, no column, no
// migration), and finds it in the store, the runs CSV, the API's run
// object and the run page. The child's summary record carries it as a
// key of its JSON, which the runner hands the store whole (RunEnd.Summary).
func TestRunMetricAddedInOnePlace(t *testing.T) {
	const key, label = "test_files_opened", "files opened (test metric)"
	t.Cleanup(fields.RegisterRun(fields.RunField{
		Key: key, Unit: "count", Int: true, Label: label, Doc: "files the run opened (a test's metric)"}))

	e := newEnv(t)
	e.login()
	ctx := context.Background()
	code, m := e.api("POST", "/api/experiments", tinyGrid)
	if code != 201 {
		t.Fatalf("create: %d %v", code, m)
	}
	r := e.runs(int64(m["id"].(float64)))[0]
	summary := `{"type":"summary","outcome":"done","epochs":1,"best_epoch":0,"best_val_acc":0.5,"test_acc":0.25,` +
		`"mean_epoch_s":1.5,"total_s":3.5,"peak_rss_bytes":0,"peak_cgroup_bytes":0,"prepare_s":0.125,"` + key + `":4097}`
	if err := e.st.Update(ctx, func(tx *store.Tx) error {
		if ok, err := tx.ClaimRun(r.ID); err != nil || !ok {
			return fmt.Errorf("claim: %v %v", ok, err)
		}
		var rec metrics.EpochRecord
		if err := json.Unmarshal([]byte(`{"type":"epoch","epoch":0,"epoch_s":1.5,"val_acc":0.5,"test_acc":0.25,"metrics_version":3}`), &rec); err != nil {
			return err
		}
		if err := tx.InsertEpoch(r.ID, &rec); err != nil {
			return err
		}
		_, err := tx.FinishRun(r.ID, store.RunEnd{Status: store.StatusDone, Summary: json.RawMessage(summary),
			TotalS: 3.5, PeakRSSBytes: 1 << 20})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// the store
	f, ok := fields.FindRun(key)
	if !ok {
		t.Fatalf("fields.FindRun(%q): not declared", key)
	}
	for _, brief := range []bool{false, true} {
		runs, err := e.st.Runs(ctx, store.RunFilter{ExperimentID: r.ExperimentID, Brief: brief})
		if err != nil || len(runs) == 0 || runs[0].ID != r.ID {
			t.Fatalf("runs (brief %v): %v %v", brief, runs, err)
		}
		if v, ok := f.Value(runs[0].Measures()); !ok || v != 4097 {
			t.Errorf("store (brief %v): %s = %v %v, want 4097", brief, key, v, ok)
		}
		if p := runs[0].PeakRSSBytes; p == nil || *p != 1<<20 {
			t.Errorf("store (brief %v): the runner's peak RSS %v, want %d", brief, p, 1<<20)
		}
	}

	// the runs CSV: its column, after the declared ones
	_, body := e.get(fmt.Sprintf("/experiments/%d/export/runs.csv", r.ExperimentID))
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("runs.csv: %d rows, %v:\n%s", len(recs), err, body)
	}
	// registered last: right after the field declared before it
	prev := fields.Runs[len(fields.Runs)-2].Key
	col, idCol := slices.Index(recs[0], key), slices.Index(recs[0], "run_id")
	if col < 0 || col != slices.Index(recs[0], prev)+1 {
		t.Fatalf("runs.csv has no %s column after %s: %v", key, prev, recs[0])
	}
	for _, row := range recs[1:] {
		want := ""
		if row[idCol] == fmt.Sprint(r.ID) {
			want = "4097"
		}
		if row[col] != want {
			t.Errorf("runs.csv run %s: %s %q, want %q", row[idCol], key, row[col], want)
		}
	}

	// the API: a key of the run object, in the run and in the list
	code, m = e.api("GET", fmt.Sprintf("/api/runs/%d", r.ID), "")
	if code != 200 || m[key] != float64(4097) || m["total_s"] != 3.5 || m["prepare_s"] != 0.125 || m["peak_rss_bytes"] != float64(1<<20) {
		t.Errorf("API run: %d %v", code, m)
	}
	code, m = e.api("GET", fmt.Sprintf("/api/experiments/%d/runs", r.ExperimentID), "")
	list, _ := m["runs"].([]any)
	if code != 200 || len(list) == 0 {
		t.Fatalf("API runs: %d %v", code, m)
	}
	for _, x := range list {
		o := x.(map[string]any)
		if o["id"] == float64(r.ID) && o[key] != float64(4097) {
			t.Errorf("API runs: run %v has %s %v", o["id"], key, o[key])
		}
		if v, has := o[key]; o["id"] != float64(r.ID) && (!has || v != nil) {
			t.Errorf("API runs: unfinished run %v has %s %v (present %v), want null", o["id"], key, v, has)
		}
	}

	// the run page: its row
	if _, page := e.get(fmt.Sprintf("/runs/%d", r.ID)); !strings.Contains(page, label) || !strings.Contains(page, "4097") {
		t.Errorf("run page has no %q row with 4097", label)
	}
}
