package experiments

// The queue's one loop over a launched run, whatever its executor
// (docs/ARCHITECTURE.md "Executors"): an executor launches a run and hands
// back its executors.Job; follow reads the job's records as they come
// (Job.Follow), ingests them (ingest.go, recordcheck.go, stall.go), asks
// the job to end when the run is cancelled, its records cannot be kept or
// the queue stops a job that cannot outlive it, waits for its end, gives
// a late summary its grace, stores every record and decides the outcome
// (decide) from what the job reports (executors.Exit) and what its records
// said. The executor only reports facts; Manager.record records the
// outcome once.

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"outcore/experiments/executors"
	"outcore/experiments/outcome"
	"outcore/store"
)

// ingestAttacher is a job that gives its run's ingester what this host
// sees of it (a local child: its cgroup, its host facts, its stall facts)
// before the ingester starts.
type ingestAttacher interface {
	attach(ing *ingester)
}

// follow drives a launched job to the run's outcome (left when the queue
// process stops first and the job outlives it).
func (m *Manager) follow(ctx context.Context, r store.Run, ar *activeRun, job executors.Job) outcome.Outcome {
	r = job.Run()
	recs := job.Records()
	file, pos := r.RecordsFile, r.RecordsOffset // where the records handed over end (Records.Files)
	var ing *ingester
	if recs.Files {
		ing = newRecordsIngester(m, r, func() (string, int64) { return file, pos }, recs.Limit)
		if recs.Summary != nil {
			ing.resumeSummary(recs.Summary, recs.SummaryRaw)
		}
	} else {
		ing = newChildIngester(m, r, ctx, func(reason string) { ar.fail(reason) })
		if a, ok := job.(ingestAttacher); ok {
			a.attach(ing)
		} else {
			ing.start(nil, hostFacts(m.opts.DataDir, ""))
		}
	}
	// note adds an event to the run: behind the records of a records
	// ingester (this goroutine feeds it), at once beside a stream's
	// (its own goroutine holds its pending events).
	note := func(level, msg string) {
		if recs.Files {
			ing.note(level, msg)
			ing.flush(nil)
		} else {
			m.logEvent(r, level, msg)
		}
	}
	last := job.State()
	take := func(items []executors.Item) {
		for _, it := range items {
			switch {
			case it.Execution != nil:
				if !recs.Files {
					note("error", fmt.Sprintf("the job started another execution (%s), which a stream of records cannot", it.Execution.File))
					continue
				}
				file, pos = it.Execution.File, 0
				ing.newExecution(it.Execution.Requeued, it.Execution.Msg)
			case recs.Files:
				file, pos = it.File, it.End
				ing.feed(it.Line)
			default:
				ing.take(it.Line, it.Usage)
			}
		}
		// Where the job is now, mirrored into the run behind the records
		// read before.
		if st := job.State(); st.JobID != last.JobID || st.Node != last.Node || st.State != last.State {
			last = st
			if recs.Files {
				ing.jobState(st.JobID, st.Node, st.State, st.Msg)
			} else {
				r.JobID, r.Node, r.JobState = st.JobID, st.Node, st.State
				if err := m.recordJob(ctx, r, nil, statusEvent(r, store.StatusRunning, st.Msg)); err != nil {
					m.opts.Logf("run %d: record the job's state: %v", r.ID, err)
				}
			}
		}
		if recs.Files && len(items) > 0 {
			ing.flush(nil)
		}
	}

	tick := time.NewTicker(job.Poll())
	defer tick.Stop()
	stopCh, done := ar.stopCh, ctx.Done()
	stopAsked := false
	for {
		items, ended := job.Follow(ctx)
		take(items)
		if ended {
			break
		}
		if ctx.Err() != nil {
			ar.stop(stopShutdown)
		}
		reason := ar.stopReason()
		if reason == stopShutdown && job.Outlives() {
			return outcome.Outcome{Left: true} // the job goes on; the next queue process picks it up
		}
		if reason != stopNone && !stopAsked {
			msg, err := job.Cancel(ctx)
			switch {
			case err != nil:
				note("warn", fmt.Sprintf("%v (tried again at the next poll)", err))
			default:
				stopAsked = true
				if msg != "" {
					note("info", msg)
				}
			}
		}
		select {
		case <-done:
			done = nil
		case <-tick.C:
		case <-stopCh:
			stopCh = nil
		case <-job.Wake():
		}
	}

	exit := job.Wait(ctx)
	if exit.SummaryGrace > 0 {
		// The job says it completed, so it wrote its summary: give the
		// records the time to show it.
		deadline := time.Now().Add(exit.SummaryGrace)
		for sum, _ := ing.summaryOutcome(); sum == "" && time.Now().Before(deadline) && ctx.Err() == nil; sum, _ = ing.summaryOutcome() {
			time.Sleep(job.Poll() / 4)
			items, _ := job.Follow(ctx)
			take(items)
		}
	}
	// Every record read is stored before the outcome (a store that
	// refuses writes is retried); a queue process that stops first leaves
	// a job that outlives it running, for the next one to read on from
	// the committed offset.
	if recs.Files {
		if !ing.settle(ctx) && job.Outlives() {
			return outcome.Outcome{Left: true}
		}
	} else {
		ing.closeAndWait()
	}
	return m.decide(r, ar, ing, recs.Files, exit)
}

// decide makes a run's outcome of how its job ended (the job's verdict
// given the run's summary and why the queue stopped it) and what its
// records said: the summary, the peaks, the total time, the notes.
func (m *Manager) decide(r store.Run, ar *activeRun, ing *ingester, files bool, exit executors.Exit) outcome.Outcome {
	var out outcome.Outcome
	end := store.RunEnd{StderrTail: exit.StderrTail, ExitCode: exit.ExitCode, Signal: exit.Signal}
	if !exit.Started.IsZero() {
		end.TotalS = time.Since(exit.Started).Seconds()
	}
	got := ing.result()
	summary := got.Summary
	end.PeakRSSBytes, end.PeakCgroupBytes = got.PeakRSS, got.PeakCgroup
	v := executors.Verdict{}
	if summary != nil {
		end.Summary = got.SummaryRaw
		if summary.TotalS > 0 {
			end.TotalS = summary.TotalS
		}
		end.PeakRSSBytes = max(end.PeakRSSBytes, summary.PeakRSSBytes)
		end.PeakCgroupBytes = max(end.PeakCgroupBytes, summary.PeakCgroupBytes)
		v.Summary, v.SummaryErr = summary.Outcome, summary.Error
	}
	end.PeakCgroupBytes = max(end.PeakCgroupBytes, exit.PeakMemory)
	switch reason := ar.stopReason(); {
	case reason == stopFailed:
		end.Status = store.StatusFailed
		end.Error = fmt.Sprintf("%s: the run's records could not be kept, so the run was stopped (what the child reported is in %s, or in memory until it can be written, and stored once the write succeeds)",
			ar.failReason(), filepath.Join(m.runDirRel(r.ID), RecordLogFile))
	default:
		v.Cancelled, v.Shutdown = reason == stopCancel, reason == stopShutdown
		end.Status, end.Error = exit.Verdict(v)
	}
	if end.Status == store.StatusDone && summary == nil && exit.NoSummary != "" {
		out.Note("warn", exit.NoSummary)
	}
	switch {
	case files && got.LastErr != "":
		out.Note("error", "some records could not be stored: "+got.LastErr)
	case !files && got.unstored > 0:
		out.Note("error", fmt.Sprintf("%d record write(s) could not be stored (%s); the next start ingests them from the record log", got.unstored, got.LastErr))
	}
	out.End = end
	return out
}
