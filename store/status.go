package store

import "outcore/engine/metrics"

// Run statuses. A run is queued, then running, then ends with one of the
// outcomes of engine/metrics (done, failed, oom, cancelled, interrupted).
const (
	StatusQueued      = "queued"
	StatusRunning     = "running"
	StatusDone        = metrics.OutcomeDone
	StatusFailed      = metrics.OutcomeFailed
	StatusOOM         = metrics.OutcomeOOM
	StatusCancelled   = metrics.OutcomeCancelled
	StatusInterrupted = metrics.OutcomeInterrupted
)

// StatusStalled is how a running run whose child stopped writing records
// while its process lives is shown (Run.State): the store keeps it
// running, with the cause in Run.Stall.
const StatusStalled = "stalled"

// Statuses lists every run status in display order.
var Statuses = []string{StatusQueued, StatusRunning, StatusDone, StatusFailed, StatusOOM, StatusCancelled, StatusInterrupted}

// Finished reports whether status is an outcome (the run will not change
// again unless retried, which creates a new run).
func Finished(status string) bool {
	switch status {
	case StatusDone, StatusFailed, StatusOOM, StatusCancelled, StatusInterrupted:
		return true
	}
	return false
}

// StatusCounts counts an experiment's current runs (superseded attempts
// excluded) by status.
type StatusCounts struct {
	Total       int
	Queued      int
	Running     int
	Done        int
	Failed      int
	OOM         int
	Cancelled   int
	Interrupted int
	// CancelledUnstarted are the cancelled runs that never started (part
	// of Cancelled): they did not finish, they were dropped.
	CancelledUnstarted int
	// Refused are the grid's cells skipped at creation because they
	// cannot start (Experiment.Refused; not runs, not in Total).
	Refused int
}

// Finished is the number of runs that have an outcome, cancelled runs
// that never started excluded (they did not run; Dropped counts them).
func (c StatusCounts) Finished() int {
	return c.Done + c.Failed + c.OOM + c.Cancelled - c.CancelledUnstarted + c.Interrupted
}

// Dropped is the number of runs cancelled before they started.
func (c StatusCounts) Dropped() int { return c.CancelledUnstarted }

// State summarises the experiment: "running" while any run runs, "queued"
// while runs wait and none runs, "finished" when every run has an outcome,
// "empty" without runs.
func (c StatusCounts) State() string {
	switch {
	case c.Total == 0:
		return "empty"
	case c.Running > 0:
		return "running"
	case c.Queued > 0:
		return "queued"
	default:
		return "finished"
	}
}

func (c *StatusCounts) add(status string, n int) {
	c.Total += n
	switch status {
	case StatusQueued:
		c.Queued += n
	case StatusRunning:
		c.Running += n
	case StatusDone:
		c.Done += n
	case StatusFailed:
		c.Failed += n
	case StatusOOM:
		c.OOM += n
	case StatusCancelled:
		c.Cancelled += n
	case StatusInterrupted:
		c.Interrupted += n
	}
}
