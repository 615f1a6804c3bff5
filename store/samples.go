package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"outcore/engine/metrics"
)

// Sample is one stored per-second sample of a run.
type Sample struct {
	RunID int64
	metrics.SampleRecord
}

// sampleInsertRows is how many samples one INSERT statement carries:
// multi-row VALUES cut the per-row cost of the driver (17 parameters a row,
// 1700 a statement, under SQLite's limit of 32766).
const sampleInsertRows = 100

func sampleInsertSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT OR REPLACE INTO samples(run_id, t, cpu_pct, iowait_pct, rss_bytes, cgroup_bytes, disk_read_mbps,
		gpu_util_pct, gpu_mem_bytes, host_load1, host_others_cpu_pct, host_steal_pct, psi_cpu_pct, psi_io_pct, psi_memory_pct,
		gpu_pcie_tx_mbps, gpu_pcie_rx_mbps) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	}
	return b.String()
}

// InsertSamples stores samples of a run (a sample at an already stored t
// replaces it), 100 rows per prepared multi-row INSERT.
func (t *Tx) InsertSamples(runID int64, samples []metrics.SampleRecord) error {
	if len(samples) == 0 {
		return nil
	}
	var full *sql.Stmt
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	args := make([]any, 0, 17*sampleInsertRows)
	for start := 0; start < len(samples); start += sampleInsertRows {
		chunk := samples[start:min(start+sampleInsertRows, len(samples))]
		args = args[:0]
		for i := range chunk {
			s := &chunk[i]
			var gu sql.NullFloat64
			var gm sql.NullInt64
			if s.GPUUtil != nil {
				gu = sql.NullFloat64{Float64: *s.GPUUtil, Valid: true}
			}
			if s.GPUMemBytes != nil {
				gm = sql.NullInt64{Int64: *s.GPUMemBytes, Valid: true}
			}
			args = append(args, runID, s.T, s.CPUPercent, s.IOWaitPercent, s.RSSBytes, s.CgroupBytes, s.DiskReadMBps, gu, gm)
			args = append(args, hostArgs(s.Host)...)
			args = append(args, nullFloat(s.GPUPCIeTxMBps), nullFloat(s.GPUPCIeRxMBps))
		}
		var err error
		if len(chunk) == sampleInsertRows {
			if full == nil {
				if full, err = t.tx.PrepareContext(t.ctx, sampleInsertSQL(sampleInsertRows)); err != nil {
					return fmt.Errorf("insert samples of run %d: %w", runID, err)
				}
			}
			_, err = full.ExecContext(t.ctx, args...)
		} else {
			_, err = t.tx.ExecContext(t.ctx, sampleInsertSQL(len(chunk)), args...)
		}
		if err != nil {
			return fmt.Errorf("insert samples t=%g..%g of run %d: %w", chunk[0].T, chunk[len(chunk)-1].T, runID, err)
		}
	}
	return nil
}

// hostArgs are a sample's host-pressure columns (all NULL without one).
func hostArgs(h *metrics.HostPressure) []any {
	if h == nil {
		return []any{nil, nil, nil, nil, nil, nil}
	}
	opt := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return []any{h.Load1, h.OthersCPUPct, h.StealPct, opt(h.PSICPUPct), opt(h.PSIIOPct), opt(h.PSIMemoryPct)}
}

// hostCols holds the scanned host-pressure columns of a sample.
type hostCols [6]sql.NullFloat64

func (h *hostCols) dest() []any {
	return []any{&h[0], &h[1], &h[2], &h[3], &h[4], &h[5]}
}

// pressure is the sample's host pressure, nil when none was recorded.
func (h *hostCols) pressure() *metrics.HostPressure {
	if !h[0].Valid {
		return nil
	}
	p := &metrics.HostPressure{Load1: h[0].Float64, OthersCPUPct: h[1].Float64, StealPct: h[2].Float64}
	for i, dst := range []**float64{&p.PSICPUPct, &p.PSIIOPct, &p.PSIMemoryPct} {
		if h[3+i].Valid {
			v := h[3+i].Float64
			*dst = &v
		}
	}
	return p
}

const sampleCols = `run_id, t, cpu_pct, iowait_pct, rss_bytes, cgroup_bytes, disk_read_mbps, gpu_util_pct, gpu_mem_bytes,
	host_load1, host_others_cpu_pct, host_steal_pct, psi_cpu_pct, psi_io_pct, psi_memory_pct, gpu_pcie_tx_mbps, gpu_pcie_rx_mbps`

func scanSample(sc interface{ Scan(...any) error }) (Sample, error) {
	var s Sample
	var gu sql.NullFloat64
	var gm sql.NullInt64
	var hc hostCols
	var tx, rx sql.NullFloat64
	err := sc.Scan(append(append([]any{&s.RunID, &s.T, &s.CPUPercent, &s.IOWaitPercent, &s.RSSBytes, &s.CgroupBytes, &s.DiskReadMBps, &gu, &gm}, hc.dest()...), &tx, &rx)...)
	s.Type = metrics.TypeSample
	s.Host = hc.pressure()
	s.GPUPCIeTxMBps, s.GPUPCIeRxMBps = floatPtr(tx), floatPtr(rx)
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

// SampleSeries returns a run's samples with fromT <= t < toT (toT <= fromT:
// no upper bound) averaged into at most maxPoints buckets of equal width in
// t, in time order: what a chart of a long run needs (a 10-hour run has
// 36,000 samples). Each returned sample holds the bucket's mean of every
// field (GPU fields stay nil when no sample of the bucket had them) and
// the mean t. maxPoints <= 0 means 500.
func (s *Store) SampleSeries(ctx context.Context, runID int64, fromT, toT float64, maxPoints int) ([]Sample, error) {
	if maxPoints <= 0 {
		maxPoints = 500
	}
	lo, hi := fromT, toT
	if hi <= lo {
		var mx sql.NullFloat64
		if err := s.r.QueryRowContext(ctx, `SELECT max(t) FROM samples WHERE run_id = ? AND t >= ?`, runID, lo).Scan(&mx); err != nil {
			return nil, fmt.Errorf("samples of run %d: %w", runID, err)
		}
		if !mx.Valid {
			return nil, nil
		}
		hi = mx.Float64 + 1e-9
	}
	width := (hi - lo) / float64(maxPoints)
	if width <= 0 {
		width = 1
	}
	rows, err := s.r.QueryContext(ctx, `
		SELECT CAST((t - ?1) / ?2 AS INTEGER) AS b, avg(t), avg(cpu_pct), avg(iowait_pct), avg(rss_bytes), avg(cgroup_bytes),
			avg(disk_read_mbps), avg(gpu_util_pct), avg(gpu_mem_bytes),
			avg(host_load1), avg(host_others_cpu_pct), avg(host_steal_pct), avg(psi_cpu_pct), avg(psi_io_pct), avg(psi_memory_pct),
			avg(gpu_pcie_tx_mbps), avg(gpu_pcie_rx_mbps)
		FROM samples WHERE run_id = ?3 AND t >= ?1 AND t < ?4
		GROUP BY b ORDER BY b`, lo, width, runID, hi)
	if err != nil {
		return nil, fmt.Errorf("sample series of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Sample
	for rows.Next() {
		var b int64
		var rss, cg float64
		var gu, gm sql.NullFloat64
		var hc hostCols
		var tx, rx sql.NullFloat64
		smp := Sample{RunID: runID}
		smp.Type = metrics.TypeSample
		if err := rows.Scan(append(append([]any{&b, &smp.T, &smp.CPUPercent, &smp.IOWaitPercent, &rss, &cg, &smp.DiskReadMBps, &gu, &gm}, hc.dest()...), &tx, &rx)...); err != nil {
			return nil, fmt.Errorf("sample series of run %d: %w", runID, err)
		}
		smp.Host = hc.pressure()
		smp.GPUPCIeTxMBps, smp.GPUPCIeRxMBps = floatPtr(tx), floatPtr(rx)
		smp.RSSBytes, smp.CgroupBytes = int64(rss), int64(cg)
		if gu.Valid {
			v := gu.Float64
			smp.GPUUtil = &v
		}
		if gm.Valid {
			v := int64(gm.Float64)
			smp.GPUMemBytes = &v
		}
		out = append(out, smp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sample series of run %d: %w", runID, err)
	}
	return out, nil
}

// nullFloat is a nullable REAL column's value.
func nullFloat(v *float64) sql.NullFloat64 {
	if v == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *v, Valid: true}
}

// floatPtr is a nullable REAL column read back (nil for NULL).
func floatPtr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	f := v.Float64
	return &f
}
