package experiments

// The queue's side of the slurm executor's seam (experiments/slurm,
// host.go): the Manager is its Host, an activeRun its Run, the ingester of
// a Slurm run its Ingester, and its Outcome becomes the outcome.Outcome that
// Manager.record records once, with retry, as a local run's.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"outcore/engine/metrics"
	"outcore/experiments/outcome"
	"outcore/experiments/slurm"
	"outcore/store"
)

// slurmExecutor is the slurm executor behind the executor seam.
type slurmExecutor struct{ *slurm.Executor }

func newSlurmExecutor(m *Manager) slurmExecutor {
	return slurmExecutor{slurm.NewExecutor(slurmHost{m}, slurm.Config{DataDir: m.opts.DataDir, Binary: m.opts.Binary,
		Args: m.opts.Args, Env: m.opts.Env, Options: m.opts.Slurm, Version: Version()})}
}

func (e slurmExecutor) capacity() int { return e.Capacity() }

func (e slurmExecutor) execute(ctx context.Context, r store.Run, ar *activeRun) outcome.Outcome {
	return e.Execute(ctx, r, slurmRun{ar})
}

// slurmHost is the Manager as the slurm executor's Host.
type slurmHost struct{ m *Manager }

func (h slurmHost) Experiment(ctx context.Context, id int64) (store.Experiment, error) {
	return h.m.st.Experiment(ctx, id)
}

func (h slurmHost) EnsureDataset(ctx context.Context, r store.Run) error {
	return h.m.ensureDataset(ctx, r)
}

func (h slurmHost) FreshRunDir(r store.Run) (string, error) { return h.m.freshRunDir(r) }

func (h slurmHost) RunDir(id int64) string { return h.m.runDir(id) }

func (h slurmHost) RecordSubmitted(ctx context.Context, r store.Run, started store.RunStart, msg string) error {
	return h.m.recordJob(ctx, r, &started, statusEvent(r, store.StatusRunning, msg))
}

func (h slurmHost) RecordsIngester(r store.Run, position func() (string, int64), limit func(metrics.StartRecord) (bool, string)) slurm.Ingester {
	return recordsIngester{newRecordsIngester(h.m, r, position, limit)}
}

func (h slurmHost) Logf(format string, a ...any) { h.m.opts.Logf(format, a...) }

// recordsIngester is a Slurm run's ingester as the executor sees it.
type recordsIngester struct{ g *ingester }

func (i recordsIngester) Feed(line []byte)       { i.g.feed(line) }
func (i recordsIngester) Flush()                 { i.g.flush(nil) }
func (i recordsIngester) Note(level, msg string) { i.g.note(level, msg) }
func (i recordsIngester) JobState(jobID, node, state, msg string) {
	i.g.jobState(jobID, node, state, msg)
}
func (i recordsIngester) NewExecution(requeued bool, msg string)   { i.g.newExecution(requeued, msg) }
func (i recordsIngester) SummaryOutcome() (outcome, errMsg string) { return i.g.summaryOutcome() }
func (i recordsIngester) Settle(stop context.Context) bool         { return i.g.settle(stop) }

func (i recordsIngester) ResumeSummary(sum *metrics.SummaryRecord, raw json.RawMessage) {
	i.g.resumeSummary(sum, raw)
}

func (i recordsIngester) Result() outcome.Ingest { return i.g.result().Ingest }

// slurmRun is an active run as the slurm executor sees it.
type slurmRun struct{ ar *activeRun }

func (r slurmRun) Stopping() <-chan struct{} { return r.ar.stopCh }

func (r slurmRun) StopReason() slurm.StopReason {
	switch r.ar.stopReason() {
	case stopCancel:
		return slurm.StopCancel
	case stopShutdown:
		return slurm.StopShutdown
	}
	return slurm.StopNone
}

func (r slurmRun) StoppedEnd(start time.Time) (store.RunEnd, bool) { return stoppedEnd(r.ar, start) }

// recoverSlurm picks up the Slurm runs a stopped queue process left
// running: their jobs go on in Slurm, their records are read on from the
// committed offset. A run that has no job id yet is looked up by its job
// name (the process may have stopped between sbatch and recording the
// id); one that Slurm does not know was never submitted and ends
// interrupted.
func (m *Manager) recoverSlurm(ctx context.Context, wg *sync.WaitGroup) error {
	runs, err := m.st.Runs(ctx, store.RunFilter{Statuses: []string{store.StatusRunning}})
	if err != nil {
		return fmt.Errorf("find Slurm runs to pick up: %w", err)
	}
	s := m.execs[store.ExecutorSlurm].(slurmExecutor)
	for _, r := range runs {
		if r.Executor != store.ExecutorSlurm {
			continue
		}
		if r.JobID == "" {
			j, found, err := s.FindJob(ctx, r.ID)
			if err != nil {
				m.record(ctx, r, outcome.Ended(store.RunEnd{Status: store.StatusInterrupted,
					Error: fmt.Sprintf("the server stopped while submitting the run to Slurm, and squeue cannot tell whether it was: %v", err)}))
				continue
			}
			if found {
				r.JobID, r.JobState, r.Node = j.ID, j.State, j.Node
			}
			if r.JobID == "" {
				m.record(ctx, r, outcome.Ended(store.RunEnd{Status: store.StatusInterrupted,
					Error: "the server stopped before the run was submitted to Slurm; retry it to run it again"}))
				continue
			}
		}
		err := m.recordJob(ctx, r, nil, &store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: store.EventLog,
			Msg: fmt.Sprintf("picked up again after a restart: Slurm job %s, records read on from byte %d of %s",
				r.JobID, r.RecordsOffset, orDash(r.RecordsFile))})
		if err != nil {
			return err
		}
		m.startActive(ctx, r, wg)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
