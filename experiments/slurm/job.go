package slurm

// A run's Slurm job as the queue follows it (executors.Job): its records
// are the records files of the run's directory, read as they grow
// (records.go), one per execution of the job; squeue, scontrol and sacct
// (one squeue per poll for all runs) say where it is and, once it has
// ended, how; scancel cancels it. The queue's loop ingests the records and
// decides the outcome: this file only reports Slurm's facts, JobOutcome
// (state.go) mapping the job's final state.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"outcore/engine/metrics"
	"outcore/experiments/executors"
	"outcore/experiments/supervise"
	"outcore/store"
)

// job is a submitted run's Slurm job.
type job struct {
	s     *Executor
	r     store.Run // with the job's id, state and node as last seen
	dir   string    // the run's directory, absolute
	tail  *RecordsTail
	last  JobInfo // the state last mirrored into the run
	ended bool
	final JobInfo // the job's final state, once ended
	msg   string  // the event of the last state change
}

var _ executors.Job = (*job)(nil)

// newJob follows a run's submitted job, its records read on from the
// run's committed offset.
func (s *Executor) newJob(r store.Run) *job {
	dir, _ := filepath.Abs(s.host.RunDir(r.ID))
	return &job{s: s, r: r, dir: dir, tail: &RecordsTail{Dir: dir, File: r.RecordsFile, Off: r.RecordsOffset},
		last: JobInfo{State: r.JobState, Node: r.Node}}
}

func (j *job) Run() store.Run { return j.r }

// Records: the records files hold every record; a run picked up again
// past its summary gets it back from the file.
func (j *job) Records() executors.Records {
	rec := executors.Records{Files: true,
		Limit: func(sr metrics.StartRecord) (bool, string) { return limitFromNode(j.r, sr, j.dir) }}
	if j.r.RecordsFile != "" && j.r.RecordsOffset > 0 {
		sum, raw, err := SummaryUpTo(filepath.Join(j.dir, j.r.RecordsFile), j.r.RecordsOffset)
		if err != nil {
			j.s.host.Logf("run %d: %v", j.r.ID, err)
		}
		rec.Summary, rec.SummaryRaw = sum, raw
	}
	return rec
}

func (j *job) Wake() <-chan struct{} { return nil }
func (j *job) Poll() time.Duration   { return j.s.opts().Poll }
func (j *job) Outlives() bool        { return true }

func (j *job) State() executors.State {
	return executors.State{JobID: j.r.JobID, Node: j.r.Node, State: j.r.JobState, Msg: j.msg}
}

// Cancel is scancel.
func (j *job) Cancel(ctx context.Context) (string, error) {
	if err := j.s.cli.Cancel(ctx, j.r.JobID); err != nil {
		return "", fmt.Errorf("scancel %s: %w", j.r.JobID, err)
	}
	return fmt.Sprintf("scancel %s", j.r.JobID), nil
}

// Follow reads the records appended since the last call and asks Slurm
// where the job is (State); once the job
// has a final state (or no one knows it any more) its records are read
// to their end and the job has ended. After the end it reads on (a
// summary the shared file system shows late).
func (j *job) Follow(ctx context.Context) ([]executors.Item, bool) {
	if j.ended {
		return j.read(true), true
	}
	items := j.read(false)
	info, ok := j.s.info(ctx, j.r.JobID)
	if !ok {
		return items, false
	}
	if info.Known && (info.State != j.last.State || (info.Node != "" && info.Node != j.last.Node)) {
		j.stateChange(info)
		j.last = info
	}
	if JobOutcome(info, "", "", false).Phase == PhaseEnded {
		j.ended, j.final = true, info
		items = append(items, j.read(true)...)
		return items, true
	}
	return items, false
}

// read returns the records appended to the run's records file; a newer
// execution's file (the job was requeued) replaces the current one once
// it is read to its end. final: the job has ended, its last line counts
// even without a newline.
func (j *job) read(final bool) []executors.Item {
	var items []executors.Item
	add := func(lines []RecordLine) {
		for _, l := range lines {
			items = append(items, executors.Item{Line: l.Line, File: j.tail.File, End: l.End})
		}
	}
	for {
		lines, err := j.tail.Read(final)
		if err != nil {
			j.s.host.Logf("run %d: read records: %v", j.r.ID, err)
			return items
		}
		add(lines)
		segs, err := RecordsSegments(j.tail.Dir, j.r.JobID)
		if err != nil {
			j.s.host.Logf("run %d: %v", j.r.ID, err)
			return items
		}
		cur := -1
		if j.tail.File != "" {
			cur = SegmentRestart(j.tail.File)
		}
		var next *RecordsSegment
		for i := range segs {
			if segs[i].Restart > cur {
				next = &segs[i]
				break
			}
		}
		if next == nil {
			return items
		}
		prev := j.tail.File
		if prev != "" {
			// The earlier execution is over: its last line counts even
			// without a newline.
			lines, err := j.tail.Read(true)
			if err != nil {
				j.s.host.Logf("run %d: read records: %v", j.r.ID, err)
			}
			add(lines)
		}
		j.tail.File, j.tail.Off, j.tail.Skipping = next.Name, 0, false
		items = append(items, executors.Item{Execution: &executors.Execution{File: next.Name, Requeued: prev != "",
			Msg: fmt.Sprintf("Slurm requeued job %s: execution %d trains from the start; the epochs and samples of the execution that did not finish are discarded",
				j.r.JobID, next.Restart)}})
	}
}

// stateChange takes a job's new Slurm state and node, with the event's
// message.
func (j *job) stateChange(info JobInfo) {
	node := info.Node
	if node == "" {
		node = j.r.Node
	}
	msg := fmt.Sprintf("Slurm job %s %s", j.r.JobID, info.State)
	if node != "" {
		msg += " on " + node
	}
	if info.Reason != "" && info.Reason != "None" {
		msg += " (" + info.Reason + ")"
	}
	j.r.JobState, j.r.Node, j.msg = info.State, node, msg
}

// Wait reports how the job ended: Slurm's exit code, the job's stderr,
// the summary grace of a job Slurm says COMPLETED, and JobOutcome as the
// verdict, with the job's own last words for a failure of the job itself.
func (j *job) Wait(context.Context) executors.Exit {
	info := j.final
	j.s.forget(j.r.JobID)
	stderrTail := readTail(filepath.Join(j.dir, JobStderrFile), supervise.TailBytes)
	e := executors.Exit{Started: j.r.StartedAt, StderrTail: stderrTail,
		NoSummary: fmt.Sprintf("Slurm job %s completed without a summary record", j.r.JobID)}
	if NormalizeJobState(info.State) == "COMPLETED" {
		// A job that completed wrote its summary; the file system may
		// show it late.
		e.SummaryGrace = summaryGrace
	}
	if st, sig, ok := ParseExitCode(info.ExitCode); ok {
		if sig != 0 {
			e.Signal = SignalNameNum(sig)
		} else {
			e.ExitCode = &st
		}
	}
	e.Verdict = func(v executors.Verdict) (string, string) {
		mp := JobOutcome(info, v.Summary, v.SummaryErr, v.Cancelled)
		status, reason := mp.Outcome, mp.Reason
		// The job's own last words explain a failure of the job itself
		// (not one of its node or its time limit) that no summary
		// explains.
		ownFailure := false
		switch NormalizeJobState(info.State) {
		case "FAILED", "CANCELLED", "SPECIAL_EXIT", "COMPLETED":
			ownFailure = true
		}
		if status == store.StatusFailed && v.SummaryErr == "" && ownFailure {
			if line := lastLine(stderrTail); line != "" && !strings.Contains(reason, line) {
				reason += ": " + line
			}
		}
		return status, reason
	}
	return e
}
