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
// runner received it. It is not for JSON: EpochRecord's UnmarshalJSON,
// promoted, would read only the record (web.APIEpoch writes one).
type Epoch struct {
	RunID      int64
	ReceivedAt time.Time
	metrics.EpochRecord
}

const epochInsertSQL = `INSERT OR REPLACE INTO epochs(run_id, epoch, received_at, record_json) VALUES (?, ?, ?, ?)`

// epochVersion is the metrics version a record is stored under: records
// without the field follow the original contract, version 1.
func epochVersion(e *metrics.EpochRecord) int { return max(e.MetricsVersion, 1) }

// epochArgs are an epoch's row: its key, when it was received and its
// record's JSON (the source of truth of its measurements, read through
// engine/metrics/fields), with its metrics version filled in.
func epochArgs(runID int64, e *metrics.EpochRecord, received int64) ([]any, error) {
	r := *e
	r.Type, r.MetricsVersion = metrics.TypeEpoch, epochVersion(e)
	b, err := r.JSON()
	if err != nil {
		return nil, err
	}
	return []any{runID, e.Epoch, received, string(b)}, nil
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

const epochCols = `run_id, epoch, received_at, record_json`

// scanEpoch reads a row of epochCols. Rows stored before metrics version 2
// come back with MetricsVersion 1 and the fields added since at 0.
func scanEpoch(sc interface{ Scan(...any) error }) (Epoch, error) {
	var e Epoch
	var epoch int
	var received sql.NullInt64
	var record []byte
	if err := sc.Scan(&e.RunID, &epoch, &received, &record); err != nil {
		return e, err
	}
	if err := json.Unmarshal(record, &e.EpochRecord); err != nil {
		return e, fmt.Errorf("epoch %d of run %d: record: %w", epoch, e.RunID, err)
	}
	e.Type, e.EpochRecord.Epoch, e.MetricsVersion = metrics.TypeEpoch, epoch, epochVersion(&e.EpochRecord)
	e.ReceivedAt = fromMS(received)
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

// scanFunc is a Scan that reads more columns before an epoch's.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// FloorlessEpoch is a stored epoch without an I/O floor that kept its
// device reads: its floor can be filled in once a device profile of the
// storage its run read exists (engine/devprofile); the floor is computed
// from its EpochS, IORequests and IOBytes.
type FloorlessEpoch struct {
	ExperimentID int64
	Host         metrics.HostFacts // the run's host facts: Hostname and Storage pick the profile
	Epoch
}

// FloorlessEpochs returns the epochs that have no io_floor_s but kept
// their device reads (io_requests), with their runs' host facts, by run
// and epoch (the partial index of migration 0013 finds them: every server
// start asks).
func (s *Store) FloorlessEpochs(ctx context.Context) ([]FloorlessEpoch, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT r.host_json, r.experiment_id, e.run_id, e.epoch, e.received_at, e.record_json
		FROM epochs e JOIN runs r ON r.id = e.run_id
		WHERE `+floorlessSQL+` ORDER BY e.run_id, e.epoch`)
	if err != nil {
		return nil, fmt.Errorf("epochs without an I/O floor: %w", err)
	}
	defer rows.Close()
	var out []FloorlessEpoch
	for rows.Next() {
		var host sql.NullString
		var f FloorlessEpoch
		e, err := scanEpoch(scanFunc(func(dest ...any) error {
			return rows.Scan(append([]any{&host, &f.ExperimentID}, dest...)...)
		}))
		if err != nil {
			return nil, fmt.Errorf("epochs without an I/O floor: %w", err)
		}
		f.Epoch = e
		if host.Valid && host.String != "" {
			_ = json.Unmarshal([]byte(host.String), &f.Host) // unreadable host facts: no profile matches
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// floorlessSQL selects the epochs without an I/O floor that kept their
// device reads: the condition of migration 0013's partial index
// epochs_floorless, written the same so that SQLite uses it.
const floorlessSQL = `json_extract(record_json, '$.io_floor_s') IS NULL AND json_type(record_json, '$.io_requests') IS NOT NULL`

// SetIOFloor fills in an epoch's io_floor_s and io_efficiency (nil: n/a)
// where it has none, with its disk service judged against the same
// profile (nil: not measured; metrics.FillIOFloor); it reports whether it
// changed the epoch.
func (t *Tx) SetIOFloor(runID int64, epoch int, floor float64, eff *float64, disk *metrics.DiskService) (bool, error) {
	// a patch of the record made here (SQLite's own rendering of a real
	// keeps 15 digits); json_patch leaves out a null io_efficiency, as the
	// record does
	patch, err := json.Marshal(struct {
		Floor float64              `json:"io_floor_s"`
		Eff   *float64             `json:"io_efficiency"`
		Disk  *metrics.DiskService `json:"disk_service,omitempty"`
	}{floor, eff, disk})
	if err != nil {
		return false, fmt.Errorf("set the I/O floor of epoch %d of run %d: %w", epoch, runID, err)
	}
	res, err := t.tx.ExecContext(t.ctx, `UPDATE epochs SET record_json = json_patch(record_json, ?)
		WHERE run_id = ? AND epoch = ? AND json_extract(record_json, '$.io_floor_s') IS NULL`,
		string(patch), runID, epoch)
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
