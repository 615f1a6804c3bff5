package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"outcore/migrations"
	"outcore/store"
)

// LegacyDatabase writes a database as outcore wrote it before epoch
// records had metrics version 2 (DESIGN §5): schema version 1 (only
// 0001_init.sql applied) holding one experiment on dataset "tiny" with one
// finished pyg+ run at 256 MiB and three epochs whose columns are those of
// LegacyEpoch (read_amplification = bytes_read / bytes_needed = 3). Opening
// the data directory with the store migrates it; the tests of the store,
// report and web check that such runs keep displaying. It returns the
// experiment and run ids.
func LegacyDatabase(ctx context.Context, dataDir string) (experimentID, runID int64, err error) {
	db, err := sql.Open("sqlite3", "file:"+store.Path(dataDir)+"?_foreign_keys=on")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ms, err := migrations.All()
	if err != nil {
		return 0, 0, err
	}
	if _, err := db.ExecContext(ctx, ms[0].SQL); err != nil {
		return 0, 0, fmt.Errorf("schema 1: %w", err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA user_version = 1"); err != nil {
		return 0, 0, err
	}
	now := time.Now().UnixMilli()
	res, err := db.ExecContext(ctx, `INSERT INTO experiments(name, dataset, grid_json, base_config_json, created_at)
		VALUES ('legacy', 'tiny', '{"dataset":"tiny"}', '{}', ?)`, now)
	if err != nil {
		return 0, 0, err
	}
	experimentID, _ = res.LastInsertId()
	const epochs, secs = 3, 2.0
	res, err = db.ExecContext(ctx, `INSERT INTO runs(experiment_id, seq, queue_pos, status, system, dataset, model,
		mem_limit_bytes, feature_dim, batch_size, fanout, repeat, config_json, epochs_done, mean_epoch_s, best_val_acc,
		test_acc, total_s, queued_at, started_at, ended_at, exit_code)
		VALUES (?, 0, 1, 'done', 'pyg+', 'tiny', 'sage', ?, 32, 1024, '10,5', 0, '{"system":"pyg+"}', ?, ?, 0.6, 0.58, ?, ?, ?, ?, 0)`,
		experimentID, int64(256<<20), epochs, secs, epochs*secs, now, now, now)
	if err != nil {
		return 0, 0, err
	}
	runID, _ = res.LastInsertId()
	for ep := 0; ep < epochs; ep++ {
		e := LegacyEpoch(ep, secs)
		if _, err := db.ExecContext(ctx, `INSERT INTO epochs(run_id, epoch, warmup, epoch_s, sample_s, extract_s, train_s,
			stall_s, batches, bytes_needed, bytes_read, read_amplification, train_loss, train_acc, val_acc, test_acc,
			eval_s, wall_s, stages_json, tiers_json, received_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', '{"cpu":{"lookups":1000,"hits":400},"device":{"lookups":600,"hits":600}}', ?)`,
			runID, e.Epoch, e.Warmup, e.EpochS, e.SampleS, e.ExtractS, e.TrainS, e.StallS, e.Batches, e.BytesNeeded,
			e.BytesRead, e.ReadAmplification, e.TrainLoss, e.TrainAcc, e.ValAcc, e.TestAcc, e.EvalS, e.WallS, now); err != nil {
			return 0, 0, fmt.Errorf("legacy epoch %d: %w", ep, err)
		}
	}
	return experimentID, runID, nil
}
