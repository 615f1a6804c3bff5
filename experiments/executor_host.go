package experiments

// The queue's side of the executor seam (experiments/executors) for the
// registered executors: the Manager is their Host, an activeRun their
// Run, the ingester of such a run their Ingester, and their Outcome
// becomes the outcome.Outcome that Manager.record records once, with
// retry, as a local run's.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"outcore/engine/metrics"
	"outcore/experiments/executors"
	"outcore/experiments/outcome"
	"outcore/store"
)

// seamExecutor is a registered executor behind the queue's executor.
type seamExecutor struct{ e executors.Executor }

// newSeamExecutors builds every registered executor, each with its own
// options (Options.ExecutorOptions).
func newSeamExecutors(m *Manager) (map[string]executors.Executor, error) {
	out := map[string]executors.Executor{}
	for _, reg := range executors.Registered() {
		e, err := reg.New(seamHost{m}, executors.Config{DataDir: m.opts.DataDir, Binary: m.opts.Binary,
			Args: m.opts.Args, Env: m.opts.Env, Options: m.opts.ExecutorOptions[reg.Name], Version: Version()})
		if err != nil {
			return nil, fmt.Errorf("experiments: %s: %w", reg.Name, err)
		}
		out[reg.Name] = e
	}
	return out, nil
}

func (e seamExecutor) capacity() int { return e.e.Capacity() }

func (e seamExecutor) execute(ctx context.Context, r store.Run, ar *activeRun) outcome.Outcome {
	return e.e.Execute(ctx, r, seamRun{ar})
}

// seamHost is the Manager as a registered executor's Host.
type seamHost struct{ m *Manager }

func (h seamHost) Experiment(ctx context.Context, id int64) (store.Experiment, error) {
	return h.m.st.Experiment(ctx, id)
}

func (h seamHost) EnsureDataset(ctx context.Context, r store.Run) error {
	return h.m.ensureDataset(ctx, r)
}

func (h seamHost) FreshRunDir(r store.Run) (string, error) { return h.m.freshRunDir(r) }

func (h seamHost) RunDir(id int64) string { return h.m.runDir(id) }

func (h seamHost) RecordSubmitted(ctx context.Context, r store.Run, started store.RunStart, msg string) error {
	return h.m.recordJob(ctx, r, &started, statusEvent(r, store.StatusRunning, msg))
}

func (h seamHost) RecordsIngester(r store.Run, position func() (string, int64), limit func(metrics.StartRecord) (bool, string)) executors.Ingester {
	return recordsIngester{newRecordsIngester(h.m, r, position, limit)}
}

func (h seamHost) Logf(format string, a ...any) { h.m.opts.Logf(format, a...) }

// recordsIngester is a run's ingester as a registered executor sees it.
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

// seamRun is an active run as a registered executor sees it.
type seamRun struct{ ar *activeRun }

func (r seamRun) Stopping() <-chan struct{} { return r.ar.stopCh }

func (r seamRun) StopReason() executors.StopReason {
	switch r.ar.stopReason() {
	case stopCancel:
		return executors.StopCancel
	case stopShutdown:
		return executors.StopShutdown
	}
	return executors.StopNone
}

func (r seamRun) StoppedEnd(start time.Time) (store.RunEnd, bool) { return stoppedEnd(r.ar, start) }

// pickUp hands the runs a stopped queue process left running with a
// registered executor back to it (executors.Executor.PickUp): a run it
// takes over runs again here, one it cannot ends with the end it gives.
func (m *Manager) pickUp(ctx context.Context, wg *sync.WaitGroup) error {
	runs, err := m.st.Runs(ctx, store.RunFilter{Statuses: []string{store.StatusRunning}})
	if err != nil {
		return fmt.Errorf("find the runs left running to pick up: %w", err)
	}
	for _, r := range runs {
		e, ok := m.seam[r.Executor]
		if !ok {
			continue
		}
		again, msg, end := e.PickUp(ctx, r)
		if end != nil {
			m.record(ctx, r, outcome.Ended(*end))
			continue
		}
		err := m.recordJob(ctx, again, nil, &store.Event{ExperimentID: again.ExperimentID, RunID: again.ID, Kind: store.EventLog, Msg: msg})
		if err != nil {
			return err
		}
		m.startActive(ctx, again, wg)
	}
	return nil
}
