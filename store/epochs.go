package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"outcore/engine/metrics"
)

// Epoch is one stored epoch of a run: the child's EpochRecord and when the
// runner received it.
type Epoch struct {
	RunID      int64
	ReceivedAt time.Time
	metrics.EpochRecord
}

const epochInsertSQL = `
	INSERT OR REPLACE INTO epochs(run_id, epoch, warmup, epoch_s, sample_s, extract_s, train_s, stall_s,
		batches, bytes_needed, bytes_read, read_amplification, train_loss, train_acc, val_acc, test_acc,
		eval_s, wall_s, stages_json, tiers_json, received_at,
		metrics_version, feature_bytes_read, topology_bytes_read, rows_from_device, rows_shared_in_flight,
		sample_busy_s, sample_wait_s, extract_busy_s, extract_wait_s,
		wall_sample_s, wall_load_s, wall_train_s, wall_stall_s, host_pressure_json, io_floor_s, io_efficiency, counters_json,
		io_requests_json, io_bytes)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// epochVersion is the metrics version a record is stored under: records
// without the field follow the original contract, version 1.
func epochVersion(e *metrics.EpochRecord) int { return max(e.MetricsVersion, 1) }

func epochArgs(runID int64, e *metrics.EpochRecord, received int64) ([]any, error) {
	stages, tiers, counters := []byte("{}"), []byte("{}"), []byte("{}")
	var err error
	if len(e.Stages) > 0 {
		if stages, err = json.Marshal(e.Stages); err != nil {
			return nil, fmt.Errorf("epoch %d stages: %w", e.Epoch, err)
		}
	}
	if len(e.Tiers) > 0 {
		if tiers, err = json.Marshal(e.Tiers); err != nil {
			return nil, fmt.Errorf("epoch %d tiers: %w", e.Epoch, err)
		}
	}
	if len(e.Counters) > 0 {
		if counters, err = json.Marshal(e.Counters); err != nil {
			return nil, fmt.Errorf("epoch %d counters: %w", e.Epoch, err)
		}
	}
	var pressure sql.NullString
	if e.HostPressure != nil {
		b, err := json.Marshal(e.HostPressure)
		if err != nil {
			return nil, fmt.Errorf("epoch %d host pressure: %w", e.Epoch, err)
		}
		pressure = sql.NullString{String: string(b), Valid: true}
	}
	requests := ""
	if e.IORequests != nil {
		b, err := json.Marshal(e.IORequests)
		if err != nil {
			return nil, fmt.Errorf("epoch %d io_requests: %w", e.Epoch, err)
		}
		requests = string(b)
	}
	return []any{runID, e.Epoch, b2i(e.Warmup), e.EpochS, e.SampleS, e.ExtractS, e.TrainS, e.StallS,
		e.Batches, e.BytesNeeded, e.BytesRead, e.ReadAmplification, e.TrainLoss, e.TrainAcc, e.ValAcc, e.TestAcc,
		e.EvalS, e.WallS, string(stages), string(tiers), received,
		epochVersion(e), e.FeatureBytesRead, e.TopologyBytesRead, e.RowsFromDevice, e.RowsSharedInFlight,
		e.SampleBusyS, e.SampleWaitS, e.ExtractBusyS, e.ExtractWaitS,
		e.WallSampleS, e.WallLoadS, e.WallTrainS, e.WallStallS, pressure, e.IOFloorS, e.IOEfficiency, string(counters),
		requests, e.IOBytes}, nil
}

// InsertEpoch stores one epoch of a run (replacing an earlier record of the
// same epoch number) and bumps the run's epochs_done.
func (t *Tx) InsertEpoch(runID int64, e *metrics.EpochRecord) error {
	args, err := epochArgs(runID, e, ms(t.now))
	if err != nil {
		return fmt.Errorf("run %d: %w", runID, err)
	}
	if _, err := t.tx.ExecContext(t.ctx, epochInsertSQL, args...); err != nil {
		return fmt.Errorf("insert epoch %d of run %d: %w", e.Epoch, runID, err)
	}
	if _, err := t.tx.ExecContext(t.ctx,
		`UPDATE runs SET epochs_done = (SELECT count(*) FROM epochs WHERE run_id = ?1) WHERE id = ?1`, runID); err != nil {
		return fmt.Errorf("run %d epochs_done: %w", runID, err)
	}
	return nil
}

const epochCols = `run_id, epoch, warmup, epoch_s, sample_s, extract_s, train_s, stall_s,
	batches, bytes_needed, bytes_read, read_amplification, train_loss, train_acc, val_acc, test_acc,
	eval_s, wall_s, stages_json, tiers_json, received_at,
	metrics_version, feature_bytes_read, topology_bytes_read, rows_from_device, rows_shared_in_flight,
	sample_busy_s, sample_wait_s, extract_busy_s, extract_wait_s,
	wall_sample_s, wall_load_s, wall_train_s, wall_stall_s, host_pressure_json, io_floor_s, io_efficiency, counters_json,
	io_requests_json, io_bytes`

// scanEpoch reads a row of epochCols. Rows stored before metrics version 2
// come back with MetricsVersion 1 and the fields added since at 0.
func scanEpoch(sc interface{ Scan(...any) error }) (Epoch, error) {
	var e Epoch
	var stages, tiers, counters, requests string
	var received sql.NullInt64
	var pressure sql.NullString
	var floor, eff sql.NullFloat64
	err := sc.Scan(&e.RunID, &e.EpochRecord.Epoch, &e.Warmup, &e.EpochS, &e.SampleS, &e.ExtractS, &e.TrainS, &e.StallS,
		&e.Batches, &e.BytesNeeded, &e.BytesRead, &e.ReadAmplification, &e.TrainLoss, &e.TrainAcc, &e.ValAcc, &e.TestAcc,
		&e.EvalS, &e.WallS, &stages, &tiers, &received,
		&e.MetricsVersion, &e.FeatureBytesRead, &e.TopologyBytesRead, &e.RowsFromDevice, &e.RowsSharedInFlight,
		&e.SampleBusyS, &e.SampleWaitS, &e.ExtractBusyS, &e.ExtractWaitS,
		&e.WallSampleS, &e.WallLoadS, &e.WallTrainS, &e.WallStallS, &pressure, &floor, &eff, &counters,
		&requests, &e.IOBytes)
	if err != nil {
		return e, err
	}
	e.IOFloorS, e.IOEfficiency = nf(floor), nf(eff)
	e.Type = metrics.TypeEpoch
	e.ReceivedAt = fromMS(received)
	if stages != "" && stages != "{}" {
		if e.Stages, err = decodeStages(stages); err != nil {
			return e, fmt.Errorf("epoch %d stages: %w", e.EpochRecord.Epoch, err)
		}
	}
	if tiers != "" && tiers != "{}" {
		if e.Tiers, err = decodeTiers(tiers); err != nil {
			return e, fmt.Errorf("epoch %d tiers: %w", e.EpochRecord.Epoch, err)
		}
	}
	if counters != "" && counters != "{}" {
		if err := json.Unmarshal([]byte(counters), &e.Counters); err != nil {
			return e, fmt.Errorf("epoch %d counters: %w", e.EpochRecord.Epoch, err)
		}
	}
	if requests != "" {
		if err := json.Unmarshal([]byte(requests), &e.IORequests); err != nil {
			return e, fmt.Errorf("epoch %d io_requests: %w", e.EpochRecord.Epoch, err)
		}
	}
	if pressure.Valid && pressure.String != "" {
		var p metrics.HostPressure
		if err := json.Unmarshal([]byte(pressure.String), &p); err != nil {
			return e, fmt.Errorf("epoch %d host pressure: %w", e.EpochRecord.Epoch, err)
		}
		e.HostPressure = &p
	}
	return e, nil
}

// Epochs returns a run's epochs in order.
func (s *Store) Epochs(ctx context.Context, runID int64) ([]Epoch, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+epochCols+` FROM epochs WHERE run_id = ? ORDER BY epoch`, runID)
	if err != nil {
		return nil, fmt.Errorf("epochs of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Epoch
	for rows.Next() {
		e, err := scanEpoch(rows)
		if err != nil {
			return nil, fmt.Errorf("epochs of run %d: %w", runID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("epochs of run %d: %w", runID, err)
	}
	return out, nil
}

// LastRecordKeys returns the last epoch and the last sample time stored
// for a run (-1 for none): where a run's records read on from a committed
// offset go on (their order is checked, experiments/recordcheck.go).
func (s *Store) LastRecordKeys(ctx context.Context, runID int64) (epoch int, t float64, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT coalesce((SELECT max(epoch) FROM epochs WHERE run_id = ?1), -1),
		coalesce((SELECT max(t) FROM samples WHERE run_id = ?1), -1)`, runID).Scan(&epoch, &t)
	if err != nil {
		return 0, 0, fmt.Errorf("last records of run %d: %w", runID, err)
	}
	return epoch, t, nil
}

// ExperimentEpochs returns the epochs of an experiment's current runs
// (superseded attempts left out), by run id, each run's in order: one
// query for the whole experiment (the comparison views read every run's
// epochs at once).
func (s *Store) ExperimentEpochs(ctx context.Context, experimentID int64) (map[int64][]Epoch, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+epochCols+` FROM epochs
		WHERE run_id IN (SELECT id FROM runs WHERE experiment_id = ? AND superseded = 0)
		ORDER BY run_id, epoch`, experimentID)
	if err != nil {
		return nil, fmt.Errorf("epochs of experiment %d: %w", experimentID, err)
	}
	defer rows.Close()
	out := map[int64][]Epoch{}
	for rows.Next() {
		e, err := scanEpoch(rows)
		if err != nil {
			return nil, fmt.Errorf("epochs of experiment %d: %w", experimentID, err)
		}
		out[e.RunID] = append(out[e.RunID], e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("epochs of experiment %d: %w", experimentID, err)
	}
	return out, nil
}

// FloorlessEpoch is a stored epoch without an I/O floor that kept its
// device reads: its floor can be filled in once a device profile of the
// storage its run read exists (engine/devprofile). Of the epoch, only what
// the floor is computed from is read: RunID, Epoch, EpochS, IORequests
// and IOBytes.
type FloorlessEpoch struct {
	ExperimentID int64
	Host         metrics.HostFacts // the run's host facts: Hostname and Storage pick the profile
	Epoch
}

// FloorlessEpochs returns the epochs that have no io_floor_s but kept
// their device reads (io_requests), with their runs' host facts, by run
// and epoch (the partial index of migration 0012 finds them: every server
// start asks).
func (s *Store) FloorlessEpochs(ctx context.Context) ([]FloorlessEpoch, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT r.host_json, r.experiment_id, e.run_id, e.epoch, e.epoch_s, e.io_requests_json, e.io_bytes
		FROM epochs e JOIN runs r ON r.id = e.run_id
		WHERE e.io_floor_s IS NULL AND e.io_requests_json != '' ORDER BY e.run_id, e.epoch`)
	if err != nil {
		return nil, fmt.Errorf("epochs without an I/O floor: %w", err)
	}
	defer rows.Close()
	var out []FloorlessEpoch
	for rows.Next() {
		var host sql.NullString
		var requests string
		var f FloorlessEpoch
		if err := rows.Scan(&host, &f.ExperimentID, &f.RunID, &f.EpochRecord.Epoch, &f.EpochS, &requests, &f.IOBytes); err != nil {
			return nil, fmt.Errorf("epochs without an I/O floor: %w", err)
		}
		if err := json.Unmarshal([]byte(requests), &f.IORequests); err != nil {
			return nil, fmt.Errorf("epoch %d of run %d: io_requests: %w", f.EpochRecord.Epoch, f.RunID, err)
		}
		f.Type = metrics.TypeEpoch
		if host.Valid && host.String != "" {
			_ = json.Unmarshal([]byte(host.String), &f.Host) // unreadable host facts: no profile matches
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// SetIOFloor fills in an epoch's io_floor_s and io_efficiency (nil: n/a)
// where it has none; it reports whether it changed the epoch.
func (t *Tx) SetIOFloor(runID int64, epoch int, floor float64, eff *float64) (bool, error) {
	res, err := t.tx.ExecContext(t.ctx, `UPDATE epochs SET io_floor_s = ?, io_efficiency = ? WHERE run_id = ? AND epoch = ? AND io_floor_s IS NULL`,
		floor, eff, runID, epoch)
	if err != nil {
		return false, fmt.Errorf("set the I/O floor of epoch %d of run %d: %w", epoch, runID, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// MarkIOFloorsFilled records that some of the run's epochs had their I/O
// floor filled in (SetIOFloor) after its digest may have been made: the
// stored digest is dropped and the run's io_floor_fills counted up, which
// tells the dashboard's digest cache its copy is stale.
func (t *Tx) MarkIOFloorsFilled(runID int64) error {
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET io_floor_fills = io_floor_fills + 1, digest = NULL, digest_epochs = 0 WHERE id = ?`, runID); err != nil {
		return fmt.Errorf("run %d: %w", runID, err)
	}
	return nil
}
