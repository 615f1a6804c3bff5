package executors

// The seam between an executor and the queue that runs it: the queue
// (package experiments' Manager) is the Host, each run it hands over comes
// with a Run that says whether it is asked to stop, the run's records go
// to the queue's Ingester, and the executor returns an outcome.Outcome
// that the queue records once, with retry. The executor reaches no field
// of the queue.

import (
	"context"
	"encoding/json"
	"time"

	"outcore/engine/metrics"
	"outcore/experiments/outcome"
	"outcore/store"
)

// Config is what an executor is given once: the queue's data directory,
// the child it runs (an outcore binary and its arguments: `train
// --config`, or the tests' fake child), the environment of the runs, the
// executor's own options (what its flags gave, Registration.Flags; nil:
// its defaults) and the version recorded with each run.
type Config struct {
	DataDir string
	Binary  string
	Args    []string
	Env     []string
	Options any
	Version string
}

// Executor runs the runs the queue claims for it.
type Executor interface {
	// Capacity is how many runs it may have in flight.
	Capacity() int
	// Execute drives a claimed run (status running) to its outcome and
	// returns it, for the queue to record. When ctx ends first, the run
	// may be left running outside this process (outcome.Outcome.Left),
	// for the next queue process to pick up (PickUp).
	Execute(ctx context.Context, r store.Run, run Run) outcome.Outcome
	// PickUp takes over a run of this executor that a stopped queue
	// process left running: it returns the run to Execute again (its job
	// facts completed) with the message of the event that says so, or,
	// when the run cannot go on, the end to record.
	PickUp(ctx context.Context, r store.Run) (again store.Run, msg string, end *store.RunEnd)
	// CheckGrid checks, at creation, a grid's options block for this
	// executor (the grid's key named after it) against this queue's own
	// options; the error lists grid problems naming the fields.
	CheckGrid(block json.RawMessage) error
}

// Host is what an executor asks of the queue that runs it.
type Host interface {
	// Experiment returns an experiment (its grid's options block).
	Experiment(ctx context.Context, id int64) (store.Experiment, error)
	// EnsureDataset makes the run's dataset when it is a derived one that
	// does not exist yet.
	EnsureDataset(ctx context.Context, r store.Run) error
	// FreshRunDir creates the run's directory, empty; RunDir names it.
	FreshRunDir(r store.Run) (string, error)
	RunDir(id int64) string
	// RecordSubmitted records a run's job (r.JobID, its state), its start
	// facts and its status event saying msg, retried until it commits.
	RecordSubmitted(ctx context.Context, r store.Run, started store.RunStart, msg string) error
	// RecordsIngester returns the ingester of a run whose records the
	// executor reads itself: position names the records file and the
	// offset after the last line handed over (committed with what it
	// stored), limit decides from the start record whether the memory
	// limit was enforced, and why.
	RecordsIngester(r store.Run, position func() (string, int64), limit func(metrics.StartRecord) (bool, string)) Ingester
	Logf(format string, a ...any)
}

// Ingester stores a run's records as the executor hands them over, in
// file order, each committed with its file offset.
type Ingester interface {
	Feed(line []byte)
	// Flush commits what was fed (retried behind earlier writes).
	Flush()
	// Note adds an event to the run.
	Note(level, msg string)
	// JobState mirrors the job's state and node into the run, with an
	// event saying msg.
	JobState(jobID, node, state, msg string)
	// NewExecution starts another execution's records file (offset 0);
	// requeued: the one before did not finish, its epochs are discarded.
	NewExecution(requeued bool, msg string)
	// ResumeSummary sets the summary record committed before the
	// ingester took over (a run picked up again past it).
	ResumeSummary(sum *metrics.SummaryRecord, raw json.RawMessage)
	// SummaryOutcome is the outcome and error of the summary record seen
	// ("" without one).
	SummaryOutcome() (outcome, errMsg string)
	// Settle waits until every record fed is stored; false when stop
	// ends first.
	Settle(stop context.Context) bool
	Result() outcome.Ingest
}

// StopReason says why the queue asks a run to stop.
type StopReason int

// Stop reasons.
const (
	StopNone     StopReason = iota
	StopCancel              // a user cancelled the run: its job is cancelled, outcome cancelled
	StopShutdown            // the queue process is stopping: a job outside it goes on
)

// Run is a run as the queue drives it.
type Run interface {
	// Stopping is closed when the run is asked to stop.
	Stopping() <-chan struct{}
	StopReason() StopReason
	// StoppedEnd is the outcome of a run stopped before its job was
	// submitted (ok false when it is not stopped).
	StoppedEnd(start time.Time) (end store.RunEnd, ok bool)
}
