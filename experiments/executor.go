package experiments

// The executor seam (docs/ARCHITECTURE.md "Executors"): the queue claims a
// run and hands it to the executor the run names. local starts an
// `outcore train` child of this process in its own memory cgroup
// (runner_linux.go), one at a time by default; slurm submits one Slurm job
// per run and lets Slurm place them, many in flight (slurm_exec.go). Both
// feed the same ingester, so the store, the dashboard and the exports do
// not know which ran a run except by its executor, job_id and node columns.

import (
	"context"

	"outcore/store"
)

// executor runs claimed runs.
type executor interface {
	// capacity is how many runs it may have in flight.
	capacity() int
	// execute drives a claimed run (status running) to its outcome and
	// records it. When ctx ends first, a local run ends interrupted; a
	// Slurm run is left running in Slurm and in the store, for the next
	// queue process to pick up again (recover).
	execute(ctx context.Context, r store.Run, ar *activeRun)
}

// localExecutor runs children of this process.
type localExecutor struct{ m *Manager }

func (l localExecutor) capacity() int { return l.m.opts.Concurrency }

func (l localExecutor) execute(ctx context.Context, r store.Run, ar *activeRun) {
	l.m.execute(ctx, r, ar)
}

// executorOf returns the executor a run names (local for an old run
// without one).
func (m *Manager) executorOf(name string) executor {
	if e, ok := m.execs[name]; ok {
		return e
	}
	return m.execs[store.ExecutorLocal]
}

// freeExecutors lists the executors with room for another run, among
// those the queue offers (Options.Executors): a run queued for another
// (by an older outcore, or `exp create --executor` for another server)
// waits for a queue that offers it. Runs already in Slurm are picked up
// by any queue (recoverSlurm): their jobs exist.
func (m *Manager) freeExecutors() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	busy := map[string]int{}
	for _, ar := range m.active {
		busy[ar.executor]++
	}
	free := []string{}
	for _, name := range store.Executors {
		if e, ok := m.execs[name]; ok && contains(m.opts.Executors, name) && busy[name] < e.capacity() {
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
		m.executeSafe(ctx, r, ar, func() { m.executorOf(r.Executor).execute(ctx, r, ar) })
		m.mu.Lock()
		delete(m.active, r.ID)
		m.mu.Unlock()
		m.signal()
	}()
}
