package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
)

// Cell is one cell of an experiment's grid in a run comparison: the runs
// that share variant, memory limit, feature dimension, batch size, model,
// fanout, dataset (a feature_dim or ids twin) and cell on the axes kept
// in the configuration (Run.Cell: path axes, ids) — they differ only in
// repeat —, with statistics over the runs that finished as done.
type Cell struct {
	System        string
	MemLimitBytes int64
	FeatureDim    int
	BatchSize     int
	Model         string
	Fanout        string
	Dataset       string
	// Cell is Run.Cell of the cell's runs: {"ids":"local"}, "" when the
	// grid has no such axis.
	Cell string

	Runs   int // current runs in the cell (superseded attempts excluded)
	Done   int
	OOM    int
	Failed int
	Other  int // queued, running, cancelled, interrupted

	// Over the done runs' mean epoch times (each run's mean over its
	// non-warm-up epochs); nil when no run is done.
	MeanEpochS *float64
	StdEpochS  *float64 // sample standard deviation; nil with fewer than 2 done runs
	MinEpochS  *float64
	MaxEpochS  *float64

	MeanBestValAcc      *float64
	MeanTestAcc         *float64
	MeanPeakCgroupBytes *float64
}

// compareSQL groups an experiment's current runs into cells; it
// aggregates per-run values that FinishRun stored.
var compareSQL = `
	SELECT system, mem_limit_bytes, feature_dim, batch_size, model, fanout, dataset, ` + runCellJSON + ` AS cell,
		count(*),
		sum(status = 'done'), sum(status = 'oom'), sum(status = 'failed'),
		sum(CASE WHEN status = 'done' THEN mean_epoch_s END),
		sum(CASE WHEN status = 'done' THEN mean_epoch_s * mean_epoch_s END),
		count(CASE WHEN status = 'done' THEN mean_epoch_s END),
		min(CASE WHEN status = 'done' THEN mean_epoch_s END),
		max(CASE WHEN status = 'done' THEN mean_epoch_s END),
		avg(CASE WHEN status = 'done' THEN best_val_acc END),
		avg(CASE WHEN status = 'done' THEN test_acc END),
		avg(CASE WHEN status = 'done' THEN peak_cgroup_bytes END)
	FROM runs
	WHERE experiment_id = ? AND superseded = 0
	GROUP BY system, mem_limit_bytes, feature_dim, batch_size, model, fanout, dataset, cell
	ORDER BY system, mem_limit_bytes, feature_dim, batch_size, model, fanout, dataset, cell`

// Compare returns an experiment's cells ordered by variant, then memory
// limit, feature dimension, batch size, model, fanout, dataset and cell —
// the table of `outcore exp show`.
func (s *Store) Compare(ctx context.Context, experimentID int64) ([]Cell, error) {
	rows, err := s.r.QueryContext(ctx, compareSQL, experimentID)
	if err != nil {
		return nil, fmt.Errorf("compare experiment %d: %w", experimentID, err)
	}
	defer rows.Close()
	var out []Cell
	for rows.Next() {
		var c Cell
		var sum, sumsq, mn, mx, acc, test, peak sql.NullFloat64
		var n int
		if err := rows.Scan(&c.System, &c.MemLimitBytes, &c.FeatureDim, &c.BatchSize, &c.Model, &c.Fanout, &c.Dataset, &c.Cell,
			&c.Runs, &c.Done, &c.OOM, &c.Failed, &sum, &sumsq, &n, &mn, &mx, &acc, &test, &peak); err != nil {
			return nil, fmt.Errorf("compare experiment %d: %w", experimentID, err)
		}
		c.Other = c.Runs - c.Done - c.OOM - c.Failed
		if n > 0 && sum.Valid {
			mean := sum.Float64 / float64(n)
			c.MeanEpochS = &mean
			if n > 1 {
				v := (sumsq.Float64 - float64(n)*mean*mean) / float64(n-1)
				std := math.Sqrt(math.Max(v, 0))
				c.StdEpochS = &std
			}
		}
		c.MinEpochS, c.MaxEpochS = nf(mn), nf(mx)
		c.MeanBestValAcc, c.MeanTestAcc, c.MeanPeakCgroupBytes = nf(acc), nf(test), nf(peak)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("compare experiment %d: %w", experimentID, err)
	}
	return out, nil
}
