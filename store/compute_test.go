package store_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
)

// A run that trained no model (compute none or model:PROFILE) exports its
// losses and accuracies as n/a, never as 0; its compute mode is a column
// of every export; io_floor_s and io_efficiency are empty when not
// measured and the numbers when they were; the run's testbed (DESIGN
// §13) is a column too, "this-host" for a config that names none.
func TestExportComputeAndIOFloor(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e := store.Experiment{Name: "e", Dataset: "tiny", Grid: json.RawMessage(`{"dataset":"tiny"}`)}
	var ids []int64
	floor, eff := 1.5, 0.25
	err := s.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		for i, c := range []string{"", "model:h100-roofline"} {
			cfg := `{}`
			if c != "" {
				cfg = `{"testbed":"gids-vldb24"}`
			}
			r := store.Run{ExperimentID: e.ID, Seq: i, System: "ginex", Dataset: "tiny", Model: "sage", Compute: c, Config: json.RawMessage(cfg)}
			if err := tx.InsertRun(&r); err != nil {
				return err
			}
			if _, err := tx.ClaimRun(r.ID); err != nil {
				return err
			}
			rec := metrics.EpochRecord{Epoch: 0, EpochS: 6, TrainLoss: 0.7, TrainAcc: 0.5, ValAcc: 0.4, TestAcc: 0.3}
			if c != "" {
				prof, slow := 0.1, 4.0
				rec = metrics.EpochRecord{Epoch: 0, EpochS: 6, IOFloorS: &floor, IOEfficiency: &eff, Compute: c,
					DiskService: &metrics.DiskService{Reads: 9000, ReadBytes: 9000 * 4096, ReadMs: 0.4, Depth: 12.5, BusyS: 2, ProfileMs: &prof, Slowdown: &slow}}
			}
			if err := tx.InsertEpoch(r.ID, &rec); err != nil {
				return err
			}
			ids = append(ids, r.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(what string) (map[string]int, [][]string) {
		var buf bytes.Buffer
		if err := s.ExportCSV(ctx, &buf, e.ID, what); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		return col, recs[1:]
	}
	col, rows := read(store.ExportEpochs)
	cpu, model := rows[0], rows[1]
	if cpu[col["compute"]] != "cpu" || model[col["compute"]] != "model:h100-roofline" {
		t.Errorf("compute cells %q %q", cpu[col["compute"]], model[col["compute"]])
	}
	for _, k := range []string{"train_loss", "train_acc", "val_acc", "test_acc"} {
		if model[col[k]] != "n/a" || cpu[col[k]] == "n/a" || cpu[col[k]] == "" {
			t.Errorf("%s: cpu %q, model %q (want a number, n/a)", k, cpu[col[k]], model[col[k]])
		}
	}
	if cpu[col["io_floor_s"]] != "" || model[col["io_floor_s"]] != "1.5" || model[col["io_efficiency"]] != "0.25" {
		t.Errorf("io floor cells: cpu %q, model %q %q", cpu[col["io_floor_s"]], model[col["io_floor_s"]], model[col["io_efficiency"]])
	}
	// the disk service through the store: its columns from the record,
	// empty for an epoch that measured none
	for k, want := range map[string]string{"disk_reads": "9000", "disk_read_bytes": "36864000", "disk_depth": "12.5", "disk_slowdown": "4", "disk_lost_s": "1.5"} {
		if model[col[k]] != want || cpu[col[k]] != "" {
			t.Errorf("%s: model %q (want %q), cpu %q (want empty)", k, model[col[k]], want, cpu[col[k]])
		}
	}
	col, rows = read(store.ExportRuns)
	if rows[0][col["testbed"]] != "this-host" || rows[1][col["testbed"]] != "gids-vldb24" {
		t.Errorf("runs' testbed cells %q %q, want this-host, gids-vldb24", rows[0][col["testbed"]], rows[1][col["testbed"]])
	}
	for _, brief := range []bool{false, true} { // the run's testbed, from a full and a brief read
		runs, err := s.Runs(ctx, store.RunFilter{ExperimentID: e.ID, Brief: brief})
		if err != nil || len(runs) != 2 || runs[0].Testbed() != "this-host" || runs[1].Testbed() != "gids-vldb24" {
			t.Errorf("brief %v: runs' testbeds %v", brief, runs)
		}
	}
	if rows[1][col["best_val_acc"]] != "n/a" || rows[1][col["compute"]] != "model:h100-roofline" {
		t.Errorf("runs row %v", rows[1])
	}
	ep, err := s.Epochs(ctx, ids[1])
	if err != nil || len(ep) != 1 || ep[0].IOFloorS == nil || *ep[0].IOFloorS != 1.5 {
		t.Fatalf("stored epoch %+v, %v", ep, err)
	}
	r, err := s.Run(ctx, ids[1])
	if err != nil || r.Compute != "model:h100-roofline" || r.Trains() {
		t.Fatalf("run %+v, %v", r.Compute, err)
	}
}

// TestTestbedAxisIsACell: a grid that varies the testbed keeps each run's
// testbed in its cell (the experiment page's and compare tables'
// grouping; DESIGN §13).
func TestTestbedAxisIsACell(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e := store.Experiment{Name: "tb", Dataset: "tiny", Grid: json.RawMessage(`{"dataset":"tiny","axes":{"system":["ginex"],"testbed":["this-host","ginex-vldb22"]}}`)}
	err := s.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		for i, tb := range []string{"this-host", "ginex-vldb22"} {
			r := store.Run{ExperimentID: e.ID, Seq: i, System: "ginex", Dataset: "tiny", Model: "sage", Config: json.RawMessage(`{"testbed":"` + tb + `"}`)}
			if err := tx.InsertRun(&r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %v %v", runs, err)
	}
	for i, want := range []string{`{"testbed":"this-host"}`, `{"testbed":"ginex-vldb22"}`} {
		if string(runs[i].Cell) != want {
			t.Errorf("run %d's cell %s, want %s", i, runs[i].Cell, want)
		}
	}
}
