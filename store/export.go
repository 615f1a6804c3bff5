package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/metrics/fields"
)

// What ExportCSV exports: one row per run, per epoch or per sample.
const (
	ExportRuns    = "runs"
	ExportEpochs  = "epochs"
	ExportSamples = "samples"
)

// ExportKinds lists the values ExportCSV accepts for what.
var ExportKinds = []string{ExportRuns, ExportEpochs, ExportSamples}

// ExportCSV writes an experiment's runs, epochs or samples to w as tidy CSV:
// a header line, then one row per observation, each with a run_id column
// and the run's grid cell (system, mem_limit_bytes, feature_dim,
// batch_size, model, fanout, repeat, attempt, status) so the rows can be
// grouped without a join. Superseded attempts are included (status and
// attempt tell them apart).
//
// Rows stream from the database run by run in primary-key order, so memory
// stays constant whatever the experiment's size. Text cells that a
// spreadsheet would take for a formula (starting with = + - @ tab or CR)
// are prefixed with a single quote; numbers are written as numbers.
func (s *Store) ExportCSV(ctx context.Context, w io.Writer, experimentID int64, what string) error {
	if _, err := s.Experiment(ctx, experimentID); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := csv.NewWriter(bw)
	var err error
	switch what {
	case ExportRuns:
		err = s.exportRuns(ctx, cw, experimentID)
	case ExportEpochs:
		err = s.exportEpochs(ctx, cw, experimentID)
	case ExportSamples:
		err = s.exportSamples(ctx, cw, experimentID)
	default:
		return fmt.Errorf("export: unknown kind %q (want one of %s)", what, strings.Join(ExportKinds, ", "))
	}
	if err != nil {
		return fmt.Errorf("export %s of experiment %d: %w", what, experimentID, err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("export %s of experiment %d: %w", what, experimentID, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export %s of experiment %d: %w", what, experimentID, err)
	}
	return nil
}

// CSVSafe returns s escaped for spreadsheets: a cell starting with = + - @
// tab or carriage return gets a leading single quote (CSV injection),
// unless it is a list of plain numbers such as the fanout "-1,-1" or
// "-0.5", which a spreadsheet reads as data.
func CSVSafe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if isNumberList(s) {
			return s
		}
		return "'" + s
	}
	return s
}

// isNumberList reports whether s is one or more comma-separated decimal
// numbers ("-1,-1", "-0.5", "1e-3"): an optional minus, digits, an
// optional fraction and exponent, nothing else.
func isNumberList(s string) bool {
	for _, item := range strings.Split(s, ",") {
		i := 0
		if i < len(item) && item[i] == '-' {
			i++
		}
		digits := func() int {
			n := 0
			for i < len(item) && item[i] >= '0' && item[i] <= '9' {
				i++
				n++
			}
			return n
		}
		if digits() == 0 {
			return false
		}
		if i < len(item) && item[i] == '.' {
			i++
			if digits() == 0 {
				return false
			}
		}
		if i < len(item) && (item[i] == 'e' || item[i] == 'E') {
			i++
			if i < len(item) && (item[i] == '-' || item[i] == '+') {
				i++
			}
			if digits() == 0 {
				return false
			}
		}
		if i != len(item) {
			return false
		}
	}
	return true
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
func fmtI(v int64) string   { return strconv.FormatInt(v, 10) }

func fmtNF(v sql.NullFloat64) string {
	if !v.Valid {
		return ""
	}
	return fmtF(v.Float64)
}

// fmtPF writes an optional number ("" when absent: not measured).
func fmtPF(v *float64) string {
	if v == nil {
		return ""
	}
	return fmtF(*v)
}

func fmtNI(v sql.NullInt64) string {
	if !v.Valid {
		return ""
	}
	return fmtI(v.Int64)
}

func fmtTime(v sql.NullInt64) string {
	if !v.Valid || v.Int64 == 0 {
		return ""
	}
	return time.UnixMilli(v.Int64).UTC().Format(time.RFC3339Nano)
}

// cellCols are the columns that identify a run's grid cell in every export.
// compute is the run's compute mode (DESIGN §10); outside cpu its losses
// and accuracies are written "n/a".
var cellCols = []string{"run_id", "system", "dataset", "model", "mem_limit_bytes", "feature_dim", "batch_size", "fanout", "compute", "repeat", "attempt", "status"}

// ThisHost is the testbed of a run whose config names none: this host's
// own (engine/testbed.ThisHost).
const ThisHost = "this-host"

// runTestbedSQL is a run's testbed read from its config in SQL (ThisHost
// when the config names none).
const runTestbedSQL = `coalesce(nullif(CASE WHEN json_valid(config_json) THEN json_extract(config_json, '$.testbed') END, ''), '` + ThisHost + `')`

// Testbed is the testbed the run's config names (DESIGN §13), ThisHost
// when it names none.
func (r Run) Testbed() string {
	var c struct {
		Testbed string `json:"testbed"`
	}
	if json.Unmarshal(r.Config, &c) != nil || c.Testbed == "" {
		return ThisHost
	}
	return c.Testbed
}

// notMeasured is written in place of a loss or accuracy of a run that
// trained no model (compute none or model:PROFILE).
const notMeasured = "n/a"

// runCell is a run's identifying columns, already formatted.
type runCell struct {
	id      int64
	cells   []string
	trains  bool              // compute cpu: losses and accuracies are measurements
	testbed string            // the run's testbed (ThisHost when its config names none)
	axes    map[string]string // its cell on the grid's path axes ("options.window" → "4")
}

// axisKeys are the sorted path axes of runs' cells (the union: a grid's
// axes are the same for each of its runs).
func axisKeys(runs []runCell) []string {
	var keys []string
	for _, r := range runs {
		for k := range r.axes {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// axisValue is a path axis's value in a CSV cell: a JSON string as its
// text, anything else (a number, a list) as its JSON.
func axisValue(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	return string(raw)
}

// runCells lists an experiment's runs (every attempt) in id order with
// their cell columns; a run list is small (one row per run).
func (s *Store) runCells(ctx context.Context, experimentID int64) ([]runCell, error) {
	rows, err := s.r.QueryContext(ctx, `
		SELECT id, system, dataset, model, mem_limit_bytes, feature_dim, batch_size, fanout, compute, repeat, attempt, status,
			`+runTestbedSQL+`, `+runCellJSON+`
		FROM runs WHERE experiment_id = ? ORDER BY id`, experimentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []runCell
	for rows.Next() {
		var id, limit int64
		var dim, batch, rep, attempt int
		var system, dataset, model, fanout, compute, status, testbed, cell string
		if err := rows.Scan(&id, &system, &dataset, &model, &limit, &dim, &batch, &fanout, &compute, &rep, &attempt, &status, &testbed, &cell); err != nil {
			return nil, err
		}
		var axes map[string]string
		if cell != "" {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(cell), &raw); err != nil {
				return nil, fmt.Errorf("run %d: its cell %s: %w", id, cell, err)
			}
			axes = make(map[string]string, len(raw))
			for k, v := range raw {
				axes[k] = axisValue(v)
			}
		}
		out = append(out, runCell{id: id, trains: compute == ComputeCPU, testbed: testbed, axes: axes, cells: []string{
			fmtI(id), CSVSafe(system), CSVSafe(dataset), CSVSafe(model), fmtI(limit), strconv.Itoa(dim), strconv.Itoa(batch),
			CSVSafe(fanout), CSVSafe(compute), strconv.Itoa(rep), strconv.Itoa(attempt), status,
		}})
	}
	return out, rows.Err()
}

// runsHeadCols and runsTailCols are the runs CSV's columns before and after
// its measurements (fields.Runs, in order, after epochs_done). testbed is
// the host the run emulates (DESIGN §13; ThisHost for a config naming
// none), last so that no earlier column moves.
var (
	runsHeadCols = []string{"experiment_id", "seq", "superseded", "retry_of", "limit_enforced", "cgroup_limit_bytes", "limit_note",
		"cache_dropped", "io_backend", "outcore_version", "go_version", "exit_code", "signal", "error", "epochs_done"}
	runsTailCols = []string{"queued_at", "started_at", "ended_at", "executor", "job_id", "node", "host_json", "config_json", "cell_json", "testbed"}
)

func (s *Store) exportRuns(ctx context.Context, cw *csv.Writer, experimentID int64) error {
	header := append(append([]string{}, cellCols...), runsHeadCols...)
	measures := fields.Runs
	for _, f := range measures {
		header = append(header, f.Key)
	}
	header = append(header, runsTailCols...)
	if err := cw.Write(header); err != nil {
		return err
	}

	rows, err := s.r.QueryContext(ctx, `
		SELECT id, system, dataset, model, mem_limit_bytes, feature_dim, batch_size, fanout, compute, repeat, attempt, status,
			experiment_id, seq, superseded, retry_of, limit_enforced, limit_note, cache_dropped, io_backend,
			outcore_version, go_version, exit_code, signal, error, epochs_done, summary_json, queued_at, started_at, ended_at,
			executor, job_id, node, host_json, config_json, deviations_json, `+runCellJSON+`, `+runTestbedSQL+`
		FROM runs WHERE experiment_id = ? ORDER BY id`, experimentID)
	if err != nil {
		return err
	}
	defer rows.Close()
	rec := make([]string, 0, len(header))
	for rows.Next() {
		var deviations, summary []byte
		var id, limit, expID int64
		var dim, batch, rep, attempt, seq, epochs int
		var superseded, enforced, dropped bool
		var system, dataset, model, fanout, compute, tb, status, note, backend, ov, gv, sig, errMsg, host, config string
		var executor, jobID, node, cell string
		var retryOf, exit, queued, started, ended sql.NullInt64
		if err := rows.Scan(&id, &system, &dataset, &model, &limit, &dim, &batch, &fanout, &compute, &rep, &attempt, &status,
			&expID, &seq, &superseded, &retryOf, &enforced, &note, &dropped, &backend,
			&ov, &gv, &exit, &sig, &errMsg, &epochs, &summary, &queued, &started, &ended,
			&executor, &jobID, &node, &host, &config, &deviations, &cell, &tb); err != nil {
			return err
		}
		rec = append(rec[:0],
			fmtI(id), CSVSafe(system), CSVSafe(dataset), CSVSafe(model), fmtI(limit), strconv.Itoa(dim), strconv.Itoa(batch),
			CSVSafe(fanout), CSVSafe(compute), strconv.Itoa(rep), strconv.Itoa(attempt), status,
			fmtI(expID), strconv.Itoa(seq), strconv.Itoa(b2i(superseded)), fmtNI(retryOf), strconv.Itoa(b2i(enforced)),
			cgroupLimitCell(enforced, limit, deviations), CSVSafe(note), strconv.Itoa(b2i(dropped)), CSVSafe(backend), CSVSafe(ov), CSVSafe(gv), fmtNI(exit),
			CSVSafe(sig), CSVSafe(errMsg), strconv.Itoa(epochs))
		// the measurements, from the run's summary: empty where not
		// measured, "n/a" for the accuracies of a run that trained no model
		v := fields.ParseRunValues(summary)
		for _, f := range measures {
			rec = append(rec, f.Cell(v, compute == ComputeCPU, notMeasured))
		}
		rec = append(rec, fmtTime(queued), fmtTime(started), fmtTime(ended),
			CSVSafe(executor), CSVSafe(jobID), CSVSafe(node), CSVSafe(host), CSVSafe(config),
			CSVSafe(cell), CSVSafe(tb))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	return rows.Err()
}

// cgroupLimitCell is the CSV's cgroup_limit_bytes (enforcedLimit); empty
// where no limit was enforced.
func cgroupLimitCell(enforced bool, budget int64, deviations []byte) string {
	if lim := enforcedLimit(enforced, budget, deviations); lim > 0 {
		return fmtI(lim)
	}
	return ""
}

// jsonKeys returns the sorted distinct keys of an object of the records of
// an experiment's epochs (stage names, tier names, counter names).
func (s *Store) jsonKeys(ctx context.Context, experimentID int64, col string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `
		SELECT DISTINCT j.key FROM runs r JOIN epochs e ON e.run_id = r.id, json_each(e.record_json, '$.`+col+`') j
		WHERE r.experiment_id = ?`, experimentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, rows.Err()
}

func (s *Store) exportEpochs(ctx context.Context, cw *csv.Writer, experimentID int64) error {
	runs, err := s.runCells(ctx, experimentID)
	if err != nil {
		return err
	}
	stageKeys, err := s.jsonKeys(ctx, experimentID, "stages")
	if err != nil {
		return err
	}
	tierKeys, err := s.jsonKeys(ctx, experimentID, "tiers")
	if err != nil {
		return err
	}
	counterKeys, err := s.jsonKeys(ctx, experimentID, "counters")
	if err != nil {
		return err
	}
	// The measurements are engine/metrics/fields' columns, in order; a
	// record older than a field's metrics version has its cell empty, not
	// 0 (records before version 2 have their read_amplification, then
	// bytes_read / bytes_needed, in bytes_read_per_byte_needed only; DESIGN
	// §5), and a run that trained no model "n/a" for its losses and
	// accuracies.
	cols := fields.CSV()
	header := append(append([]string{}, cellCols...), "epoch", "warmup", "metrics_version")
	for _, f := range cols {
		header = append(header, f.Key)
	}
	for _, k := range stageKeys {
		header = append(header, "stage_"+strings.TrimSuffix(k, "_s")+"_s")
	}
	for _, k := range tierKeys {
		// the device tier is shown as ssd (metrics.TierLabel): "device"
		// means the GPU everywhere else
		header = append(header, "tier_"+metrics.TierLabel(k)+"_lookups", "tier_"+metrics.TierLabel(k)+"_hits")
	}
	for _, k := range counterKeys {
		header = append(header, "counter_"+k)
	}
	// Last, so that no earlier column moves: the run's testbed and its
	// value on each of the grid's path axes ("axis_options.window"), which
	// tell apart the epochs of cells that differ only there.
	axes := axisKeys(runs)
	header = append(header, "testbed")
	for _, k := range axes {
		header = append(header, "axis_"+k)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for _, rc := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		rows, err := s.r.QueryContext(ctx, `SELECT `+epochCols+` FROM epochs WHERE run_id = ? ORDER BY epoch`, rc.id)
		if err != nil {
			return err
		}
		for rows.Next() {
			e, err := scanEpoch(rows)
			if err != nil {
				rows.Close()
				return err
			}
			rec = rec[:0]
			rec = append(rec, rc.cells...)
			rec = append(rec, strconv.Itoa(e.EpochRecord.Epoch), strconv.Itoa(b2i(e.Warmup)), strconv.Itoa(e.MetricsVersion))
			for _, f := range cols {
				rec = append(rec, f.Cell(&e.EpochRecord, rc.trains, notMeasured))
			}
			for _, k := range stageKeys {
				if v, ok := e.Stages[k]; ok {
					rec = append(rec, fmtF(v))
				} else {
					rec = append(rec, "")
				}
			}
			for _, k := range tierKeys {
				if v, ok := e.Tiers[k]; ok {
					rec = append(rec, fmtI(v.Lookups), fmtI(v.Hits))
				} else {
					rec = append(rec, "", "")
				}
			}
			// the variant's own counters (GIDS's storage_MBps, ...); empty
			// where a run's variant does not count it
			for _, k := range counterKeys {
				if v, ok := e.Counters[k]; ok {
					rec = append(rec, fmtI(v))
				} else {
					rec = append(rec, "")
				}
			}
			rec = append(rec, CSVSafe(rc.testbed))
			for _, k := range axes {
				rec = append(rec, CSVSafe(rc.axes[k])) // empty: not on this run's cell
			}
			if err := cw.Write(rec); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) exportSamples(ctx context.Context, cw *csv.Writer, experimentID int64) error {
	runs, err := s.runCells(ctx, experimentID)
	if err != nil {
		return err
	}
	header := append(append([]string{}, cellCols...),
		"t", "cpu_pct", "iowait_pct", "rss_bytes", "cgroup_bytes", "disk_read_mbps", "gpu_util_pct", "gpu_mem_bytes",
		"host_load1", "host_others_cpu_pct", "host_steal_pct", "psi_cpu_pct", "psi_io_pct", "psi_memory_pct",
		"gpu_pcie_tx_mbps", "gpu_pcie_rx_mbps")
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, 0, len(header))
	for _, rc := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		rows, err := s.r.QueryContext(ctx, `
			SELECT t, cpu_pct, iowait_pct, rss_bytes, cgroup_bytes, disk_read_mbps, gpu_util_pct, gpu_mem_bytes,
				host_load1, host_others_cpu_pct, host_steal_pct, psi_cpu_pct, psi_io_pct, psi_memory_pct,
				gpu_pcie_tx_mbps, gpu_pcie_rx_mbps
			FROM samples WHERE run_id = ? ORDER BY t`, rc.id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var t, cpu, iow, disk float64
			var rss, cg int64
			var gu sql.NullFloat64
			var gm sql.NullInt64
			var hc hostCols
			var tx, rx sql.NullFloat64
			if err := rows.Scan(append(append([]any{&t, &cpu, &iow, &rss, &cg, &disk, &gu, &gm}, hc.dest()...), &tx, &rx)...); err != nil {
				rows.Close()
				return err
			}
			rec = rec[:0]
			rec = append(rec, rc.cells...)
			rec = append(rec, fmtF(t), fmtF(cpu), fmtF(iow), fmtI(rss), fmtI(cg), fmtF(disk), fmtNF(gu), fmtNI(gm))
			for _, h := range hc {
				rec = append(rec, fmtNF(h)) // empty: not recorded, or no /proc/pressure
			}
			rec = append(rec, fmtNF(tx), fmtNF(rx)) // empty: no GPU or not recorded
			if err := cw.Write(rec); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}
