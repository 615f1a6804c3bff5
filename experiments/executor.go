package experiments

// The executor seam (docs/ARCHITECTURE.md "Executors"): the queue claims a
// run and hands it to the executor the run names, which launches it and
// hands back its job (experiments/executors.Job). local starts an
// `outcore train` child of this process in its own memory cgroup
// (runner_linux.go), one at a time by default; every other executor is
// registered in experiments/executors by its own package (executor_host.go
// is the queue's side of that seam), for instance one that submits a job
// per run to a cluster's scheduler, many in flight. The queue follows
// every job with one loop (follow.go): the same ingester, the same
// outcome assembly, so the store, the dashboard and the exports do not
// know which ran a run except by its executor, job_id and node columns.
// The outcome is recorded once, the same way for all (record), retried
// until it commits.

import (
	"context"
	"encoding/json"
	"slices"

	"outcore/experiments/executors"
	"outcore/experiments/outcome"
	"outcore/store"
)

// record stores a run's outcome, its notes and its status event in one
// transaction, retried until it commits (a store refusing writes: a full
// disk), the database file is gone or stop ends (the server is stopping: a
// run left running is recovered at the next start); then the run counts as
// finished (Manager.finished). A run already ended (cancelled meanwhile
// from the dashboard) keeps its outcome.
func (m *Manager) record(stop context.Context, r store.Run, out outcome.Outcome) {
	if out.Left {
		return
	}
	end := out.End
	wctx := context.WithoutCancel(stop)
	err := m.updateRetry(stop, wctx, func(tx *store.Tx) error {
		ok, err := tx.FinishRun(r.ID, end)
		if err != nil || !ok {
			return err
		}
		if err := tx.PruneTransient(r.ID); err != nil {
			return err
		}
		for _, n := range out.Notes {
			if err := tx.AppendEvent(&store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: store.EventLog,
				Level: n.Level, Msg: n.Msg}); err != nil {
				return err
			}
		}
		msg := end.Status
		if end.Error != "" {
			msg += ": " + end.Error
		}
		ev := statusEvent(r, end.Status, msg)
		if end.Status == store.StatusFailed || end.Status == store.StatusOOM {
			ev.Level = "error"
		}
		return tx.AppendEvent(ev)
	})
	if err != nil {
		m.opts.Logf("run %d: record outcome %s: %v", r.ID, end.Status, err)
		return
	}
	m.finished(wctx, r.ID)
}

// recordJob records a run's job (id, node, state) with an event,
// and marks the run started when started is not nil (at submission). It
// is retried like record: a job id lost would leave the job to be found
// by its name only.
func (m *Manager) recordJob(stop context.Context, r store.Run, started *store.RunStart, ev *store.Event) error {
	return m.updateRetry(stop, context.WithoutCancel(stop), func(tx *store.Tx) error {
		if err := tx.SetJob(r.ID, r.JobID, r.Node, r.JobState); err != nil {
			return err
		}
		if started != nil {
			if err := tx.SetRunStarted(r.ID, *started); err != nil {
				return err
			}
		}
		return tx.AppendEvent(ev)
	})
}

// localExecutor runs children of this process (runner_linux.go).
type localExecutor struct{ m *Manager }

var _ executors.Executor = localExecutor{}

func (l localExecutor) Capacity() int { return l.m.opts.Concurrency }

// Launch starts a run's child (runner_linux.go).
func (l localExecutor) Launch(ctx context.Context, r store.Run, run executors.Run) (executors.Job, *store.RunEnd) {
	return l.m.launch(ctx, r, run)
}

// PickUp: a local run left running by a stopped queue process has lost
// its child (recoverInterrupted ends it); it is never picked up.
func (l localExecutor) PickUp(ctx context.Context, r store.Run) (executors.Job, string, *store.RunEnd) {
	return nil, "", &store.RunEnd{Status: store.StatusInterrupted, Error: "the server stopped while the run was running"}
}

// CheckGrid: the local executor has no options block.
func (l localExecutor) CheckGrid(json.RawMessage) error { return nil }

// executorOf returns the executor a run names (local for an old run
// without one, or one naming an executor no longer registered).
func (m *Manager) executorOf(name string) executors.Executor {
	if e, ok := m.execs[name]; ok {
		return e
	}
	return m.execs[store.ExecutorLocal]
}

// freeExecutors lists the executors with room for another run, among
// those the queue offers (Options.Executors): a run queued for another
// (by an older outcore, or `exp create --executor` for another server)
// waits for a queue that offers it. Runs already outside this process are picked up
// by any queue (pickUp): their jobs exist.
func (m *Manager) freeExecutors() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	busy := map[string]int{}
	for _, ar := range m.active {
		busy[ar.executor]++
	}
	free := []string{}
	for _, name := range executors.Names() {
		if e, ok := m.execs[name]; ok && slices.Contains(m.opts.Executors, name) && busy[name] < e.Capacity() {
			free = append(free, name)
		}
	}
	return free
}

// startActive registers a run as active in this process and runs it in a
// goroutine of wg: launched by its executor (job nil) or followed on
// (a job picked up), followed by the queue's loop (follow.go) to its
// outcome, which is recorded once.
func (m *Manager) startActive(ctx context.Context, r store.Run, job executors.Job, wg interface {
	Add(int)
	Done()
}) {
	ar := newActiveRun(r.ID)
	ar.executor = r.Executor
	m.mu.Lock()
	m.active[r.ID] = ar
	m.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.executeSafe(ctx, r, ar, func() { m.record(ctx, r, m.runJob(ctx, r, ar, job)) })
		m.mu.Lock()
		delete(m.active, r.ID)
		m.mu.Unlock()
		m.signal()
	}()
}

// runJob launches a claimed run with its executor (unless its job is
// given) and follows the job to the run's outcome.
func (m *Manager) runJob(ctx context.Context, r store.Run, ar *activeRun, job executors.Job) outcome.Outcome {
	if job == nil {
		var end *store.RunEnd
		if job, end = m.executorOf(r.Executor).Launch(ctx, r, seamRun{ar}); end != nil {
			return outcome.Ended(*end)
		}
	}
	return m.follow(ctx, r, ar, job)
}
