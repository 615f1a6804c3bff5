package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"outcore/engine/metrics/fields"
	"outcore/migrations"
	"outcore/store"
)

// schema13Runs are runs as the schema of migration 0013 held them, their
// measurement columns and summary: a run that trained, with the child's
// summary (keys beside the measurements that must stay, and the child's
// own mean and accuracy, which the store's columns replace); a run that
// failed without a summary (the runner's time and peaks only); a run that
// trained no model (no accuracies, the child's 0 among them removed); a
// queued run (nothing); reals that need 17 digits.
var schema13Runs = []map[string]any{
	{"id": 1, "compute": "cpu", "status": "done", "mean_epoch_s": tenth + 0.2, "best_val_acc": 2.0 / 3, "test_acc": 0.7071067811865476,
		"total_s": math.Pi, "peak_rss_bytes": int64(1)<<53 - 1, "peak_cgroup_bytes": int64(3) << 30,
		"summary_json": `{"type":"summary","outcome":"done","epochs":3,"best_epoch":1,"best_val_acc":0.5,"test_acc":0.5,"mean_epoch_s":9,` +
			`"total_s":3.14,"peak_rss_bytes":5,"peak_cgroup_bytes":6,"prepare_s":17.25,"prepare_stages":{"pack_s":1.5},` +
			`"deviations":["a","b"],"memory":{"host_budget_bytes":1024,"device_budget_bytes":0,"device_tier_bytes":0,"model_step_bytes":0}}`},
	{"id": 2, "compute": "cpu", "status": "failed", "mean_epoch_s": 1e-300, "best_val_acc": 0.0, "test_acc": 0.0,
		"total_s": 12.3456789, "peak_rss_bytes": int64(4096), "peak_cgroup_bytes": nil, "summary_json": nil},
	{"id": 3, "compute": "none", "status": "done", "mean_epoch_s": 2.5, "best_val_acc": nil, "test_acc": nil,
		"total_s": 7.0, "peak_rss_bytes": nil, "peak_cgroup_bytes": int64(100),
		"summary_json": `{"type":"summary","outcome":"done","epochs":1,"best_epoch":0,"best_val_acc":0,"test_acc":0,"mean_epoch_s":2.5,"total_s":7,"peak_rss_bytes":0,"peak_cgroup_bytes":0,"prepare_s":0}`},
	{"id": 4, "compute": "cpu", "status": "queued", "mean_epoch_s": nil, "best_val_acc": nil, "test_acc": nil,
		"total_s": nil, "peak_rss_bytes": nil, "peak_cgroup_bytes": nil, "summary_json": nil},
}

// runMeasureCols are 0013's measurement columns of runs.
var runMeasureCols = []string{"mean_epoch_s", "best_val_acc", "test_acc", "total_s", "peak_rss_bytes", "peak_cgroup_bytes"}

// TestMigrationMovesRunColumnsIntoSummary makes a database with the schema
// before 0014 (migrations 1–13) holding real runs, opens it with the store
// (which applies 0014: the measurement columns move into each run's
// summary; total_s and peak_rss_bytes are dropped) and compares every
// measurement column of every run with what the store reads back, by the
// declaration (fields.Runs) and by store.Run's copies; the child's other
// summary keys stay as they were.
func TestMigrationMovesRunColumnsIntoSummary(t *testing.T) {
	ctx := context.Background()
	path := store.Path(t.TempDir())
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:13] {
		if _, err := db.ExecContext(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
	}
	if _, err := db.ExecContext(ctx, "PRAGMA user_version = 13"); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	if _, err := db.ExecContext(ctx, `INSERT INTO experiments(id, name, dataset, grid_json, base_config_json, created_at)
		VALUES (1, 'old', 'tiny', '{}', '{}', ?)`, now); err != nil {
		t.Fatal(err)
	}
	for i, row := range schema13Runs {
		cols, marks := "experiment_id, seq, queue_pos, system, dataset, config_json, queued_at", "1, ?, ?, 'ginex', 'tiny', '{}', ?"
		args := []any{i, i + 1, now}
		for c, v := range row {
			cols, marks, args = cols+", "+c, marks+", ?", append(args, v)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO runs(`+cols+`) VALUES (`+marks+`)`, args...); err != nil {
			t.Fatalf("run %v: %v", row["id"], err)
		}
	}
	// what 0013's table holds, as SQLite returns it
	before := map[int64]map[string]any{}
	rows, err := db.QueryContext(ctx, `SELECT id, mean_epoch_s, best_val_acc, test_acc, total_s, peak_rss_bytes, peak_cgroup_bytes, summary_json FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		vals := make([]any, len(runMeasureCols)+1)
		ptrs := []any{&id}
		for i := range vals {
			ptrs = append(ptrs, &vals[i])
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for i, c := range append(runMeasureCols, "summary_json") {
			m[c] = vals[i]
		}
		before[id] = m
	}
	rows.Close()
	db.Close()
	if len(before) != len(schema13Runs) {
		t.Fatalf("schema 13 holds %d runs, want %d", len(before), len(schema13Runs))
	}

	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx, store.RunFilter{})
	if err != nil || len(runs) != len(before) {
		t.Fatalf("runs after the migration: %d, %v", len(runs), err)
	}
	brief, err := s.Runs(ctx, store.RunFilter{Brief: true})
	if err != nil || len(brief) != len(runs) {
		t.Fatalf("brief runs after the migration: %d, %v", len(brief), err)
	}
	for i, r := range runs {
		old := before[r.ID]
		// by the declaration, from the summary (a brief read's too)
		for _, col := range runMeasureCols {
			f, ok := fields.FindRun(col)
			if !ok {
				t.Fatalf("%s is not declared in fields.Runs", col)
			}
			for _, rr := range []store.Run{r, brief[i]} {
				got, measured := f.Value(rr.Measures())
				if want := old[col]; (want == nil) == measured || (want != nil && !same(col, want, got)) {
					t.Errorf("run %d %s: %#v before the migration, %v (measured %v) after", r.ID, col, want, got, measured)
				}
			}
		}
		// by store.Run's copies (columns kept, and read from the summary)
		copies := map[string]any{"mean_epoch_s": r.MeanEpochS, "best_val_acc": r.BestValAcc, "test_acc": r.TestAcc,
			"total_s": r.TotalS, "peak_rss_bytes": r.PeakRSSBytes, "peak_cgroup_bytes": r.PeakCgroupBytes}
		for col, p := range copies {
			v := reflect.ValueOf(p)
			if v.IsNil() != (old[col] == nil) || (!v.IsNil() && !same(col, old[col], v.Elem().Interface())) {
				t.Errorf("run %d Run.%s: %#v before the migration, %v after", r.ID, col, old[col], p)
			}
		}
		// the summary's other keys are the child's
		if old["summary_json"] == nil {
			if r.ID == 4 && r.Summary != nil {
				t.Errorf("run 4 (queued) has a summary after the migration: %s", r.Summary)
			}
			continue
		}
		var was, is map[string]any
		json.Unmarshal([]byte(old["summary_json"].(string)), &was)
		if err := json.Unmarshal(r.Summary, &is); err != nil {
			t.Fatalf("run %d summary %s: %v", r.ID, r.Summary, err)
		}
		for _, col := range runMeasureCols {
			delete(was, col)
			delete(is, col)
		}
		if !reflect.DeepEqual(was, is) {
			t.Errorf("run %d summary's other keys:\n was %v\n  is %v", r.ID, was, is)
		}
	}
	// the kept columns are there for SQL (a condition on one), the others gone
	sel, err := s.Runs(ctx, store.RunFilter{Conds: []store.Cond{{Field: "best_val", Op: ">", Value: 0.5}}})
	if err != nil || len(sel) != 1 || sel[0].ID != 1 {
		t.Errorf("runs with best_val > 0.5: %v, %v", sel, err)
	}
	if err := s.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.RetryRun(2)
		return err
	}); err != nil {
		t.Fatalf("retry a migrated run: %v", err)
	}
}
