package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"outcore/engine/accel"
	"outcore/engine/metrics"
	"outcore/engine/metrics/fields"
)

// Run is one child process of an experiment: one cell of its grid, one
// attempt. Fields set by the runner as the run goes are zero until then.
type Run struct {
	ID           int64
	ExperimentID int64
	Seq          int   // index of the cell in the experiment's expansion
	Attempt      int   // 1 for the first attempt; a retry adds one
	RetryOf      int64 // the run this one retries, 0 for a first attempt
	Superseded   bool  // a retry replaced this run
	QueuePos     int64 // global queue order, lower first
	Status       string
	// CancelRequested is set by Cancel for a running run; the process that
	// runs it sees the flag and stops the child.
	CancelRequested bool

	// The cell of the grid.
	System        string
	Dataset       string
	Model         string
	MemLimitBytes int64 // 0 = no limit
	FeatureDim    int
	BatchSize     int
	Fanout        string // e.g. "10,10,10"
	Repeat        int    // 0-based
	// Compute is the run's compute mode (DESIGN §10): "cpu", "none" or
	// "model:PROFILE". Outside cpu its losses and accuracies are n/a.
	Compute string
	Config  json.RawMessage
	// Cell is the run's cell on its grid's path axes (store/cell.go):
	// {"options.window":"4"}, "" when the grid has none. Read only.
	Cell string
	// IOFloorFills counts the times the I/O floor of some of the run's
	// epochs was filled in after they were stored (FillIOFloors): a digest
	// made before is stale (report.DigestCache compares it).
	IOFloorFills int

	// How it ran.
	LimitEnforced  bool
	LimitNote      string // the cgroup version, or why the limit was not enforced
	CgroupPath     string
	CacheDropped   bool // the dataset's pages were out of the page cache when the run started (evicted, or the whole cache dropped)
	Host           json.RawMessage
	IOBackend      string
	Devices        json.RawMessage // stage -> "cpu"/"gpu", from the child's start record
	Deviations     json.RawMessage // []string from the child's start record
	OutcoreVersion string
	GoVersion      string
	PID            int

	// Where it ran (docs/ARCHITECTURE.md "Executors"): Executor is
	// ExecutorLocal (a child of the queue process) or the name of another
	// executor (experiments/executors), whose state the store keeps as
	// opaque text: a job, JobID, on Node, last seen in state JobState.
	// Such a run's records may be ingested from RecordsFile, a file of the
	// run's directory, of which RecordsOffset bytes are committed.
	Executor      string
	JobID         string
	Node          string
	JobState      string
	RecordsFile   string
	RecordsOffset int64

	// How it ended.
	ExitCode   *int // nil while running and when killed by a signal
	Signal     string
	Error      string
	StderrTail string
	EpochsDone int
	// The run's measurements (engine/metrics/fields.Runs) are keys of
	// Summary; these are copies of some, for Go callers: MeanEpochS,
	// BestValAcc, TestAcc and PeakCgroupBytes are also SQL columns (kept
	// for filters, sorting and the comparison's aggregates), TotalS and
	// PeakRSSBytes are read from Summary.
	MeanEpochS      *float64 // over the non-warm-up epochs stored for the run
	BestValAcc      *float64
	TestAcc         *float64 // at the epoch of best val_acc
	TotalS          *float64
	PeakRSSBytes    *int64
	PeakCgroupBytes *int64
	// Summary is the run's summary record (summary_json): the child's
	// metrics.SummaryRecord when it wrote one, with the run's measurements
	// as the store decided them written over it (FinishRun); a run that
	// ended without the child's summary has those measurements only. Nil
	// until the run ends.
	Summary  json.RawMessage
	Progress json.RawMessage // the last progress record

	// Stall says, for a running run whose child writes no records while
	// its process lives, why as far as the runner could tell ("" for a
	// run that is not stalled).
	Stall string

	QueuedAt  time.Time
	StartedAt time.Time
	EndedAt   time.Time
}

var runCols = `id, experiment_id, seq, attempt, retry_of, superseded, queue_pos, status, cancel_requested,
	system, dataset, model, mem_limit_bytes, feature_dim, batch_size, fanout, repeat, config_json,
	limit_enforced, limit_note, cgroup_path, cache_dropped, host_json, io_backend, devices_json, deviations_json,
	outcore_version, go_version, pid,
	exit_code, signal, error, stderr_tail, epochs_done, mean_epoch_s, best_val_acc, test_acc,
	peak_cgroup_bytes, summary_json, progress_json,
	queued_at, started_at, ended_at,
	executor, job_id, node, job_state, records_file, records_offset, compute, io_floor_fills, ` + runStall + `, ` + runCellJSON

// runStall is a running run's Stall: the "stall" of its newest status
// event when that event is among its newest 64 events, else empty. A stalled
// run writes no records, so its stall event stays among its newest events
// (only the runner's own notes come after it) until the first record
// after the stall, which the runner precedes by a status event saying it
// runs again (experiments/stall.go); a run that is not stalled has its
// samples and progress, one a second or more, on top. The bound keeps
// the lookup to a few rows of the run_events_run index for a run with a
// long history of samples.
const runStall = `CASE WHEN status = 'running' THEN coalesce((
	SELECT json_extract(e.data_json, '$.stall') FROM run_events e
	WHERE e.run_id = runs.id AND e.kind = 'status' AND e.id >= coalesce(
		(SELECT id FROM run_events WHERE run_id = runs.id ORDER BY id DESC LIMIT 1 OFFSET 63), 0)
	ORDER BY e.id DESC LIMIT 1), '') ELSE '' END`

// runColsBrief is runCols with the large text columns read as empty
// (RunFilter.Brief): devices, deviations, standard error tail and
// progress; of the configuration only its train_max_nodes, of the summary only its memory account (the
// comparison's memory chart, DESIGN §2 "One memory contract") and its
// preparation time (the reproduction studies' "+ preprocess" sums).
// The summary keeps every run measurement (fields.Runs), made when asked
// (a test may register one).
func runColsBrief() string {
	return strings.NewReplacer(
		"config_json,", briefConfig+",", "devices_json,", "'{}',", "deviations_json,", "'[]',",
		"stderr_tail,", "'',", "summary_json,", briefSummary()+",", "progress_json,", "NULL,",
	).Replace(runCols)
}

// briefConfig is the configuration as a brief read has it: only its
// bound on training nodes per epoch ({"train_max_nodes": N}, null when
// unset), which the scale figure names (report.ScaleChart), and its
// testbed (Run.Testbed; absent when unset).
const briefConfig = `CASE WHEN json_valid(config_json)
	THEN json_patch(json_object('train_max_nodes', json_extract(config_json, '$.train_max_nodes')),
		json_object('testbed', json_extract(config_json, '$.testbed'))) ELSE '{}' END`

// briefSummary is the summary as a brief read has it: its memory account
// and its measurements (fields.Runs; prepare_s is one), read with ->
// so that a number keeps its text (json_extract's real keeps 15 digits) ({"memory": ..., "prepare_s": ..., ...},
// absent fields left out), NULL without a summary.
func briefSummary() string {
	var b strings.Builder
	b.WriteString(`CASE WHEN json_valid(summary_json) THEN json_patch('{}', json_object('memory', json(json_extract(summary_json, '$.memory'))`)
	for _, f := range fields.Runs {
		fmt.Fprintf(&b, `, '%[1]s', summary_json -> '$.%[1]s'`, f.Key)
	}
	b.WriteString(`)) END`)
	return b.String()
}

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var retryOf, exitCode, peakCG, queued, started, ended sql.NullInt64
	var mean, best, test sql.NullFloat64
	var config, host, devices, deviations string
	var summary, progress sql.NullString
	err := sc.Scan(&r.ID, &r.ExperimentID, &r.Seq, &r.Attempt, &retryOf, &r.Superseded, &r.QueuePos, &r.Status, &r.CancelRequested,
		&r.System, &r.Dataset, &r.Model, &r.MemLimitBytes, &r.FeatureDim, &r.BatchSize, &r.Fanout, &r.Repeat, &config,
		&r.LimitEnforced, &r.LimitNote, &r.CgroupPath, &r.CacheDropped, &host, &r.IOBackend, &devices, &deviations,
		&r.OutcoreVersion, &r.GoVersion, &r.PID,
		&exitCode, &r.Signal, &r.Error, &r.StderrTail, &r.EpochsDone, &mean, &best, &test,
		&peakCG, &summary, &progress,
		&queued, &started, &ended,
		&r.Executor, &r.JobID, &r.Node, &r.JobState, &r.RecordsFile, &r.RecordsOffset, &r.Compute, &r.IOFloorFills, &r.Stall, &r.Cell)
	if err != nil {
		return r, err
	}
	r.RetryOf = retryOf.Int64
	if exitCode.Valid {
		v := int(exitCode.Int64)
		r.ExitCode = &v
	}
	r.MeanEpochS, r.BestValAcc, r.TestAcc, r.PeakCgroupBytes = nf(mean), nf(best), nf(test), ni(peakCG)
	r.Config, r.Host = json.RawMessage(config), json.RawMessage(host)
	r.Devices, r.Deviations = json.RawMessage(devices), json.RawMessage(deviations)
	if summary.Valid {
		r.Summary = json.RawMessage(summary.String)
		v := fields.ParseRunValues(r.Summary)
		r.TotalS, r.PeakRSSBytes = runFloat(v, "total_s"), runInt(v, "peak_rss_bytes")
	}
	if progress.Valid {
		r.Progress = json.RawMessage(progress.String)
	}
	r.QueuedAt, r.StartedAt, r.EndedAt = fromMS(queued), fromMS(started), fromMS(ended)
	return r, nil
}

// Measures are the run's measurements (fields.Runs) as its summary has them.
func (r *Run) Measures() fields.RunValues { return fields.ParseRunValues(r.Summary) }

// runFloat and runInt read a declared run measurement (nil: not measured).
func runFloat(v fields.RunValues, key string) *float64 {
	f, ok := fields.FindRun(key)
	if !ok {
		return nil
	}
	x, ok := f.Value(v)
	if !ok {
		return nil
	}
	return &x
}

func runInt(v fields.RunValues, key string) *int64 {
	x := runFloat(v, key)
	if x == nil {
		return nil
	}
	n := int64(*x)
	return &n
}

func nf(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}

func ni(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func jsonOr(b json.RawMessage, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// State is the status a run is shown with: its status, but stalled
// (StatusStalled) for a running run with a Stall.
func (r *Run) State() string {
	if r.Status == StatusRunning && r.Stall != "" {
		return StatusStalled
	}
	return r.Status
}

// ComputeCPU is the compute mode of a run that trains on the CPU (the
// default, and every run stored before compute modes existed).
const ComputeCPU = "cpu"

// Trains reports whether the run trained a model: its losses and
// accuracies are measurements (compute mode cpu).
func (r *Run) Trains() bool { return r.Compute == "" || r.Compute == ComputeCPU }

// InsertRun queues r at the end of the queue: it sets r.ID, r.QueuePos,
// r.Status (queued) and r.QueuedAt. r.Attempt defaults to 1.
func (t *Tx) InsertRun(r *Run) error {
	if r.Attempt == 0 {
		r.Attempt = 1
	}
	if r.Executor == "" {
		r.Executor = ExecutorLocal
	}
	if r.Compute == "" {
		r.Compute = ComputeCPU
	}
	if err := t.tx.QueryRowContext(t.ctx, `SELECT coalesce(max(queue_pos), 0) + 1 FROM runs`).Scan(&r.QueuePos); err != nil {
		return fmt.Errorf("insert run: queue position: %w", err)
	}
	r.Status = StatusQueued
	r.QueuedAt = time.UnixMilli(ms(t.now))
	var retryOf sql.NullInt64
	if r.RetryOf != 0 {
		retryOf = sql.NullInt64{Int64: r.RetryOf, Valid: true}
	}
	res, err := t.tx.ExecContext(t.ctx, `
		INSERT INTO runs(experiment_id, seq, attempt, retry_of, queue_pos, status,
			system, dataset, model, mem_limit_bytes, feature_dim, batch_size, fanout, repeat, config_json, queued_at, executor, compute)
		VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ExperimentID, r.Seq, r.Attempt, retryOf, r.QueuePos,
		r.System, r.Dataset, r.Model, r.MemLimitBytes, r.FeatureDim, r.BatchSize, r.Fanout, r.Repeat,
		jsonOr(r.Config, "{}"), ms(r.QueuedAt), r.Executor, r.Compute)
	if err != nil {
		return fmt.Errorf("insert run: %w", err)
	}
	r.ID, err = res.LastInsertId()
	if err != nil {
		return fmt.Errorf("insert run: %w", err)
	}
	return nil
}

// Run reads one run inside the transaction.
func (t *Tx) Run(id int64) (Run, error) {
	r, err := scanRun(t.tx.QueryRowContext(t.ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("run %d: %w", id, err)
	}
	return r, nil
}

// NextQueued returns the queued run that comes first in the queue, and
// false when none is queued.
func (t *Tx) NextQueued() (Run, bool, error) {
	return t.NextQueuedFor(nil)
}

// NextQueuedFor returns the first queued run of one of the executors
// (nil: any), and false when none is queued.
func (t *Tx) NextQueuedFor(executors []string) (Run, bool, error) {
	q := `SELECT ` + runCols + ` FROM runs WHERE status = 'queued'`
	var args []any
	if executors != nil {
		if len(executors) == 0 {
			return Run{}, false, nil
		}
		q += ` AND executor IN (?` + strings.Repeat(", ?", len(executors)-1) + `)`
		for _, e := range executors {
			args = append(args, e)
		}
	}
	r, err := scanRun(t.tx.QueryRowContext(t.ctx, q+` ORDER BY queue_pos LIMIT 1`, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("next queued run: %w", err)
	}
	return r, true, nil
}

// RunStart is what the runner knows when it starts a run's child.
type RunStart struct {
	PID            int
	LimitEnforced  bool
	LimitNote      string
	CgroupPath     string
	CacheDropped   bool
	Host           json.RawMessage
	OutcoreVersion string
	GoVersion      string
}

// ClaimRun moves a queued run to running (started now). It returns false,
// and changes nothing, when the run is no longer queued.
func (t *Tx) ClaimRun(id int64) (bool, error) {
	res, err := t.tx.ExecContext(t.ctx,
		`UPDATE runs SET status = 'running', started_at = ?, cancel_requested = 0 WHERE id = ? AND status = 'queued'`,
		ms(t.now), id)
	if err != nil {
		return false, fmt.Errorf("claim run %d: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SetRunStarted records how a running run's child was started.
func (t *Tx) SetRunStarted(id int64, s RunStart) error {
	_, err := t.tx.ExecContext(t.ctx, `
		UPDATE runs SET pid = ?, limit_enforced = ?, limit_note = ?, cgroup_path = ?, cache_dropped = ?,
			host_json = ?, outcore_version = ?, go_version = ?
		WHERE id = ?`,
		s.PID, b2i(s.LimitEnforced), s.LimitNote, s.CgroupPath, b2i(s.CacheDropped),
		jsonOr(s.Host, "{}"), s.OutcoreVersion, s.GoVersion, id)
	if err != nil {
		return fmt.Errorf("record start of run %d: %w", id, err)
	}
	return nil
}

// ApplyStartRecord stores what the child reported in its start record: the
// I/O backend, which device ran each stage, the deviations from its paper,
// the child's own version when it reported one, and host (the host facts
// to keep, when not empty).
func (t *Tx) ApplyStartRecord(id int64, rec metrics.StartRecord, host json.RawMessage) error {
	devices, err := json.Marshal(rec.Devices)
	if err != nil {
		return fmt.Errorf("run %d start record: %w", id, err)
	}
	if rec.Devices == nil {
		devices = []byte("{}")
	}
	deviations, err := json.Marshal(rec.Deviations)
	if err != nil {
		return fmt.Errorf("run %d start record: %w", id, err)
	}
	if rec.Deviations == nil {
		deviations = []byte("[]")
	}
	// The compute mode the child ran, from its configuration as applied
	// (a paper's testbed maps an empty one to its GPU's model:): what the
	// run did, over what it was queued with.
	var ran struct {
		Compute string `json:"compute"`
	}
	if len(rec.Config) > 0 && json.Unmarshal(rec.Config, &ran) == nil && ran.Compute != "" {
		if m, err := accel.ParseMode(ran.Compute); err == nil {
			ran.Compute = m.String()
		} else {
			ran.Compute = ""
		}
	}
	_, err = t.tx.ExecContext(t.ctx, `
		UPDATE runs SET io_backend = ?, devices_json = ?, deviations_json = ?,
			outcore_version = CASE WHEN ? <> '' THEN ? ELSE outcore_version END,
			host_json = CASE WHEN ? <> '' THEN ? ELSE host_json END,
			compute = CASE WHEN ? <> '' THEN ? ELSE compute END
		WHERE id = ?`,
		rec.IOBackend, string(devices), string(deviations), rec.Host.Version, rec.Host.Version,
		string(host), string(host), ran.Compute, ran.Compute, id)
	if err != nil {
		return fmt.Errorf("run %d start record: %w", id, err)
	}
	return nil
}

// SetDeviations replaces a run's list of deviations from its paper (the
// summary record's complete list).
func (t *Tx) SetDeviations(id int64, deviations []string) error {
	b, err := json.Marshal(deviations)
	if err != nil {
		return fmt.Errorf("run %d deviations: %w", id, err)
	}
	if deviations == nil {
		b = []byte("[]")
	}
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET deviations_json = ? WHERE id = ?`, string(b), id); err != nil {
		return fmt.Errorf("run %d deviations: %w", id, err)
	}
	return nil
}

// SetProgress stores a running run's last progress record.
func (t *Tx) SetProgress(id int64, progress json.RawMessage) error {
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET progress_json = ? WHERE id = ?`, string(progress), id); err != nil {
		return fmt.Errorf("run %d progress: %w", id, err)
	}
	return nil
}

// RunEnd is how a run ended.
type RunEnd struct {
	Status          string // an outcome
	ExitCode        *int
	Signal          string
	Error           string
	StderrTail      string
	Summary         json.RawMessage // the child's summary record, nil without one
	TotalS          float64
	PeakRSSBytes    int64 // 0 = unknown
	PeakCgroupBytes int64 // 0 = unknown
}

// FinishRun records a running run's outcome. The per-run aggregates
// (epochs_done, mean_epoch_s over non-warm-up epochs, best_val_acc and the
// test_acc at that epoch) are computed from the epochs stored for the run,
// so they agree with the epochs table whatever the child's summary says;
// a run that trained no model (compute other than cpu) has none (NULL).
// It returns false, and changes nothing, when the run is not running.
func (t *Tx) FinishRun(id int64, e RunEnd) (bool, error) {
	if !Finished(e.Status) {
		return false, fmt.Errorf("finish run %d: %q is not an outcome", id, e.Status)
	}
	var exit sql.NullInt64
	if e.ExitCode != nil {
		exit = sql.NullInt64{Int64: int64(*e.ExitCode), Valid: true}
	}
	var summary sql.NullString
	if len(e.Summary) > 0 {
		summary = sql.NullString{String: string(e.Summary), Valid: true}
	}
	// the runner's measurements, written over the child's summary (a null
	// removes the key: 0 bytes is unknown)
	patch, err := json.Marshal(struct {
		TotalS          float64 `json:"total_s"`
		PeakRSSBytes    *int64  `json:"peak_rss_bytes"`
		PeakCgroupBytes *int64  `json:"peak_cgroup_bytes"`
	}{e.TotalS, nonZero(e.PeakRSSBytes), nonZero(e.PeakCgroupBytes)})
	if err != nil {
		return false, fmt.Errorf("finish run %d: %w", id, err)
	}
	res, err := t.tx.ExecContext(t.ctx, `
		UPDATE runs SET status = ?, exit_code = ?, signal = ?, error = ?, stderr_tail = ?,
			summary_json = `+patchSummary(`?`, `?`)+`,
			peak_cgroup_bytes = nullif(?, 0), ended_at = ?, pid = 0
		WHERE id = ? AND status = 'running'`,
		e.Status, exit, e.Signal, e.Error, e.StderrTail, summary, summary, string(patch),
		e.PeakCgroupBytes, ms(t.now), id)
	if err != nil {
		return false, fmt.Errorf("finish run %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if err := t.refreshAggregates(id); err != nil {
		return false, err
	}
	return true, nil
}

// refreshAggregates recomputes a run's per-run aggregates from its epochs'
// records (decoded here: SQLite's reading of a JSON number may be an ulp
// off the record's).
func (t *Tx) refreshAggregates(id int64) error {
	var compute string
	if err := t.tx.QueryRowContext(t.ctx, `SELECT compute FROM runs WHERE id = ?`, id).Scan(&compute); err != nil {
		return fmt.Errorf("run %d aggregates: %w", id, err)
	}
	rows, err := t.tx.QueryContext(t.ctx, `SELECT `+epochCols+` FROM epochs WHERE run_id = ? ORDER BY epoch`, id)
	if err != nil {
		return fmt.Errorf("run %d aggregates: %w", id, err)
	}
	var eps []metrics.EpochRecord
	for rows.Next() {
		e, err := scanEpoch(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("run %d aggregates: %w", id, err)
		}
		eps = append(eps, e.EpochRecord)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("run %d aggregates: %w", id, err)
	}
	a := aggregatesOf(eps, compute == ComputeCPU)
	patch, err := json.Marshal(struct {
		MeanEpochS *float64 `json:"mean_epoch_s"`
		BestValAcc *float64 `json:"best_val_acc"`
		TestAcc    *float64 `json:"test_acc"`
	}{a.MeanEpochS, a.BestValAcc, a.TestAcc})
	if err != nil {
		return fmt.Errorf("run %d aggregates: %w", id, err)
	}
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET epochs_done = ?, mean_epoch_s = ?, best_val_acc = ?, test_acc = ?,
		summary_json = `+patchSummary(`summary_json`, `summary_json`)+` WHERE id = ?`,
		len(eps), a.MeanEpochS, a.BestValAcc, a.TestAcc, string(patch), id); err != nil {
		return fmt.Errorf("run %d aggregates: %w", id, err)
	}
	return nil
}

// patchSummary is the SQL of a summary (the expression a, repeated in b)
// with a JSON patch, the next argument, written over it: an invalid or
// absent summary is patched as {}, and a patch that leaves {} leaves NULL
// (no summary). json_patch keeps the patch's numbers as Go wrote them.
func patchSummary(a, b string) string {
	return `nullif(json_patch(CASE WHEN json_valid(` + a + `) THEN ` + b + ` ELSE '{}' END, ?), '{}')`
}

func nonZero(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

// aggregates are a run's per-run aggregates of its epochs (nil: none).
type aggregates struct {
	MeanEpochS *float64 // over the non-warm-up epochs
	BestValAcc *float64 // the best val_acc, for a run that trains
	TestAcc    *float64 // test_acc at the first epoch of the best val_acc
}

// aggregatesOf computes a run's aggregates from its epochs in order;
// trains is false for a run that trained no model (its accuracies are
// none). The mean is a compensated (Neumaier) sum, as SQLite's avg is.
func aggregatesOf(eps []metrics.EpochRecord, trains bool) aggregates {
	var a aggregates
	var sum, comp float64
	n := 0
	for _, e := range eps {
		if !e.Warmup {
			t := sum + e.EpochS
			if math.Abs(sum) >= math.Abs(e.EpochS) {
				comp += (sum - t) + e.EpochS
			} else {
				comp += (e.EpochS - t) + sum
			}
			sum = t
			n++
		}
	}
	if n > 0 {
		m := (sum + comp) / float64(n)
		a.MeanEpochS = &m
	}
	if trains && len(eps) > 0 {
		best := 0
		for i, e := range eps {
			if e.ValAcc > eps[best].ValAcc {
				best = i
			}
		}
		v, t := eps[best].ValAcc, eps[best].TestAcc
		a.BestValAcc, a.TestAcc = &v, &t
	}
	return a
}

// CancelQueued marks a queued run cancelled. It returns false when the run
// was not queued.
func (t *Tx) CancelQueued(id int64) (bool, error) {
	res, err := t.tx.ExecContext(t.ctx,
		`UPDATE runs SET status = 'cancelled', ended_at = ?, error = 'cancelled before it started' WHERE id = ? AND status = 'queued'`,
		ms(t.now), id)
	if err != nil {
		return false, fmt.Errorf("cancel run %d: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// RequestCancel flags a running run for cancellation. It returns false when
// the run was not running.
func (t *Tx) RequestCancel(id int64) (bool, error) {
	res, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET cancel_requested = 1 WHERE id = ? AND status = 'running'`, id)
	if err != nil {
		return false, fmt.Errorf("cancel run %d: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// MarkInterrupted ends every local run left running (by a server that
// stopped without finishing them) as interrupted and returns them as they
// were. Runs of other executors outlive the server (a job goes on)
// and are picked up again by the next queue process instead. Call it only
// while holding the queue: a running run of a live server would be marked
// too.
func (t *Tx) MarkInterrupted() ([]Run, error) {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT `+runCols+` FROM runs WHERE status = 'running' AND executor = 'local' ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("find interrupted runs: %w", err)
	}
	var runs []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("find interrupted runs: %w", err)
		}
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find interrupted runs: %w", err)
	}
	for _, r := range runs {
		if _, err := t.tx.ExecContext(t.ctx, `
			UPDATE runs SET status = 'interrupted', ended_at = ?, pid = 0,
				error = 'the server stopped while the run was running'
			WHERE id = ?`, ms(t.now), r.ID); err != nil {
			return nil, fmt.Errorf("mark run %d interrupted: %w", r.ID, err)
		}
		if err := t.refreshAggregates(r.ID); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// RetryRun queues a new attempt of a finished run: a copy of its cell and
// config with attempt+1, at the end of the queue. The old run is marked
// superseded (it keeps its epochs and samples). The error wraps ErrConflict
// when the run has not finished or was already retried, ErrNotFound when
// there is no such run.
func (t *Tx) RetryRun(id int64) (Run, error) {
	old, err := t.Run(id)
	if err != nil {
		return Run{}, fmt.Errorf("retry: %w", err)
	}
	if !Finished(old.Status) {
		return Run{}, fmt.Errorf("retry run %d: it is %s: %w", id, old.Status, ErrConflict)
	}
	if old.Superseded {
		return Run{}, fmt.Errorf("retry run %d: already retried (retry the newest attempt): %w", id, ErrConflict)
	}
	nr := Run{
		ExperimentID: old.ExperimentID, Seq: old.Seq, Attempt: old.Attempt + 1, RetryOf: old.ID,
		System: old.System, Dataset: old.Dataset, Model: old.Model, MemLimitBytes: old.MemLimitBytes,
		FeatureDim: old.FeatureDim, BatchSize: old.BatchSize, Fanout: old.Fanout, Repeat: old.Repeat,
		Config: old.Config, Executor: old.Executor, Compute: old.Compute,
	}
	if err := t.InsertRun(&nr); err != nil {
		return Run{}, fmt.Errorf("retry run %d: %w", id, err)
	}
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET superseded = 1 WHERE id = ?`, id); err != nil {
		return Run{}, fmt.Errorf("retry run %d: %w", id, err)
	}
	return nr, nil
}

// Run returns one run; the error wraps ErrNotFound when there is none.
func (s *Store) Run(ctx context.Context, id int64) (Run, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("run %d: %w", id, err)
	}
	return r, nil
}

// RunFilter selects runs for Runs. Zero fields select everything.
type RunFilter struct {
	ExperimentID int64    // 0 = every experiment
	Statuses     []string // nil = any status
	Current      bool     // only runs not superseded by a retry
	Conds        []Cond   // every condition must hold (conds.go)
	// Brief leaves out the large text columns (runColsBrief): for lists
	// that show or chart runs by their cell and outcome, a thousand at a time.
	Brief bool
}

// Runs returns the runs a filter selects, in experiment order, then cell
// order (seq), then attempt.
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]Run, error) {
	var where []string
	var args []any
	if f.ExperimentID != 0 {
		where = append(where, "experiment_id = ?")
		args = append(args, f.ExperimentID)
	}
	if f.Current {
		where = append(where, "superseded = 0")
	}
	if len(f.Statuses) > 0 {
		where = append(where, "status IN (?"+strings.Repeat(", ?", len(f.Statuses)-1)+")")
		for _, st := range f.Statuses {
			args = append(args, st)
		}
	}
	cw, cargs, err := condsSQL(f.Conds)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	where, args = append(where, cw...), append(args, cargs...)
	cols := runCols
	if f.Brief {
		cols = runColsBrief()
	}
	q := `SELECT ` + cols + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY experiment_id, seq, attempt"
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// CancelRequested returns the ids of running runs flagged for cancellation
// (by this or another process).
func (s *Store) CancelRequested(ctx context.Context) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM runs WHERE status = 'running' AND cancel_requested = 1`)
	if err != nil {
		return nil, fmt.Errorf("cancel requests: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("cancel requests: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// QueuedCount returns how many runs wait in the queue.
func (s *Store) QueuedCount(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE status = 'queued'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count queued runs: %w", err)
	}
	return n, nil
}

// cgroupLimitRE finds the cgroup limit in force in a deviation of
// something held beside the budget (engine/system/kit: "... the cgroup
// limit is N MiB").
var cgroupLimitRE = regexp.MustCompile(`the cgroup limit is (\d+) MiB`)

// CgroupLimit is the limit the run's cgroup had in force once it held its
// model step or GPU tiers beside its budget, as its deviations state it
// (the largest they name); 0 when they name none (the limit was the
// budget).
func (r Run) CgroupLimit() int64 { return cgroupLimitOf(r.Deviations) }

// EnforcedLimit is the limit the run's cgroup had in force: its budget
// raised by what it held beside it (CgroupLimit), else the budget; 0 where
// no limit was enforced. The runs CSV's cgroup_limit_bytes and exp show's
// CGROUP_LIMIT.
func (r Run) EnforcedLimit() int64 {
	return enforcedLimit(r.LimitEnforced, r.MemLimitBytes, r.Deviations)
}

func enforcedLimit(enforced bool, budget int64, deviations []byte) int64 {
	if !enforced || budget <= 0 {
		return 0
	}
	return max(budget, cgroupLimitOf(deviations))
}

func cgroupLimitOf(deviations []byte) int64 {
	var devs []string
	if json.Unmarshal(deviations, &devs) != nil {
		return 0
	}
	var lim int64
	for _, d := range devs {
		for _, m := range cgroupLimitRE.FindAllStringSubmatch(d, -1) {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				lim = max(lim, n<<20)
			}
		}
	}
	return lim
}
