package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"outcore/engine/vocab"
)

// Experiment is one grid of runs, with its runs' progress.
type Experiment struct {
	ID         int64
	Name       string
	Dataset    string
	Grid       json.RawMessage // the grid file as given
	BaseConfig json.RawMessage // the grid's top-level keys other than "axes"
	CreatedAt  time.Time
	// Counts is filled by ListExperiments and Experiment (not by
	// InsertExperiment): the current runs by status.
	Counts StatusCounts
	// Systems, FirstStarted and LastEnded are filled with Counts: the
	// current runs' distinct variants (sorted by name), the earliest
	// start and the latest end among them (zero when none).
	Systems      []string
	FirstStarted time.Time
	LastEnded    time.Time
	// Notes and Tags organise experiments (SetExperimentMeta); tags are
	// sorted.
	Notes string
	Tags  []string
	// Refused are the grid's cells that were not queued because they
	// cannot start under their memory limit (skipped at creation, each
	// with its reason).
	Refused []RefusedCell
}

// RefusedCell is a grid cell skipped at creation (vocab.RefusedCell, the
// grid language's; the experiment keeps its list).
type RefusedCell = vocab.RefusedCell

// InsertExperiment inserts e and sets e.ID and e.CreatedAt.
func (t *Tx) InsertExperiment(e *Experiment) error {
	e.CreatedAt = time.UnixMilli(ms(t.now))
	grid, base := e.Grid, e.BaseConfig
	if len(grid) == 0 {
		grid = json.RawMessage("{}")
	}
	if len(base) == 0 {
		base = json.RawMessage("{}")
	}
	refused := []byte("[]")
	if len(e.Refused) > 0 {
		var err error
		if refused, err = json.Marshal(e.Refused); err != nil {
			return fmt.Errorf("insert experiment: refused cells: %w", err)
		}
	}
	res, err := t.tx.ExecContext(t.ctx,
		`INSERT INTO experiments(name, dataset, grid_json, base_config_json, created_at, refused_json) VALUES (?, ?, ?, ?, ?, ?)`,
		e.Name, e.Dataset, string(grid), string(base), ms(e.CreatedAt), string(refused))
	if err != nil {
		return fmt.Errorf("insert experiment: %w", err)
	}
	e.ID, err = res.LastInsertId()
	if err != nil {
		return fmt.Errorf("insert experiment: %w", err)
	}
	return nil
}

// DeleteExperiment deletes an experiment with its runs, epochs, samples and
// events. The caller must make sure none of its runs is running (cancel
// first). The error wraps ErrNotFound when there is no such experiment and
// ErrConflict when a run is still running.
func (t *Tx) DeleteExperiment(id int64) error {
	var running int
	if err := t.tx.QueryRowContext(t.ctx,
		`SELECT count(*) FROM runs WHERE experiment_id = ? AND status = 'running'`, id).Scan(&running); err != nil {
		return fmt.Errorf("delete experiment %d: %w", id, err)
	}
	if running > 0 {
		return fmt.Errorf("delete experiment %d: %d run(s) still running: %w", id, running, ErrConflict)
	}
	if _, err := t.tx.ExecContext(t.ctx, `DELETE FROM experiment_tags WHERE experiment_id = ?`, id); err != nil {
		return fmt.Errorf("delete experiment %d tags: %w", id, err)
	}
	// Events first: run_events.run_id cascades, but the experiment-level
	// events (run_id NULL) do not.
	if _, err := t.tx.ExecContext(t.ctx, `DELETE FROM run_events WHERE experiment_id = ?`, id); err != nil {
		return fmt.Errorf("delete experiment %d events: %w", id, err)
	}
	// Children explicitly, in bulk, rather than row-by-row cascades.
	for _, q := range []string{
		`DELETE FROM samples WHERE run_id IN (SELECT id FROM runs WHERE experiment_id = ?)`,
		`DELETE FROM epochs WHERE run_id IN (SELECT id FROM runs WHERE experiment_id = ?)`,
		`UPDATE runs SET retry_of = NULL WHERE experiment_id = ?`,
		`DELETE FROM runs WHERE experiment_id = ?`,
	} {
		if _, err := t.tx.ExecContext(t.ctx, q, id); err != nil {
			return fmt.Errorf("delete experiment %d: %w", id, err)
		}
	}
	res, err := t.tx.ExecContext(t.ctx, `DELETE FROM experiments WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete experiment %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("experiment %d: %w", id, ErrNotFound)
	}
	return nil
}

// experimentListSQL lists experiments with their current runs' counts by
// status; the counts come from runs_experiment_status (an index-only scan).
const experimentListSQL = `
	SELECT e.id, e.name, e.dataset, e.grid_json, e.base_config_json, e.created_at,
		coalesce(c.total, 0), coalesce(c.queued, 0), coalesce(c.running, 0), coalesce(c.done, 0),
		coalesce(c.failed, 0), coalesce(c.oom, 0), coalesce(c.cancelled, 0), coalesce(c.interrupted, 0),
		coalesce(c.systems, ''), c.first_started, c.last_ended,
		e.notes, coalesce((SELECT group_concat(tag, char(31)) FROM experiment_tags t WHERE t.experiment_id = e.id), ''),
		e.refused_json, coalesce(c.unstarted, 0)
	FROM experiments e
	LEFT JOIN (
		SELECT experiment_id,
			count(*) AS total,
			sum(status = 'queued') AS queued, sum(status = 'running') AS running,
			sum(status = 'done') AS done, sum(status = 'failed') AS failed,
			sum(status = 'oom') AS oom, sum(status = 'cancelled') AS cancelled,
			sum(status = 'interrupted') AS interrupted,
			sum(status = 'cancelled' AND started_at IS NULL) AS unstarted,
			group_concat(DISTINCT system) AS systems,
			min(started_at) AS first_started, max(ended_at) AS last_ended
		FROM runs WHERE superseded = 0
		GROUP BY experiment_id
	) c ON c.experiment_id = e.id`

func scanExperiment(sc interface{ Scan(...any) error }) (Experiment, error) {
	var e Experiment
	var grid, base string
	var created, first, last sql.NullInt64
	var systems, tags, refused string
	c := &e.Counts
	err := sc.Scan(&e.ID, &e.Name, &e.Dataset, &grid, &base, &created,
		&c.Total, &c.Queued, &c.Running, &c.Done, &c.Failed, &c.OOM, &c.Cancelled, &c.Interrupted,
		&systems, &first, &last, &e.Notes, &tags, &refused, &c.CancelledUnstarted)
	if refused != "" && refused != "[]" {
		_ = json.Unmarshal([]byte(refused), &e.Refused) // written by InsertExperiment
	}
	c.Refused = len(e.Refused)
	if tags != "" {
		e.Tags = strings.Split(tags, "\x1f")
		sort.Strings(e.Tags)
	}
	e.Grid, e.BaseConfig = json.RawMessage(grid), json.RawMessage(base)
	e.CreatedAt = fromMS(created)
	e.FirstStarted, e.LastEnded = fromMS(first), fromMS(last)
	if systems != "" {
		e.Systems = strings.Split(systems, ",")
		sort.Strings(e.Systems)
	}
	return e, err
}

// ListExperiments returns every experiment, newest first, with progress
// counts (the dashboard's experiment list).
func (s *Store) ListExperiments(ctx context.Context) ([]Experiment, error) {
	rows, err := s.r.QueryContext(ctx, experimentListSQL+` ORDER BY e.created_at DESC, e.id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list experiments: %w", err)
	}
	defer rows.Close()
	var out []Experiment
	for rows.Next() {
		e, err := scanExperiment(rows)
		if err != nil {
			return nil, fmt.Errorf("list experiments: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list experiments: %w", err)
	}
	return out, nil
}

// Experiment returns one experiment with its progress counts; the error
// wraps ErrNotFound when there is none.
func (s *Store) Experiment(ctx context.Context, id int64) (Experiment, error) {
	e, err := scanExperiment(s.r.QueryRowContext(ctx, experimentListSQL+` WHERE e.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("experiment %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return e, fmt.Errorf("experiment %d: %w", id, err)
	}
	return e, nil
}
