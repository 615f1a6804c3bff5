package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"outcore/experiments/outcome"
	"outcore/internal/cgroup"
	"outcore/store"
)

// stopReason says why a running child is being stopped.
type stopReason int

const (
	stopNone     stopReason = iota
	stopCancel              // a user cancelled the run: outcome cancelled
	stopShutdown            // the server is stopping: outcome interrupted
	stopFailed              // the run's records could not be kept: outcome failed
)

// activeRun is a run whose child (or job) this process is running.
type activeRun struct {
	id       int64
	executor string // store.ExecutorLocal or a registered executor
	mu       sync.Mutex
	reason   stopReason
	why      string        // with stopFailed: the reason in words
	stopCh   chan struct{} // closed by the first stop
}

// fail stops the run because its records could not be kept (why says
// why, e.g. "no space left on device"); the first stop wins.
func (a *activeRun) fail(why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reason == stopNone {
		a.reason, a.why = stopFailed, why
		close(a.stopCh)
	}
}

func (a *activeRun) failReason() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.why
}

func newActiveRun(id int64) *activeRun { return &activeRun{id: id, stopCh: make(chan struct{})} }

// stop asks the run to stop; the first reason wins.
func (a *activeRun) stop(r stopReason) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reason == stopNone {
		a.reason = r
		close(a.stopCh)
	}
}

func (a *activeRun) stopReason() stopReason {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reason
}

// Run runs the queue until ctx ends: it takes the data directory's queue
// lock (ErrQueueBusy if another process holds it), marks local runs a
// previous server left running as interrupted and hands the runs of other
// executors it left running back to them (pickUp), then starts queued runs
// in queue order — local ones Options.Concurrency at a time, another
// executor's up to its Capacity in flight — and waits for more. When ctx
// ends, local children are stopped and their runs end as interrupted;
// another executor's jobs may go on outside this process, their runs
// staying running for the next queue process. Run returns once they are recorded.
func (m *Manager) Run(ctx context.Context) error {
	lock, err := lockQueue(m.opts.DataDir)
	if err != nil {
		return err
	}
	defer lock.unlock()
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return fmt.Errorf("%w: Run already active in this process", ErrQueueBusy)
	}
	m.running = true
	m.standby = false
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.running = false
		m.mu.Unlock()
	}()

	if err := m.recoverInterrupted(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	// Runs still running outside this process (submitted by a queue
	// process that stopped) are picked up again.
	if err := m.pickUp(ctx, &wg); err != nil {
		m.opts.Logf("queue: %v", err)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if m.loopHook != nil {
			m.loopHook()
		}
		if m.isDraining() && m.activeCount() == 0 {
			return nil
		}
		for ctx.Err() == nil && !m.isDraining() {
			free := m.freeExecutors()
			if len(free) == 0 {
				break
			}
			m.claimMu.Lock() // until the run is in active (see finishGhost)
			r, ok, err := m.claimNext(ctx, free)
			if err != nil || !ok {
				m.claimMu.Unlock()
				if err != nil {
					m.opts.Logf("queue: %v", err)
				}
				break
			}
			m.startActive(ctx, r, nil, &wg)
			m.claimMu.Unlock()
		}
		select {
		case <-ctx.Done():
			m.mu.Lock()
			for _, ar := range m.active {
				ar.stop(stopShutdown)
			}
			m.mu.Unlock()
			return nil
		case <-m.wake:
		case <-tick.C:
			m.pollCancels(ctx)
		}
	}
}

// Standby runs the queue like Run (a panic of its loop is logged and the
// queue started again), but while another process holds the
// data directory's queue it waits instead of returning ErrQueueBusy: it
// tries the lock every poll (default 1 s) and takes the queue over as soon
// as the holder is gone. The kernel releases the lock of a process that
// dies, SIGKILL included, so a second server on the same data directory
// takes over within a poll; Run then marks the runs the dead process left
// running as interrupted, after ingesting what their record logs hold.
// onWait, when set, is called once when Standby starts waiting, with the
// ErrQueueBusy error that names the holder. Standby returns when ctx ends.
func (m *Manager) Standby(ctx context.Context, poll time.Duration, onWait func(error)) error {
	if poll <= 0 {
		poll = time.Second
	}
	waiting := false
	for {
		if m.Running() {
			return fmt.Errorf("%w: Run already active in this process", ErrQueueBusy)
		}
		err := m.runSafe(ctx)
		if errors.Is(err, errQueuePanic) && ctx.Err() == nil {
			m.opts.Logf("%v; the queue starts again in %v", err, poll)
		} else if !errors.Is(err, ErrQueueBusy) || ctx.Err() != nil {
			return err
		}
		if !waiting {
			waiting = true
			m.setStandby(true)
			if onWait != nil {
				onWait(err)
			}
		}
		select {
		case <-ctx.Done():
			m.setStandby(false)
			return nil
		case <-time.After(poll):
		}
	}
}

// errQueuePanic marks a panic of the queue loop (a bug), which Standby
// survives: it logs it and starts the queue again.
var errQueuePanic = errors.New("queue: internal error")

// runSafe is Run, a panic of which comes back as an errQueuePanic error
// (the runs it started have ended by then: Run waits for them on the way out).
func (m *Manager) runSafe(ctx context.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v\n%s", errQueuePanic, p, debug.Stack())
		}
	}()
	return m.Run(ctx)
}

func (m *Manager) setStandby(v bool) {
	m.mu.Lock()
	m.standby = v
	m.mu.Unlock()
}

// Standing reports whether this process waits for another to release the
// queue (see Standby).
func (m *Manager) Standing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.standby
}

// Drain makes Run stop starting runs and return once the runs it started
// have finished (`outcore exp create --wait` uses it when its experiment is
// done, so that it does not cut off a run of another experiment).
func (m *Manager) Drain() {
	m.mu.Lock()
	m.draining = true
	m.mu.Unlock()
	m.signal()
}

func (m *Manager) isDraining() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.draining
}

// Running reports whether this process runs the queue.
func (m *Manager) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running
}

func (m *Manager) activeCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.active)
}

// claimNext moves the first queued run of one of the executors to running.
func (m *Manager) claimNext(ctx context.Context, executors []string) (store.Run, bool, error) {
	var r store.Run
	var ok bool
	err := m.update(ctx, func(tx *store.Tx) error {
		var err error
		r, ok, err = tx.NextQueuedFor(executors)
		if err != nil || !ok {
			return err
		}
		if ok, err = tx.ClaimRun(r.ID); err != nil || !ok {
			return err
		}
		r.Status = store.StatusRunning
		return tx.AppendEvent(statusEvent(r, store.StatusRunning, "starting"))
	})
	return r, ok, err
}

// pollCancels stops runs of this process that another process flagged for
// cancellation, and ends flagged local runs no child runs any more.
func (m *Manager) pollCancels(ctx context.Context) {
	ids, err := m.st.CancelRequested(ctx)
	if err != nil {
		m.opts.Logf("queue: %v", err)
		return
	}
	for _, id := range ids {
		m.mu.Lock()
		ar := m.active[id]
		m.mu.Unlock()
		if ar != nil {
			ar.stop(stopCancel)
			continue
		}
		if _, err := m.finishGhost(ctx, id, store.StatusCancelled, "cancelled; its child had already ended"); err != nil {
			m.opts.Logf("queue: run %d: %v", id, err)
		}
	}
}

// executeSafe runs execute and survives a panic of the runner (a bug):
// the run ends as failed with the panic's message and the queue goes on.
func (m *Manager) executeSafe(ctx context.Context, r store.Run, ar *activeRun, execute func()) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		m.opts.Logf("run %d: panic in the runner: %v\n%s", r.ID, p, debug.Stack())
		defer func() { // a panic after the outcome (Options.Finished) again
			if p := recover(); p != nil {
				m.opts.Logf("run %d: panic recording the failure: %v\n%s", r.ID, p, debug.Stack())
			}
		}()
		m.record(ctx, r, outcome.Ended(store.RunEnd{Status: store.StatusFailed, Error: fmt.Sprintf("internal error in the runner: %v", p)}))
	}()
	if m.executeHook != nil {
		m.executeHook(r)
	}
	execute()
}

// recoverInterrupted ends the runs a stopped server left running as
// interrupted and removes their cgroups (killing anything left in them).
func (m *Manager) recoverInterrupted(ctx context.Context) error {
	left, err := m.st.Runs(ctx, store.RunFilter{Statuses: []string{store.StatusRunning}})
	if err != nil {
		return fmt.Errorf("recover interrupted runs: %w", err)
	}
	for _, r := range left {
		if r.Executor != store.ExecutorLocal {
			continue // another executor's run goes on; pickUp hands it back to it
		}
		// What the child reported and the dead server did not store.
		if err := m.ingestRecordLog(ctx, r, true); err != nil {
			m.opts.Logf("run %d: ingest its record log: %v", r.ID, err)
		}
	}
	var runs []store.Run
	err = m.update(ctx, func(tx *store.Tx) error {
		var err error
		if runs, err = tx.MarkInterrupted(); err != nil {
			return err
		}
		for _, r := range runs {
			if err := tx.PruneTransient(r.ID); err != nil {
				return err
			}
			if err := tx.AppendEvent(statusEvent(r, store.StatusInterrupted,
				"the server stopped while the run was running; retry it to run it again")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recover interrupted runs: %w", err)
	}
	for _, r := range runs {
		if r.CgroupPath == "" {
			continue
		}
		g, err := cgroup.Open(r.CgroupPath)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				m.opts.Logf("run %d: %v", r.ID, err)
			}
			continue
		}
		if err := g.Remove(); err != nil {
			m.opts.Logf("run %d: %v", r.ID, err)
		}
	}
	return nil
}
