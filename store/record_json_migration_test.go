package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"outcore/engine/metrics"
	"outcore/migrations"
	"outcore/store"
)

// tenth is 0.1 at run time: tenth + 0.2 is 0.30000000000000004, where
// the constant 0.1 + 0.2 is 0.3.
var tenth = 0.1

// schema12Epochs are epochs as the schema of migration 0012 held them, one
// per row, column by column: a record of metrics version 1 (no I/O split,
// empty JSON columns), one of version 3 with every column set (reals that
// need 17 digits, a host pressure without PSI, an I/O floor), one whose
// floor is still to be filled in (io_requests kept, io_floor_s NULL).
var schema12Epochs = []map[string]any{
	{"epoch": 0, "warmup": 1, "epoch_s": 2.0, "sample_s": 0.5, "extract_s": 0.25, "train_s": 1.0, "stall_s": 0.0,
		"batches": 10, "bytes_needed": int64(1 << 20), "bytes_read": int64(3 << 20), "read_amplification": 3.0,
		"train_loss": 1.5, "train_acc": 0.4, "val_acc": 0.0, "test_acc": 0.0, "eval_s": 0.0, "wall_s": 2.5,
		"stages_json": "{}", "tiers_json": `{"cpu":{"lookups":1000,"hits":400},"device":{"lookups":600,"hits":600}}`,
		"received_at": int64(1700000000123), "metrics_version": 1, "feature_bytes_read": 0, "topology_bytes_read": 0,
		"rows_from_device": 0, "rows_shared_in_flight": 0, "sample_busy_s": 0.0, "sample_wait_s": 0.0,
		"extract_busy_s": 0.0, "extract_wait_s": 0.0, "wall_sample_s": 0.0, "wall_load_s": 0.0, "wall_train_s": 0.0,
		"wall_stall_s": 0.0, "host_pressure_json": nil, "io_floor_s": nil, "io_efficiency": nil, "counters_json": "{}",
		"io_requests_json": "", "io_bytes": 0},
	{"epoch": 1, "warmup": 0, "epoch_s": tenth + 0.2, "sample_s": 1.0 / 3, "extract_s": math.Pi, "train_s": 1e-300, "stall_s": 7.25,
		"batches": 123, "bytes_needed": int64(1) << 52, "bytes_read": int64(1)<<53 - 1, "read_amplification": 1.0000000000000002,
		"train_loss": 0.6931471805599453, "train_acc": 0.8125, "val_acc": 2.0 / 3, "test_acc": 0.7071067811865476, "eval_s": 0.125, "wall_s": 12.3456789,
		"stages_json": `{"inspect_s":0.1,"switch_s":3.3333333333333335}`, "tiers_json": `{"gpu":{"lookups":10,"hits":3}}`,
		"received_at": int64(1700000009999), "metrics_version": 3, "feature_bytes_read": int64(40960), "topology_bytes_read": int64(8192),
		"rows_from_device": int64(77), "rows_shared_in_flight": int64(5), "sample_busy_s": 0.3, "sample_wait_s": 0.7,
		"extract_busy_s": 1.1, "extract_wait_s": 2.2, "wall_sample_s": 0.01, "wall_load_s": 0.02, "wall_train_s": 0.03,
		"wall_stall_s": 0.04, "host_pressure_json": `{"load1":1.25,"others_cpu_pct":3.5,"steal_pct":0,"psi_cpu_some_pct":null,"psi_io_some_pct":null,"psi_memory_some_pct":null}`,
		"io_floor_s": tenth + 0.7, "io_efficiency": 1.0 / 7, "counters_json": `{"io_requests":12,"superbatches":2}`,
		"io_requests_json": "[1,2,0,4]", "io_bytes": int64(99999)},
	{"epoch": 2, "warmup": 0, "epoch_s": 9.75, "sample_s": 0.0, "extract_s": 0.0, "train_s": 9.0, "stall_s": 0.75,
		"batches": 5, "bytes_needed": 100, "bytes_read": 200, "read_amplification": 0.5,
		"train_loss": 0.5, "train_acc": 0.9, "val_acc": 0.85, "test_acc": 0.8, "eval_s": 0.0, "wall_s": 22.0,
		"stages_json": "{}", "tiers_json": "{}", "received_at": int64(1700000019999), "metrics_version": 3,
		"feature_bytes_read": 10, "topology_bytes_read": 20, "rows_from_device": 3, "rows_shared_in_flight": 0,
		"sample_busy_s": 0.0, "sample_wait_s": 0.0, "extract_busy_s": 0.0, "extract_wait_s": 0.0,
		"wall_sample_s": 1.5, "wall_load_s": 2.5, "wall_train_s": 5.0, "wall_stall_s": 0.75,
		"host_pressure_json": `{"load1":0.5,"others_cpu_pct":1,"steal_pct":0.25,"psi_cpu_some_pct":2.5,"psi_io_some_pct":0,"psi_memory_some_pct":0.125}`,
		"io_floor_s":         nil, "io_efficiency": nil, "counters_json": "{}", "io_requests_json": "[0,3]", "io_bytes": int64(4096)},
}

// schema12Columns reads an epoch back as 0012's columns were written
// from it (the insert of the schema before the record JSON).
func schema12Columns(e store.Epoch) map[string]any {
	js := func(v any, empty string) any {
		b, _ := json.Marshal(v)
		if string(b) == "null" {
			return empty
		}
		return string(b)
	}
	var pressure, requests any = nil, ""
	if e.HostPressure != nil {
		pressure = js(e.HostPressure, "")
	}
	if e.IORequests != nil {
		requests = js(e.IORequests, "")
	}
	ptr := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return map[string]any{
		"run_id": e.RunID, "epoch": e.Epoch, "warmup": map[bool]int{false: 0, true: 1}[e.Warmup], "epoch_s": e.EpochS,
		"sample_s": e.SampleS, "extract_s": e.ExtractS, "train_s": e.TrainS, "stall_s": e.StallS, "batches": e.Batches,
		"bytes_needed": e.BytesNeeded, "bytes_read": e.BytesRead, "read_amplification": e.ReadAmplification,
		"train_loss": e.TrainLoss, "train_acc": e.TrainAcc, "val_acc": e.ValAcc, "test_acc": e.TestAcc, "eval_s": e.EvalS,
		"wall_s": e.WallS, "stages_json": js(e.Stages, "{}"), "tiers_json": js(e.Tiers, "{}"), "received_at": e.ReceivedAt.UnixMilli(),
		"metrics_version": e.MetricsVersion, "feature_bytes_read": e.FeatureBytesRead, "topology_bytes_read": e.TopologyBytesRead,
		"rows_from_device": e.RowsFromDevice, "rows_shared_in_flight": e.RowsSharedInFlight, "sample_busy_s": e.SampleBusyS,
		"sample_wait_s": e.SampleWaitS, "extract_busy_s": e.ExtractBusyS, "extract_wait_s": e.ExtractWaitS,
		"wall_sample_s": e.WallSampleS, "wall_load_s": e.WallLoadS, "wall_train_s": e.WallTrainS, "wall_stall_s": e.WallStallS,
		"host_pressure_json": pressure, "io_floor_s": ptr(e.IOFloorS), "io_efficiency": ptr(e.IOEfficiency),
		"counters_json": js(e.Counters, "{}"), "io_requests_json": requests, "io_bytes": e.IOBytes,
	}
}

// same compares a column's value as SQLite returned it with the value
// read back: numbers by value, JSON text by what it decodes to.
func same(col string, old, got any) bool {
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case int:
			return float64(x), true
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
		return 0, false
	}
	if a, ok := num(old); ok {
		b, ok := num(got)
		return ok && a == b && !(col == "bytes_read" && fmt.Sprint(old) != fmt.Sprint(got))
	}
	if s, ok := old.([]byte); ok {
		old = string(s)
	}
	a, aok := old.(string)
	b, bok := got.(string)
	if aok && bok && a != "" && b != "" {
		var x, y any
		return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
	}
	return reflect.DeepEqual(old, got)
}

// TestMigrationMovesEpochColumnsIntoRecords makes a database with
// today's schema before 0013 (migrations 1–12) holding real rows, opens
// it with the store (which applies 0013: each epoch's columns move into
// its record JSON) and compares every column of every row with what the
// store reads back; the floor still to be filled in is found and filled
// as before.
func TestMigrationMovesEpochColumnsIntoRecords(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := store.Path(dir)
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:12] {
		if _, err := db.ExecContext(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
	}
	if _, err := db.ExecContext(ctx, "PRAGMA user_version = 12"); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	if _, err := db.ExecContext(ctx, `INSERT INTO experiments(id, name, dataset, grid_json, base_config_json, created_at)
		VALUES (1, 'old', 'tiny', '{}', '{}', ?)`, now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO runs(id, experiment_id, seq, queue_pos, status, system, dataset, config_json, queued_at, host_json)
		VALUES (7, 1, 0, 1, 'done', 'ginex', 'tiny', '{}', ?, '{"hostname":"h","storage":"s"}')`, now); err != nil {
		t.Fatal(err)
	}
	for _, row := range schema12Epochs {
		cols, marks, args := "run_id", "?", []any{7}
		for c, v := range row {
			cols, marks, args = cols+", "+c, marks+", ?", append(args, v)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO epochs(`+cols+`) VALUES (`+marks+`)`, args...); err != nil {
			t.Fatalf("epoch %v: %v", row["epoch"], err)
		}
	}
	// what 0012's table holds, as SQLite returns it
	rows, err := db.QueryContext(ctx, `SELECT * FROM epochs ORDER BY epoch`)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := rows.Columns()
	var before []map[string]any
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for i, n := range names {
			m[n] = vals[i]
		}
		before = append(before, m)
	}
	rows.Close()
	db.Close()
	if len(names) != 40 || len(before) != len(schema12Epochs) {
		t.Fatalf("schema 12 has %d epoch columns and %d rows, want 40 and %d", len(names), len(before), len(schema12Epochs))
	}

	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	eps, err := s.Epochs(ctx, 7)
	if err != nil || len(eps) != len(before) {
		t.Fatalf("epochs after the migration: %d, %v", len(eps), err)
	}
	for i, e := range eps {
		got := schema12Columns(e)
		for _, col := range names {
			if !same(col, before[i][col], got[col]) {
				t.Errorf("epoch %d column %s: %#v before the migration, %#v after", i, col, before[i][col], got[col])
			}
		}
	}
	// the epoch whose floor is to be filled in is still found, and filled
	fl, err := s.FloorlessEpochs(ctx)
	if err != nil || len(fl) != 1 || fl[0].Epoch.Epoch != 2 || fl[0].IOBytes != 4096 || !reflect.DeepEqual(fl[0].IORequests, []int64{0, 3}) ||
		fl[0].EpochS != 9.75 || fl[0].Host.Hostname != "h" {
		t.Fatalf("floorless epochs after the migration: %+v, %v", fl, err)
	}
	eff := tenth + 0.2
	if err := s.Update(ctx, func(tx *store.Tx) error {
		prof, slow := 0.1, 3.0
		ok, err := tx.SetIOFloor(7, 2, 1.0/3, &eff, &metrics.DiskService{Reads: 3, ReadBytes: 12288, ReadMs: 0.3, Depth: 1, BusyS: 0.001, ProfileMs: &prof, Slowdown: &slow})
		if err == nil && !ok {
			err = fmt.Errorf("SetIOFloor changed nothing")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	eps, _ = s.Epochs(ctx, 7)
	if e := eps[2]; e.IOFloorS == nil || *e.IOFloorS != 1.0/3 || e.IOEfficiency == nil || *e.IOEfficiency != eff || e.Type != metrics.TypeEpoch {
		t.Fatalf("filled floor read back as %v %v", e.IOFloorS, e.IOEfficiency)
	}
	if d := eps[2].DiskService; d == nil || d.Reads != 3 || d.Slowdown == nil || *d.Slowdown != 3 {
		t.Fatalf("disk service judged with the filled floor read back as %+v", d)
	}
	if fl, _ := s.FloorlessEpochs(ctx); len(fl) != 0 {
		t.Fatalf("floorless epochs after the fill: %+v", fl)
	}
}
