package store

import (
	"context"
	"database/sql"
	"fmt"

	"outcore/engine/metrics"
)

// Sample is one stored per-second sample of a run.
type Sample struct {
	RunID int64
	metrics.SampleRecord
}

const sampleInsertSQL = `
	INSERT OR REPLACE INTO samples(run_id, t, cpu_pct, iowait_pct, rss_bytes, cgroup_bytes, disk_read_mbps,
		gpu_util_pct, gpu_mem_bytes)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// InsertSamples stores samples of a run with one prepared statement
// (a sample at an already stored t replaces it).
func (t *Tx) InsertSamples(runID int64, samples []metrics.SampleRecord) error {
	if len(samples) == 0 {
		return nil
	}
	st, err := t.tx.PrepareContext(t.ctx, sampleInsertSQL)
	if err != nil {
		return fmt.Errorf("insert samples of run %d: %w", runID, err)
	}
	defer st.Close()
	for i := range samples {
		s := &samples[i]
		var gu sql.NullFloat64
		var gm sql.NullInt64
		if s.GPUUtil != nil {
			gu = sql.NullFloat64{Float64: *s.GPUUtil, Valid: true}
		}
		if s.GPUMemBytes != nil {
			gm = sql.NullInt64{Int64: *s.GPUMemBytes, Valid: true}
		}
		if _, err := st.ExecContext(t.ctx, runID, s.T, s.CPUPercent, s.IOWaitPercent, s.RSSBytes, s.CgroupBytes,
			s.DiskReadMBps, gu, gm); err != nil {
			return fmt.Errorf("insert sample t=%g of run %d: %w", s.T, runID, err)
		}
	}
	return nil
}

const sampleCols = `run_id, t, cpu_pct, iowait_pct, rss_bytes, cgroup_bytes, disk_read_mbps, gpu_util_pct, gpu_mem_bytes`

func scanSample(sc interface{ Scan(...any) error }) (Sample, error) {
	var s Sample
	var gu sql.NullFloat64
	var gm sql.NullInt64
	err := sc.Scan(&s.RunID, &s.T, &s.CPUPercent, &s.IOWaitPercent, &s.RSSBytes, &s.CgroupBytes, &s.DiskReadMBps, &gu, &gm)
	s.Type = metrics.TypeSample
	if gu.Valid {
		s.GPUUtil = &gu.Float64
	}
	if gm.Valid {
		s.GPUMemBytes = &gm.Int64
	}
	return s, err
}

// Samples returns a run's samples with fromT <= t < toT in time order
// (toT <= fromT means no upper bound), at most limit of them (0 = all).
func (s *Store) Samples(ctx context.Context, runID int64, fromT, toT float64, limit int) ([]Sample, error) {
	q := `SELECT ` + sampleCols + ` FROM samples WHERE run_id = ? AND t >= ?`
	args := []any{runID, fromT}
	if toT > fromT {
		q += ` AND t < ?`
		args = append(args, toT)
	}
	q += ` ORDER BY t`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("samples of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Sample
	for rows.Next() {
		smp, err := scanSample(rows)
		if err != nil {
			return nil, fmt.Errorf("samples of run %d: %w", runID, err)
		}
		out = append(out, smp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("samples of run %d: %w", runID, err)
	}
	return out, nil
}
