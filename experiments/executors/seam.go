package executors

// The seam between an executor and the queue that runs it: the queue
// (package experiments' Manager) is the Host. An executor launches a
// claimed run and hands back its Job; the queue owns the one loop that
// follows every job whatever its executor: it reads the job's records
// (Follow), ingests them, asks the job to stop when the run is cancelled,
// waits for its end (Wait) and decides the run's outcome from the facts
// the job reports (Exit) and what its records said, then records it once,
// with retry. The executor reaches no field of the queue.

import (
	"context"
	"encoding/json"
	"time"

	"outcore/engine/metrics"
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
	// Launch prepares and starts a claimed run (status running) and
	// returns its job, or, when the run could not start (it was stopped
	// first, its dataset or its submission failed), the end to record.
	Launch(ctx context.Context, r store.Run, run Run) (Job, *store.RunEnd)
	// PickUp takes over a run of this executor that a stopped queue
	// process left running: it returns the run's job (its facts in
	// Job.Run) with the message of the event that says so, or, when the
	// run cannot go on, the end to record.
	PickUp(ctx context.Context, r store.Run) (job Job, msg string, end *store.RunEnd)
	// CheckGrid checks, at creation, a grid's options block for this
	// executor (the grid's key named after it) against this queue's own
	// options; the error lists grid problems naming the fields.
	CheckGrid(block json.RawMessage) error
}

// Job is a launched run as its executor runs it: a child process of the
// queue, a job of a cluster's scheduler. The queue's loop calls its
// methods from one goroutine, except Wake.
type Job interface {
	// Run is the run with the job's facts (job id, state, node).
	Run() store.Run
	// Records says how the job's records reach the queue and what the
	// queue must know to ingest them.
	Records() Records
	// Follow returns what arrived since the last call, in order: record
	// lines and new executions of the job; State says where the job is
	// after them. It does not block for long. ended is true once the job
	// has ended and every record it wrote has been returned.
	Follow(ctx context.Context) (items []Item, ended bool)
	// Wake is signalled when items may have arrived (nil: never; the
	// loop follows the job every Poll).
	Wake() <-chan struct{}
	// Poll is how often the loop follows the job without being woken.
	Poll() time.Duration
	// Cancel asks the job to end (the run was cancelled, its records
	// cannot be kept, or the queue stops a job that cannot outlive it); it
	// returns at once, and the job ends later (Follow's ended). msg, when
	// not empty, is noted in the run's events; an error is noted and tried
	// again at the next poll.
	Cancel(ctx context.Context) (msg string, err error)
	// Outlives reports whether the job goes on when the queue process
	// stops: the run is then left running, for the next queue process to
	// pick up (Executor.PickUp).
	Outlives() bool
	// Wait says how the job ended, in the executor's terms; it is asked
	// once Follow reported the end.
	Wait(ctx context.Context) Exit
	// State is where the job is now, for the run page: the loop mirrors
	// each change into the run (its job_id, node and job_state), behind
	// the records read before it.
	State() State
}

// Records says how a job's records reach the queue.
type Records struct {
	// Files: the records are in files of the run's directory that hold
	// them all (a job's records file on shared storage): each line comes
	// with the file and the offset it ends at, committed with what it
	// stored, and a run picked up again is read on from there. Without
	// Files the records are a stream that is kept nowhere else (a child's
	// stdout): the queue keeps every line in the run's record log.
	Files bool
	// Limit decides from the run's start record whether its memory limit
	// was enforced, and why (nil: the launch recorded it).
	Limit func(metrics.StartRecord) (enforced bool, note string)
	// Summary and SummaryRaw are the summary record committed before a
	// job picked up again past it (nil: none).
	Summary    *metrics.SummaryRecord
	SummaryRaw json.RawMessage
}

// Item is one thing a job's Follow returns: a record line or a new
// execution (Execution set).
type Item struct {
	// Line is a record line; File and End say where it ends in the job's
	// records file (Records.Files), Usage is the job's memory usage the
	// executor measured when the line arrived (0: not measured).
	Line  []byte
	File  string
	End   int64
	Usage int64
	// Execution: another execution's records file starts (File, from
	// offset 0).
	Execution *Execution
}

// Execution is another execution of a job: requeued when the one before
// did not finish (its epochs are discarded), with the event's message.
type Execution struct {
	File     string
	Requeued bool
	Msg      string
}

// State is where a job is, for the run page: its id, node and state in
// the executor's words (all "": nothing to show beyond the run's status),
// with the message of the event that says so.
type State struct {
	JobID, Node, State string
	Msg                string
}

// Exit is how a job ended, as its executor reports it.
type Exit struct {
	// Started is when the run started (the total time of a run without a
	// summary counts from it; zero: unknown).
	Started time.Time
	// ExitCode and Signal: how the job's process ended (nil, "": unknown).
	ExitCode *int
	Signal   string
	// StderrTail is the end of what the job wrote to stderr.
	StderrTail string
	// PeakMemory is the highest memory use the executor measured.
	PeakMemory int64
	// SummaryGrace is how long the queue waits for a summary record that
	// has not arrived yet (records on a shared file system appear late).
	SummaryGrace time.Duration
	// NoSummary is the warning of a run that ended done without a summary
	// record.
	NoSummary string
	// Verdict maps the job's end to the run's status and its reason, in
	// the executor's terms, given the summary record's outcome and error
	// ("" without one) and why the queue stopped it.
	Verdict func(v Verdict) (status, reason string)
}

// Verdict is what the queue knows of a run when its job's end is mapped
// to the run's outcome.
type Verdict struct {
	Summary, SummaryErr string
	// Cancelled: the run was cancelled (Job.Cancel); Shutdown: the queue
	// process stopped a job that cannot outlive it.
	Cancelled, Shutdown bool
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
	Logf(format string, a ...any)
}

// StopReason says why the queue asks a run to stop.
type StopReason int

// Stop reasons.
const (
	StopNone     StopReason = iota
	StopCancel              // a user cancelled the run: its job is cancelled, outcome cancelled
	StopShutdown            // the queue process is stopping: a job that outlives it goes on
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
