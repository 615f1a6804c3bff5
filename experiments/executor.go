package experiments

// The executor seam (docs/ARCHITECTURE.md "Executors"): the queue claims a
// run and hands it to the executor the run names. local starts an
// `outcore train` child of this process in its own memory cgroup
// (runner_linux.go), one at a time by default; every other executor is
// registered in experiments/executors by its own package and driven
// through that seam (executor_host.go), for instance one that submits a
// job per run to a cluster's scheduler, many in flight. All feed the same
// ingester, so the store, the dashboard and the exports do not know which
// ran a run except by its executor, job_id and node columns.
// An executor does not record how a run ended: it returns a outcome.Outcome,
// which the Manager records once, the same way for all (record), retried
// until it commits.

import (
	"context"
	"slices"

	"outcore/experiments/executors"
	"outcore/experiments/outcome"
	"outcore/store"
)

// executor runs claimed runs.
type executor interface {
	// capacity is how many runs it may have in flight.
	capacity() int
	// execute drives a claimed run (status running) to its outcome and
	// returns it, for the Manager to record. When ctx ends first, a local
	// run ends interrupted; a run of another executor may be left running
	// outside this process and in the store (outcome.Outcome.Left), for
	// the next queue process to pick up again (pickUp).
	execute(ctx context.Context, r store.Run, ar *activeRun) outcome.Outcome
}

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

// localExecutor runs children of this process.
type localExecutor struct{ m *Manager }

func (l localExecutor) capacity() int { return l.m.opts.Concurrency }

func (l localExecutor) execute(ctx context.Context, r store.Run, ar *activeRun) outcome.Outcome {
	return l.m.execute(ctx, r, ar)
}

// executorOf returns the executor a run names (local for an old run
// without one, or one naming an executor no longer registered).
func (m *Manager) executorOf(name string) executor {
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
		if e, ok := m.execs[name]; ok && slices.Contains(m.opts.Executors, name) && busy[name] < e.capacity() {
			free = append(free, name)
		}
	}
	return free
}

// startActive registers a run as active in this process and runs it with
// its executor in a goroutine of wg.
func (m *Manager) startActive(ctx context.Context, r store.Run, wg interface {
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
		m.executeSafe(ctx, r, ar, func() { m.record(ctx, r, m.executorOf(r.Executor).execute(ctx, r, ar)) })
		m.mu.Lock()
		delete(m.active, r.ID)
		m.mu.Unlock()
		m.signal()
	}()
}
