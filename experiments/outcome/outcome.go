// Package outcome is the vocabulary of the executor seam
// (docs/ARCHITECTURE.md "Executors"): how a run ended, as the queue's one
// loop decides it from what its job reported (or as an executor says when
// a run could not be launched: Failed), for the queue to record once,
// with retry. A leaf: both sides import it, neither the other's internals.
package outcome

import (
	"encoding/json"
	"fmt"
	"time"

	"outcore/engine/metrics"
	"outcore/store"
)

// Outcome is how an executor says a run ended: End holds the status, the
// reason in words, the exit code or signal, the peaks, the summary record
// and the stderr tail; Notes are events recorded with it, before its
// status event. Left: the run did not end here (its job goes on
// after the queue process stopped), nothing is recorded.
type Outcome struct {
	End   store.RunEnd
	Notes []Note
	Left  bool
}

// Note is an event of a run recorded with its outcome.
type Note struct{ Level, Msg string }

// Note adds an event recorded with the outcome.
func (o *Outcome) Note(level, msg string) { o.Notes = append(o.Notes, Note{level, msg}) }

// Ended is the outcome of a run that ended with end.
func Ended(end store.RunEnd) Outcome { return Outcome{End: end} }

// Failed is the end of a run that failed before its training started
// (since start), the reason in words.
func Failed(start time.Time, format string, a ...any) store.RunEnd {
	return store.RunEnd{Status: store.StatusFailed, Error: fmt.Sprintf(format, a...), TotalS: time.Since(start).Seconds()}
}

// Ingest is what a run's ingester saw that its outcome is made of, for
// either executor.
type Ingest struct {
	Summary    *metrics.SummaryRecord // nil without a summary record
	SummaryRaw json.RawMessage
	PeakRSS    int64
	PeakCgroup int64
	LastErr    string // the store's last refusal ("" without one)
}
