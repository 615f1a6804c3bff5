package store_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
)

func open(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.OpenDataDir(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// seed creates an experiment with n runs of the given systems.
func seed(t *testing.T, s *store.Store, systems ...string) (store.Experiment, []store.Run) {
	t.Helper()
	ctx := context.Background()
	e := store.Experiment{Name: "e", Dataset: "tiny", Grid: json.RawMessage(`{"dataset":"tiny"}`)}
	var runs []store.Run
	err := s.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		for i, sys := range systems {
			r := store.Run{ExperimentID: e.ID, Seq: i, System: sys, Dataset: "tiny", Model: "sage",
				MemLimitBytes: 256 << 20, Config: json.RawMessage(`{"system":"` + sys + `"}`)}
			if err := tx.InsertRun(&r); err != nil {
				return err
			}
			runs = append(runs, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, runs
}

func finish(t *testing.T, s *store.Store, id int64, status string, epochS ...float64) {
	t.Helper()
	ctx := context.Background()
	err := s.Update(ctx, func(tx *store.Tx) error {
		if ok, err := tx.ClaimRun(id); err != nil || !ok {
			return errors.Join(err, errors.New("claim failed"))
		}
		for i, es := range epochS {
			if err := tx.InsertEpoch(id, &metrics.EpochRecord{Epoch: i, Warmup: i == 0 && len(epochS) > 1, EpochS: es,
				ValAcc: float64(i) / 10, TestAcc: float64(i) / 20,
				Stages: map[string]float64{"inspect_s": 0.5}, Tiers: map[string]metrics.TierCount{"cpu": {Lookups: 10, Hits: 4}, metrics.TierDevice: {Lookups: 6, Hits: 6}},
				Counters: map[string]int64{"storage_MBps": int64(40 + i)}}); err != nil {
				return err
			}
		}
		_, err := tx.FinishRun(id, store.RunEnd{Status: status, PeakCgroupBytes: 100})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestExperimentCountsAndQueue(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e, runs := seed(t, s, "pyg+", "ginex", "gnndrive")
	got, err := s.Experiment(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Counts.Total != 3 || got.Counts.Queued != 3 || got.Counts.State() != "queued" {
		t.Fatalf("counts %+v", got.Counts)
	}
	// queue order is insertion order
	var next store.Run
	s.Update(ctx, func(tx *store.Tx) error {
		var ok bool
		var err error
		next, ok, err = tx.NextQueued()
		if !ok || err != nil {
			t.Fatalf("NextQueued: %v %v", ok, err)
		}
		return nil
	})
	if next.ID != runs[0].ID {
		t.Fatalf("next queued %d, want %d", next.ID, runs[0].ID)
	}
	finish(t, s, runs[0].ID, store.StatusDone, 3, 1, 2)
	finish(t, s, runs[1].ID, store.StatusOOM)
	list, err := s.ListExperiments(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list %v %v", list, err)
	}
	c := list[0].Counts
	if c.Done != 1 || c.OOM != 1 || c.Queued != 1 || c.Finished() != 2 {
		t.Fatalf("counts %+v", c)
	}
	r, err := s.Run(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	// warm-up epoch 0 (3 s) excluded from the mean: (1+2)/2
	if r.MeanEpochS == nil || *r.MeanEpochS != 1.5 || r.EpochsDone != 3 || *r.BestValAcc != 0.2 || *r.TestAcc != 0.1 {
		t.Fatalf("aggregates: mean %v epochs %d best %v test %v", r.MeanEpochS, r.EpochsDone, r.BestValAcc, r.TestAcc)
	}
	eps, err := s.Epochs(ctx, r.ID)
	if err != nil || len(eps) != 3 || eps[1].Stages["inspect_s"] != 0.5 || eps[1].Tiers["cpu"].Hits != 4 || !eps[0].Warmup {
		t.Fatalf("epochs %+v %v", eps, err)
	}
}

func TestRetryAndConflicts(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e, runs := seed(t, s, "ginex")
	err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.RetryRun(runs[0].ID); return err })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("retry of a queued run: %v, want ErrConflict", err)
	}
	finish(t, s, runs[0].ID, store.StatusFailed)
	var nr store.Run
	if err := s.Update(ctx, func(tx *store.Tx) (err error) { nr, err = tx.RetryRun(runs[0].ID); return }); err != nil {
		t.Fatal(err)
	}
	if nr.Attempt != 2 || nr.RetryOf != runs[0].ID || nr.Status != store.StatusQueued || nr.Seq != runs[0].Seq {
		t.Fatalf("retry %+v", nr)
	}
	got, _ := s.Experiment(ctx, e.ID)
	if got.Counts.Total != 1 || got.Counts.Queued != 1 || got.Counts.Failed != 0 {
		t.Fatalf("superseded run still counted: %+v", got.Counts)
	}
	err = s.Update(ctx, func(tx *store.Tx) error { _, err := tx.RetryRun(runs[0].ID); return err })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second retry of the same run: %v, want ErrConflict", err)
	}
	all, _ := s.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
	cur, _ := s.Runs(ctx, store.RunFilter{ExperimentID: e.ID, Current: true})
	if len(all) != 2 || len(cur) != 1 || cur[0].ID != nr.ID {
		t.Fatalf("runs all=%d current=%d", len(all), len(cur))
	}
}

func TestMarkInterruptedAndCancel(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	_, runs := seed(t, s, "a", "b", "c")
	s.Update(ctx, func(tx *store.Tx) error {
		tx.ClaimRun(runs[0].ID)
		return tx.InsertEpoch(runs[0].ID, &metrics.EpochRecord{Epoch: 0, EpochS: 2})
	})
	if err := s.Update(ctx, func(tx *store.Tx) error {
		if ok, _ := tx.CancelQueued(runs[0].ID); ok {
			t.Error("CancelQueued cancelled a running run")
		}
		if ok, _ := tx.RequestCancel(runs[0].ID); !ok {
			t.Error("RequestCancel refused a running run")
		}
		if ok, _ := tx.CancelQueued(runs[1].ID); !ok {
			t.Error("CancelQueued refused a queued run")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ids, _ := s.CancelRequested(ctx)
	if len(ids) != 1 || ids[0] != runs[0].ID {
		t.Fatalf("cancel requested %v", ids)
	}
	var marked []store.Run
	s.Update(ctx, func(tx *store.Tx) (err error) { marked, err = tx.MarkInterrupted(); return })
	if len(marked) != 1 || marked[0].ID != runs[0].ID {
		t.Fatalf("marked %v", marked)
	}
	r, _ := s.Run(ctx, runs[0].ID)
	if r.Status != store.StatusInterrupted || r.EpochsDone != 1 || r.EndedAt.IsZero() {
		t.Fatalf("interrupted run %+v", r)
	}
	r1, _ := s.Run(ctx, runs[1].ID)
	if r1.Status != store.StatusCancelled {
		t.Fatalf("cancelled run status %s", r1.Status)
	}
	// A run cancelled before it started did not finish: it is dropped,
	// not counted among the finished ("4/4 finished" for four of them).
	xs, _ := s.ListExperiments(ctx)
	if c := xs[0].Counts; c.Cancelled != 1 || c.CancelledUnstarted != 1 || c.Interrupted != 1 || c.Finished() != 1 || c.Dropped() != 1 {
		t.Fatalf("counts %+v finished %d", c, c.Finished())
	}
}

// TestRefusedCellsStored: the cells skipped at creation come back with
// the experiment, reasons included, and are counted apart from runs.
func TestRefusedCellsStored(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e := store.Experiment{Name: "r", Dataset: "tiny", Refused: []store.RefusedCell{{Seq: 3, System: "gids", Dataset: "tiny", MemLimit: "50%",
		MemLimitBytes: 1 << 20, NeedBytes: 2 << 20, Reason: "1MiB is below the 2MiB that gids needs to start on tiny"}}}
	if err := s.Update(ctx, func(tx *store.Tx) error { return tx.InsertExperiment(&e) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.Experiment(ctx, e.ID)
	if err != nil || len(got.Refused) != 1 || got.Refused[0] != e.Refused[0] || got.Counts.Refused != 1 || got.Counts.Total != 0 {
		t.Fatalf("experiment %+v %v", got, err)
	}
}

func TestDeleteExperiment(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e, runs := seed(t, s, "a", "b")
	e2, _ := seed(t, s, "c")
	finish(t, s, runs[0].ID, store.StatusDone, 1, 2)
	s.Update(ctx, func(tx *store.Tx) error {
		tx.AppendEvent(&store.Event{ExperimentID: e.ID, Kind: store.EventExperiment, Msg: "created"})
		tx.AppendEvent(&store.Event{ExperimentID: e.ID, RunID: runs[0].ID, Kind: store.EventLog, Msg: "hi"})
		return tx.InsertSamples(runs[0].ID, []metrics.SampleRecord{{T: 1}, {T: 2}})
	})
	s.Update(ctx, func(tx *store.Tx) error { tx.ClaimRun(runs[1].ID); return nil })
	err := s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteExperiment(e.ID) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("delete with a running run: %v, want ErrConflict", err)
	}
	s.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.FinishRun(runs[1].ID, store.RunEnd{Status: store.StatusCancelled})
		return err
	})
	if err := s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteExperiment(e.ID) }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Experiment(ctx, e.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted experiment: %v", err)
	}
	if eps, _ := s.Epochs(ctx, runs[0].ID); len(eps) != 0 {
		t.Fatalf("epochs survived: %d", len(eps))
	}
	if smp, _ := s.Samples(ctx, runs[0].ID, 0, 0, 0); len(smp) != 0 {
		t.Fatalf("samples survived: %d", len(smp))
	}
	if evs, _ := s.EventsSince(ctx, 0, 0); len(evs) != 0 {
		t.Fatalf("events survived: %v", evs)
	}
	if _, err := s.Experiment(ctx, e2.ID); err != nil {
		t.Fatalf("other experiment: %v", err)
	}
	err = s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteExperiment(e.ID) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestEventsMonotonicAndPrune(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e, runs := seed(t, s, "a")
	var ids []int64
	s.Update(ctx, func(tx *store.Tx) error {
		for _, k := range []string{store.EventStatus, store.EventSample, store.EventProgress, store.EventEpoch} {
			ev := store.Event{ExperimentID: e.ID, RunID: runs[0].ID, Kind: k, Data: json.RawMessage(`{"k":1}`)}
			if err := tx.AppendEvent(&ev); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, ev.ID)
		}
		return nil
	})
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ids not increasing: %v", ids)
		}
	}
	evs, _ := s.EventsSince(ctx, ids[0], 0)
	if len(evs) != 3 || evs[0].ID != ids[1] || string(evs[0].Data) != `{"k":1}` {
		t.Fatalf("since: %+v", evs)
	}
	s.Update(ctx, func(tx *store.Tx) error { return tx.PruneTransient(runs[0].ID) })
	evs, _ = s.EventsSince(ctx, 0, 0)
	if len(evs) != 2 || evs[0].Kind != store.EventStatus || evs[1].Kind != store.EventEpoch {
		t.Fatalf("after prune: %+v", evs)
	}
	// ids are never reused after a delete
	var again store.Event
	s.Update(ctx, func(tx *store.Tx) error {
		again = store.Event{ExperimentID: e.ID, Kind: store.EventLog}
		return tx.AppendEvent(&again)
	})
	if again.ID <= ids[3] {
		t.Fatalf("id %d reused (last %d)", again.ID, ids[3])
	}
	if last, _ := s.LastEventID(ctx); last != again.ID {
		t.Fatalf("LastEventID %d, want %d", last, again.ID)
	}
}

func TestCompare(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e, runs := seed(t, s, "ginex", "ginex", "pyg+", "pyg+")
	finish(t, s, runs[0].ID, store.StatusDone, 2)
	finish(t, s, runs[1].ID, store.StatusDone, 4)
	finish(t, s, runs[2].ID, store.StatusOOM)
	cells, err := s.Compare(ctx, e.ID)
	if err != nil || len(cells) != 2 {
		t.Fatalf("cells %+v %v", cells, err)
	}
	g := cells[0]
	if g.System != "ginex" || g.Runs != 2 || g.Done != 2 || *g.MeanEpochS != 3 || *g.MinEpochS != 2 || *g.MaxEpochS != 4 {
		t.Fatalf("ginex cell %+v", g)
	}
	if d := *g.StdEpochS - 1.4142135623730951; d > 1e-9 || d < -1e-9 {
		t.Fatalf("std %v", *g.StdEpochS)
	}
	p := cells[1]
	if p.System != "pyg+" || p.OOM != 1 || p.Other != 1 || p.MeanEpochS != nil {
		t.Fatalf("pyg+ cell %+v", p)
	}
}

// TestCompareByCell: runs of one variant and limit on an ids axis's two
// twins (their dataset and their configuration's "ids" differ) are two
// cells, not one mixing both numberings.
func TestCompareByCell(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e := store.Experiment{Name: "e", Dataset: "tiny", Grid: json.RawMessage(`{"dataset":"tiny","system":"ginex","axes":{"ids":["scattered","local"],"repeat":2}}`)}
	var runs []store.Run
	err := s.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		for i := range 4 {
			ids := []string{"scattered", "local"}[i%2]
			r := store.Run{ExperimentID: e.ID, Seq: i, System: "ginex", Dataset: "tiny-ids-" + ids, Model: "sage", Repeat: i / 2,
				MemLimitBytes: 256 << 20, Config: json.RawMessage(`{"system":"ginex","ids":"` + ids + `"}`)}
			if err := tx.InsertRun(&r); err != nil {
				return err
			}
			runs = append(runs, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		finish(t, s, r.ID, store.StatusDone, float64(1+i%2*10))
	}
	cells, err := s.Compare(ctx, e.ID)
	if err != nil || len(cells) != 2 {
		t.Fatalf("cells %+v %v", cells, err)
	}
	for i, want := range []struct {
		dataset, cell string
		mean          float64
	}{{"tiny-ids-local", `{"ids":"local"}`, 11}, {"tiny-ids-scattered", `{"ids":"scattered"}`, 1}} {
		c := cells[i]
		if c.Dataset != want.dataset || c.Cell != want.cell || c.Runs != 2 || c.MeanEpochS == nil || *c.MeanEpochS != want.mean {
			t.Errorf("cell %d: %+v, want %s %s with mean %g", i, c, want.dataset, want.cell, want.mean)
		}
	}
}

func TestExportCSV(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e, runs := seed(t, s, "=cmd|calc", "ginex")
	finish(t, s, runs[0].ID, store.StatusDone, 1, 2)
	s.Update(ctx, func(tx *store.Tx) error {
		g := 50.0
		return tx.InsertSamples(runs[0].ID, []metrics.SampleRecord{{T: 0, CPUPercent: -1.5}, {T: 1, CPUPercent: 100, GPUUtil: &g}})
	})
	for _, tc := range []struct {
		what string
		rows int
		cols []string
	}{
		{store.ExportRuns, 2, []string{"run_id", "system", "mem_limit_bytes", "status", "mean_epoch_s"}},
		{store.ExportEpochs, 2, []string{"run_id", "epoch", "epoch_s", "stage_inspect_s", "tier_cpu_hits", "tier_ssd_lookups", "tier_ssd_hits", "counter_storage_MBps"}},
		{store.ExportSamples, 2, []string{"run_id", "t", "cpu_pct", "gpu_util_pct"}},
	} {
		var buf bytes.Buffer
		if err := s.ExportCSV(ctx, &buf, e.ID, tc.what); err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if len(recs) != tc.rows+1 {
			t.Fatalf("%s: %d lines, want %d", tc.what, len(recs), tc.rows+1)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, c := range tc.cols {
			if _, ok := col[c]; !ok {
				t.Fatalf("%s: no column %s in %v", tc.what, c, recs[0])
			}
		}
		if got := recs[1][col["system"]]; got != "'=cmd|calc" {
			t.Errorf("%s: formula not escaped: %q", tc.what, got)
		}
		switch tc.what {
		case store.ExportSamples:
			if recs[1][col["cpu_pct"]] != "-1.5" || recs[1][col["gpu_util_pct"]] != "" || recs[2][col["gpu_util_pct"]] != "50" {
				t.Errorf("samples rows %v", recs[1:])
			}
		case store.ExportRuns:
			// the columns as they were before the run measurements derived
			// from engine/metrics/fields.Runs (migration 0014): a field
			// added there comes after peak_cgroup_bytes, none moves (testbed,
			// DESIGN §13, came last; the disk space of DiskGNN's Fig. 12,
			// feature_disk_bytes and feature_disk_blowup, after the peaks)
			before := strings.Fields(`run_id system dataset model mem_limit_bytes feature_dim batch_size fanout compute
				repeat attempt status experiment_id seq superseded retry_of limit_enforced cgroup_limit_bytes limit_note
				cache_dropped io_backend outcore_version go_version exit_code signal error epochs_done mean_epoch_s
				best_val_acc test_acc total_s prepare_s peak_rss_bytes peak_cgroup_bytes feature_disk_bytes feature_disk_blowup
				queued_at started_at ended_at executor job_id node host_json config_json cell_json testbed`)
			if !slices.Equal(recs[0], before) {
				t.Errorf("runs.csv columns changed:\n got %v\nwant %v", recs[0], before)
			}
			// the finished run's measurements (its summary: the epochs'
			// aggregates and the runner's peaks), the queued run's empty
			want := map[string][2]string{"epochs_done": {"2", "0"}, "mean_epoch_s": {"2", ""}, "best_val_acc": {"0.1", ""},
				"test_acc": {"0.05", ""}, "total_s": {"0", ""}, "prepare_s": {"", ""}, "peak_rss_bytes": {"", ""}, "peak_cgroup_bytes": {"100", ""}}
			for k, w := range want {
				if g := [2]string{recs[1][col[k]], recs[2][col[k]]}; g != w {
					t.Errorf("runs.csv %s: %q, want %q", k, g, w)
				}
			}
		case store.ExportEpochs:
			if recs[2][col["stage_inspect_s"]] != "0.5" || recs[2][col["tier_cpu_hits"]] != "4" || recs[2][col["counter_storage_MBps"]] != "41" {
				t.Errorf("epoch row %v", recs[2])
			}
			// the measurement columns as they were before they derived
			// from engine/metrics/fields (migration 0013): a field added
			// there comes after them, none moves
			before := strings.Fields(`epoch warmup metrics_version epoch_s sample_s extract_s train_s stall_s batches
				bytes_needed bytes_read feature_bytes_read topology_bytes_read rows_from_device
				rows_shared_in_flight read_amplification bytes_read_per_byte_needed
				sample_busy_s sample_wait_s extract_busy_s extract_wait_s
				wall_sample_s wall_load_s wall_train_s wall_stall_s
				host_load1 host_others_cpu_pct host_steal_pct psi_cpu_pct psi_io_pct psi_memory_pct
				train_loss train_acc val_acc test_acc eval_s wall_s io_floor_s io_efficiency`)
			if at := col["epoch"]; at+len(before) > len(recs[0]) || !slices.Equal(recs[0][at:at+len(before)], before) {
				t.Errorf("epochs.csv measurement columns changed:\n got %v\nwant %v", recs[0][at:], before)
			}
		}
	}
	// the counters come back from the store as they went in
	if eps, err := s.Epochs(ctx, runs[0].ID); err != nil || len(eps) != 2 || eps[1].Counters["storage_MBps"] != 41 {
		t.Fatalf("epochs %+v %v", eps, err)
	}
	var buf bytes.Buffer
	if err := s.ExportCSV(ctx, &buf, e.ID, "bogus"); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("bad kind: %v", err)
	}
	if err := s.ExportCSV(ctx, &buf, 999, store.ExportRuns); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing experiment: %v", err)
	}
}

// TestExportRunsPrepare: the runs table carries the summary's prepare_s
// (the offline phases before the first epoch, apart from mean_epoch_s),
// empty for a run whose summary has none.
func TestExportRunsPrepare(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e, runs := seed(t, s, "diskgnn", "pyg+")
	finish(t, s, runs[1].ID, store.StatusDone, 3)
	if err := s.Update(ctx, func(tx *store.Tx) error {
		if ok, err := tx.ClaimRun(runs[0].ID); err != nil || !ok {
			return errors.Join(err, errors.New("claim failed"))
		}
		_, err := tx.FinishRun(runs[0].ID, store.RunEnd{Status: store.StatusDone, Summary: []byte(`{"prepare_s": 17.25, "memory": {}}`)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.ExportCSV(ctx, &buf, e.ID, store.ExportRuns); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col, sys := slices.Index(recs[0], "prepare_s"), slices.Index(recs[0], "system")
	if col < 0 || sys < 0 || len(recs) != 3 {
		t.Fatalf("no prepare_s or system column, or %d lines: %v", len(recs), recs[0])
	}
	got := map[string]string{recs[1][sys]: recs[1][col], recs[2][sys]: recs[2][col]}
	if got["diskgnn"] != "17.25" || got["pyg+"] != "" {
		t.Fatalf("prepare_s by system %v", got)
	}
}

func TestDatasetsUpsert(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	d := store.Dataset{Name: "tiny", Path: "/x/tiny", Nodes: 10, FeatureDim: 8}
	s.Update(ctx, func(tx *store.Tx) error { return tx.UpsertDataset(&d) })
	d.Nodes = 20
	s.Update(ctx, func(tx *store.Tx) error { return tx.UpsertDataset(&d) })
	got, err := s.Dataset(ctx, "tiny")
	if err != nil || got.Nodes != 20 || got.ID != d.ID {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := s.Dataset(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%v", err)
	}
}

func TestSampleSeries(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	_, runs := seed(t, s, "a")
	var recs []metrics.SampleRecord
	for i := 0; i < 1000; i++ {
		rec := metrics.SampleRecord{T: float64(i), CPUPercent: float64(i % 10), RSSBytes: int64(i)}
		if i >= 500 {
			g, tx, rx := 10.0, 2.0, float64(i)
			rec.GPUUtil, rec.GPUPCIeTxMBps, rec.GPUPCIeRxMBps = &g, &tx, &rx
		}
		recs = append(recs, rec)
	}
	s.Update(ctx, func(tx *store.Tx) error { return tx.InsertSamples(runs[0].ID, recs) })
	series, err := s.SampleSeries(ctx, runs[0].ID, 0, 0, 100)
	if err != nil || len(series) != 100 {
		t.Fatalf("%d points, %v", len(series), err)
	}
	// bucket 0 holds t = 0..9: mean t 4.5, mean cpu 4.5
	if series[0].T != 4.5 || series[0].CPUPercent != 4.5 || series[0].RSSBytes != 4 || series[0].GPUUtil != nil || series[0].GPUPCIeRxMBps != nil {
		t.Fatalf("first bucket %+v", series[0])
	}
	// bucket 99 holds t = 990..999: PCIe rx = t, mean 994.5
	if series[99].GPUUtil == nil || *series[99].GPUUtil != 10 || series[99].GPUPCIeRxMBps == nil || *series[99].GPUPCIeRxMBps != 994.5 ||
		series[99].GPUPCIeTxMBps == nil || *series[99].GPUPCIeTxMBps != 2 {
		t.Fatalf("last bucket %+v", series[99])
	}
	win, _ := s.SampleSeries(ctx, runs[0].ID, 100, 200, 10)
	if len(win) != 10 || win[0].T != 104.5 {
		t.Fatalf("window %+v", win)
	}
	few, _ := s.SampleSeries(ctx, runs[0].ID, 0, 0, 5000)
	if len(few) != 1000 {
		t.Fatalf("more points than samples: %d", len(few))
	}
	// Re-sent samples (same t) replace the stored ones, across a partial chunk.
	var again []metrics.SampleRecord
	for i := 0; i < 150; i++ {
		again = append(again, metrics.SampleRecord{T: float64(i), CPUPercent: 77})
	}
	if err := s.Update(ctx, func(tx *store.Tx) error { return tx.InsertSamples(runs[0].ID, again) }); err != nil {
		t.Fatal(err)
	}
	all, _ := s.Samples(ctx, runs[0].ID, 0, 0, 0)
	if len(all) != 1000 || all[149].CPUPercent != 77 || all[150].CPUPercent != 0 {
		t.Fatalf("after re-send: %d samples, cpu[149]=%v cpu[150]=%v", len(all), all[149].CPUPercent, all[150].CPUPercent)
	}
	if all[700].GPUPCIeRxMBps == nil || *all[700].GPUPCIeRxMBps != 700 || all[700].GPUPCIeTxMBps == nil || *all[700].GPUPCIeTxMBps != 2 || all[100].GPUPCIeRxMBps != nil {
		t.Fatalf("PCIe read back: %+v / %+v", all[700], all[100])
	}
	none, err := s.SampleSeries(ctx, 999, 0, 0, 10)
	if err != nil || len(none) != 0 {
		t.Fatalf("missing run: %v %v", none, err)
	}
}

// TestSetDeviations: the summary's complete list of deviations replaces
// the start record's, and reads back as JSON.
func TestSetDeviations(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	_, runs := seed(t, s, "gnndrive")
	id := runs[0].ID
	if err := s.Update(ctx, func(tx *store.Tx) error {
		return tx.ApplyStartRecord(id, metrics.StartRecord{Deviations: []string{"cpu training"}}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"cpu training", "model step outside the budget"}
	if err := s.Update(ctx, func(tx *store.Tx) error { return tx.SetDeviations(id, want) }); err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := json.Unmarshal(r.Deviations, &got); err != nil || len(got) != 2 || got[1] != want[1] {
		t.Fatalf("deviations %s (%v), want %q", r.Deviations, err, want)
	}
}

// TestStartRecordSetsCompute: the compute mode the child reports in its
// start record's configuration (a paper's testbed maps an empty one to
// its GPU's model:) is the run's; a record without one, or with one that
// does not parse, leaves the queued mode.
func TestStartRecordSetsCompute(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	_, runs := seed(t, s, "ginex", "ginex", "ginex")
	for i, tc := range []struct{ config, want string }{
		{`{"system":"ginex","compute":"model:v100-pcie-from-h100-pyg"}`, "model:v100-pcie-from-h100-pyg"},
		{`{"system":"ginex"}`, store.ComputeCPU},
		{`{"system":"ginex","compute":"quantum"}`, store.ComputeCPU},
	} {
		id := runs[i].ID
		if err := s.Update(ctx, func(tx *store.Tx) error {
			return tx.ApplyStartRecord(id, metrics.StartRecord{Config: json.RawMessage(tc.config)}, nil)
		}); err != nil {
			t.Fatal(err)
		}
		r, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Compute != tc.want {
			t.Errorf("start record config %s: run compute %q, want %q", tc.config, r.Compute, tc.want)
		}
	}
}

// TestExperimentAggregatesAndEpochs: the experiment list carries each
// experiment's variants and wall-clock span without reading its runs, and
// an experiment's epochs come in one query, superseded attempts left out.
func TestExperimentAggregatesAndEpochs(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	e, runs := seed(t, s, "pyg+", "gnndrive", "pyg+")
	finish(t, s, runs[0].ID, store.StatusDone, 1, 2, 3)
	finish(t, s, runs[1].ID, store.StatusFailed, 1)
	list, err := s.ListExperiments(ctx)
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	got := list[0]
	if strings.Join(got.Systems, ",") != "gnndrive,pyg+" || got.FirstStarted.IsZero() || got.LastEnded.IsZero() || got.LastEnded.Before(got.FirstStarted) {
		t.Errorf("aggregates: systems %v, first %v, last %v", got.Systems, got.FirstStarted, got.LastEnded)
	}
	var retried store.Run
	if err := s.Update(ctx, func(tx *store.Tx) error {
		var err error
		retried, err = tx.RetryRun(runs[1].ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	eps, err := s.ExperimentEpochs(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 1 || len(eps[runs[0].ID]) != 3 || eps[runs[0].ID][2].EpochRecord.Epoch != 2 || eps[runs[0].ID][1].Tiers["cpu"].Hits != 4 {
		t.Errorf("experiment epochs: %v", eps)
	}
	if _, ok := eps[runs[1].ID]; ok {
		t.Errorf("superseded run %d (retried as %d) has epochs in the result", runs[1].ID, retried.ID)
	}
}

func TestRunConditionsAndMeta(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	e, runs := seed(t, s, "pyg+", "ginex", "ginex")
	finish(t, s, runs[0].ID, store.StatusOOM)
	finish(t, s, runs[1].ID, store.StatusDone, 1, 2)
	got, err := s.Runs(ctx, store.RunFilter{ExperimentID: e.ID, Conds: []store.Cond{{Field: "system", Op: "=", Value: "ginex"}, {Field: "status", Op: "!=", Value: "queued"}}})
	if err != nil || len(got) != 1 || got[0].ID != runs[1].ID {
		t.Errorf("conds: %v %v", got, err)
	}
	if got, err := s.Runs(ctx, store.RunFilter{Conds: []store.Cond{{Field: "system", Op: "~", Value: "G+"}}}); err != nil || len(got) != 1 {
		t.Errorf("contains: %d runs, %v", len(got), err)
	}
	if _, err := s.Runs(ctx, store.RunFilter{Conds: []store.Cond{{Field: "config_json", Op: "=", Value: "x"}}}); err == nil {
		t.Error("a field outside RunFields was accepted")
	}
	ids, err := s.ExperimentsWithRuns(ctx, []store.Cond{{Field: "status", Op: "=", Value: "oom"}, {Field: "mem_limit", Op: "<", Value: int64(512 << 20)}})
	if err != nil || !ids[e.ID] || len(ids) != 1 {
		t.Errorf("experiments with OOM runs under 512 MiB: %v %v", ids, err)
	}
	err = s.Update(ctx, func(tx *store.Tx) error {
		return tx.SetExperimentMeta(e.ID, store.ExperimentMeta{Name: " renamed ", Notes: "why: fig 9", Tags: []string{"Paper", "fig9", "paper", " "}})
	})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := s.Experiment(ctx, e.ID)
	if x.Name != "renamed" || x.Notes != "why: fig 9" || strings.Join(x.Tags, ",") != "fig9,paper" {
		t.Errorf("meta: %q %q %v", x.Name, x.Notes, x.Tags)
	}
	for _, bad := range []store.ExperimentMeta{{Tags: []string{"a b"}}, {Name: "two\nlines"}, {Tags: []string{strings.Repeat("x", 41)}}} {
		err := s.Update(ctx, func(tx *store.Tx) error { return tx.SetExperimentMeta(e.ID, bad) })
		if !errors.Is(err, store.ErrInvalidMeta) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if err := s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteExperiment(e.ID) }); err != nil {
		t.Fatal(err)
	}
}

// A brief read keeps of a run's summary only its memory account (the
// comparison's memory chart) and its prepare_s; a summary without them
// reads them as null.
func TestBriefSummaryKeepsTheMemoryAccount(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	_, runs := seed(t, s, "diskgnn", "ginex")
	sums := []string{
		`{"type":"summary","outcome":"done","deviations":["x"],"memory":{"host_budget_bytes":256,"device_budget_bytes":64,"device_tiers":{"gpu_cache":40},"device_tier_bytes":40,"model_step_bytes":9},"prepare_s":2.5}`,
		`{"type":"summary","outcome":"done"}`,
	}
	for i, r := range runs {
		err := s.Update(ctx, func(tx *store.Tx) error {
			if ok, err := tx.ClaimRun(r.ID); err != nil || !ok {
				return errors.Join(err, errors.New("claim failed"))
			}
			_, err := tx.FinishRun(r.ID, store.RunEnd{Status: store.StatusDone, Summary: json.RawMessage(sums[i])})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Runs(ctx, store.RunFilter{ExperimentID: runs[0].ExperimentID, Brief: true})
	if err != nil || len(got) != 2 {
		t.Fatalf("%d runs, %v", len(got), err)
	}
	type brief struct {
		Memory   *metrics.MemoryAccount `json:"memory"`
		PrepareS *float64               `json:"prepare_s"`
		Type     string                 `json:"type"`
	}
	var m brief
	if err := json.Unmarshal(got[0].Summary, &m); err != nil || m.Memory == nil || m.Memory.DeviceTiers["gpu_cache"] != 40 || m.Memory.ModelStepBytes != 9 ||
		m.PrepareS == nil || *m.PrepareS != 2.5 || m.Type != "" {
		t.Fatalf("brief summary %s (%v)", got[0].Summary, err)
	}
	var n brief
	if err := json.Unmarshal(got[1].Summary, &n); err != nil || n.Memory != nil || n.PrepareS != nil || n.Type != "" {
		t.Fatalf("brief summary without an account: %s (%v)", got[1].Summary, err)
	}
}

// A brief read keeps of a run's configuration only its train_max_nodes
// (the scale figure names bounded epochs); the rest reads as absent.
func TestBriefConfigKeepsTheEpochBound(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e := store.Experiment{Name: "e", Dataset: "tiny", Grid: json.RawMessage(`{"dataset":"tiny"}`)}
	configs := []string{`{"system":"ginex","train_max_nodes":20000}`, `{"system":"pyg+"}`}
	err := s.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		for i, c := range configs {
			r := store.Run{ExperimentID: e.ID, Seq: i, System: "ginex", Dataset: "tiny", Model: "sage", Config: json.RawMessage(c)}
			if err := tx.InsertRun(&r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Runs(ctx, store.RunFilter{ExperimentID: e.ID, Brief: true})
	if err != nil || len(got) != 2 {
		t.Fatalf("%d runs, %v", len(got), err)
	}
	var c [2]struct {
		TrainMaxNodes *int   `json:"train_max_nodes"`
		System        string `json:"system"`
	}
	for i := range got {
		if err := json.Unmarshal(got[i].Config, &c[i]); err != nil {
			t.Fatalf("brief config %s: %v", got[i].Config, err)
		}
	}
	if c[0].TrainMaxNodes == nil || *c[0].TrainMaxNodes != 20000 || c[0].System != "" {
		t.Errorf("brief config of a bounded run: %s", got[0].Config)
	}
	if c[1].TrainMaxNodes != nil || c[1].System != "" {
		t.Errorf("brief config of a whole-epoch run: %s", got[1].Config)
	}
}

// TestExportRunsCgroupLimit: runs.csv carries the limit the cgroup had in
// force beside the host budget: raised where the run held its model step
// beside the budget (its deviation says so), the budget otherwise, empty
// where no limit was enforced.
func TestExportRunsCgroupLimit(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e, runs := seed(t, s, "gnndrive", "pyg+", "ginex")
	dev := `the CPU trainer's model step (28 MiB: ...) is held outside the 256 MiB memory budget, as the GPU memory it occupies in the papers; the cgroup limit is 284 MiB`
	if err := s.Update(ctx, func(tx *store.Tx) error {
		for i, r := range runs[:2] {
			rec := metrics.StartRecord{System: r.System, Dataset: "tiny"}
			if i == 0 {
				rec.Deviations = []string{dev}
			}
			if err := tx.ApplyStartRecord(r.ID, rec, json.RawMessage(`{}`)); err != nil {
				return err
			}
			if err := tx.SetLimit(r.ID, true, "cgroup v1"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.ExportCSV(ctx, &buf, e.ID, store.ExportRuns); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col, sys := slices.Index(recs[0], "cgroup_limit_bytes"), slices.Index(recs[0], "system")
	if col < 0 || len(recs) != 4 {
		t.Fatalf("no cgroup_limit_bytes column, or %d lines: %v", len(recs), recs[0])
	}
	got := map[string]string{}
	for _, r := range recs[1:] {
		got[r[sys]] = r[col]
	}
	if got["gnndrive"] != fmt.Sprint(284<<20) || got["pyg+"] != fmt.Sprint(256<<20) || got["ginex"] != "" {
		t.Errorf("cgroup_limit_bytes by system %v", got)
	}
}

// TestExportEpochsAxes: the epochs CSV ends with the run's testbed and
// one column per path axis of its grid, so that the epochs of cells that
// differ only in an option (GIDS's window 0, 4, 8) are told apart without
// joining the runs CSV.
func TestExportEpochsAxes(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	e := store.Experiment{Name: "w", Dataset: "tiny", Grid: json.RawMessage(`{"dataset":"tiny","system":"gids","axes":{"options.window":[0,4],"device_mem":["1GiB"]}}`)}
	var ids []int64
	if err := s.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		for i, cfg := range []string{
			`{"system":"gids","options":{"window":"0"},"device_mem":"1GiB"}`,
			`{"system":"gids","options":{"window":"4"},"device_mem":"1GiB","testbed":"gids-vldb24"}`,
		} {
			r := store.Run{ExperimentID: e.ID, Seq: i, System: "gids", Dataset: "tiny", Model: "sage", Config: json.RawMessage(cfg)}
			if err := tx.InsertRun(&r); err != nil {
				return err
			}
			ids = append(ids, r.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	finish(t, s, ids[0], store.StatusDone, 1.5)
	finish(t, s, ids[1], store.StatusDone, 2.5)
	var buf bytes.Buffer
	if err := s.ExportCSV(ctx, &buf, e.ID, store.ExportEpochs); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("epochs CSV: %v rows, %v", len(rows), err)
	}
	head := rows[0]
	n := len(head)
	if got := head[n-3:]; got[0] != "testbed" || got[1] != "axis_device_mem" || got[2] != "axis_options.window" {
		t.Fatalf("last columns %q", got)
	}
	if got := rows[1][n-3:]; got[0] != store.ThisHost || got[1] != "1GiB" || got[2] != "0" {
		t.Fatalf("run 1: %q", got)
	}
	if got := rows[2][n-3:]; got[0] != "gids-vldb24" || got[2] != "4" {
		t.Fatalf("run 2: %q", got)
	}
}
