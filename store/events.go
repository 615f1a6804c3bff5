package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Event kinds.
const (
	// EventExperiment: an experiment was created, deleted, cancelled or
	// retried (Msg says which; RunID is 0).
	EventExperiment = "experiment"
	// EventStatus: a run changed status; Data is {"status": ..., ...}.
	EventStatus = "status"
	// EventEpoch: a run reported an epoch; Data is the EpochRecord.
	EventEpoch = "epoch"
	// EventSample: a run reported a per-second sample; Data is the
	// SampleRecord. Transient: pruned when the run ends (the samples table
	// keeps the data).
	EventSample = "sample"
	// EventProgress: a run's progress inside an epoch; Data is the
	// ProgressRecord. Transient: pruned when the run ends.
	EventProgress = "progress"
	// EventLog: a log line from the child or the runner (Level, Msg).
	EventLog = "log"
)

// Event is one row of the event log. IDs increase monotonically and are
// never reused, so a client that has seen event N resumes with
// EventsSince(N) without duplicates or gaps (other than pruned transient
// events).
type Event struct {
	ID           int64           `json:"id"`
	ExperimentID int64           `json:"experiment_id"`
	RunID        int64           `json:"run_id,omitempty"`
	At           time.Time       `json:"at"`
	Kind         string          `json:"kind"`
	Level        string          `json:"level,omitempty"`
	Msg          string          `json:"msg,omitempty"`
	Data         json.RawMessage `json:"data,omitempty"`
}

// AppendEvent appends ev to the event log and sets ev.ID and ev.At (when zero).
func (t *Tx) AppendEvent(ev *Event) error {
	if ev.At.IsZero() {
		ev.At = time.UnixMilli(ms(t.now))
	}
	if ev.Level == "" {
		ev.Level = "info"
	}
	var run sql.NullInt64
	if ev.RunID != 0 {
		run = sql.NullInt64{Int64: ev.RunID, Valid: true}
	}
	var data sql.NullString
	if len(ev.Data) > 0 {
		data = sql.NullString{String: string(ev.Data), Valid: true}
	}
	res, err := t.tx.ExecContext(t.ctx,
		`INSERT INTO run_events(experiment_id, run_id, at, kind, level, msg, data_json) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		ev.ExperimentID, run, ms(ev.At), ev.Kind, ev.Level, ev.Msg, data)
	if err != nil {
		return fmt.Errorf("append %s event: %w", ev.Kind, err)
	}
	ev.ID, err = res.LastInsertId()
	if err != nil {
		return fmt.Errorf("append %s event: %w", ev.Kind, err)
	}
	return nil
}

// PruneTransient deletes a finished run's transient events (samples and
// progress), which the samples table and the run row keep in full.
func (t *Tx) PruneTransient(runID int64) error {
	if _, err := t.tx.ExecContext(t.ctx,
		`DELETE FROM run_events WHERE run_id = ? AND kind IN ('sample', 'progress')`, runID); err != nil {
		return fmt.Errorf("prune events of run %d: %w", runID, err)
	}
	return nil
}

const eventCols = `id, experiment_id, coalesce(run_id, 0), at, kind, level, msg, data_json`

func scanEvent(sc interface{ Scan(...any) error }) (Event, error) {
	var ev Event
	var at sql.NullInt64
	var data sql.NullString
	err := sc.Scan(&ev.ID, &ev.ExperimentID, &ev.RunID, &at, &ev.Kind, &ev.Level, &ev.Msg, &data)
	ev.At = fromMS(at)
	if data.Valid {
		ev.Data = json.RawMessage(data.String)
	}
	return ev, err
}

// EventsSince returns up to limit events with id > after, in id order
// (limit <= 0 means 1000).
func (s *Store) EventsSince(ctx context.Context, after int64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+eventCols+` FROM run_events WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("events since %d: %w", after, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("events since %d: %w", after, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events since %d: %w", after, err)
	}
	return out, nil
}

// RunEvents returns a run's events in order, of the given kinds (none = all).
func (s *Store) RunEvents(ctx context.Context, runID int64, kinds ...string) ([]Event, error) {
	q := `SELECT ` + eventCols + ` FROM run_events WHERE run_id = ?`
	args := []any{runID}
	if len(kinds) > 0 {
		q += ` AND kind IN (?`
		for range kinds[1:] {
			q += `, ?`
		}
		q += `)`
		for _, k := range kinds {
			args = append(args, k)
		}
	}
	q += ` ORDER BY id`
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("events of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("events of run %d: %w", runID, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events of run %d: %w", runID, err)
	}
	return out, nil
}

// LastEventID returns the id of the newest event (0 when there is none).
// Because SQLite serialises writers and ids are assigned inside the write
// transaction, every event with a smaller id is committed when this one is.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT max(id) FROM run_events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("last event id: %w", err)
	}
	return id.Int64, nil
}
