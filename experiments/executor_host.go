package experiments

// The queue's side of the executor seam (experiments/executors) for the
// registered executors: the Manager is their Host and an activeRun their
// Run; the jobs they launch are followed by the queue's one loop
// (follow.go), as a local run's child is.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"outcore/experiments/executors"
	"outcore/experiments/outcome"
	"outcore/store"
)

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

func (h seamHost) Logf(format string, a ...any) { h.m.opts.Logf(format, a...) }

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
		job, msg, end := e.PickUp(ctx, r)
		if end != nil {
			m.record(ctx, r, outcome.Ended(*end))
			continue
		}
		again := job.Run()
		err := m.recordJob(ctx, again, nil, &store.Event{ExperimentID: again.ExperimentID, RunID: again.ID, Kind: store.EventLog, Msg: msg})
		if err != nil {
			return err
		}
		m.startActive(ctx, again, job, wg)
	}
	return nil
}
