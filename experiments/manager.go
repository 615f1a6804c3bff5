// Package experiments runs grids of training runs: an experiment is a
// dataset, a base configuration and axes (variants, memory limits, feature
// dimensions, batch sizes, models, fanouts, repeats) expanded into runs.
// Runs wait in a queue stored in SQLite (outcore/store) and run one at a
// time by default, each as an `outcore train --config <file>` child in its
// own memory cgroup (outcore/internal/cgroup). The child's JSON lines
// (engine/metrics/records.go) become epochs, samples and events as they
// arrive; each epoch is committed the moment it arrives, so killing the
// server loses none the child reported. The grid language itself (parsing,
// limits, planning) is the leaf package experiments/grid.
//
// The dashboard (web/) uses a Manager, through its Queue interface:
//
//	st, _ := store.OpenDataDir(ctx, dataDir)
//	m, _ := experiments.New(experiments.Options{DataDir: dataDir, Store: st})
//	go m.Run(ctx)                     // the queue; returns when ctx ends
//	exp, err := m.Create(ctx, gridJSON) // errors.Is(err, grid.ErrInvalid): show err to the user
//	ch, stop := m.SubscribeFrom(lastEventID) // SSE: resume after Last-Event-ID
//	m.CancelRun(ctx, id); m.RetryRun(ctx, id); m.DeleteExperiment(ctx, id)
//
// Reads (experiment list, runs, epochs, samples, comparison, CSV export)
// go straight to the store: m.Store().
//
// Several processes may share a data directory: one runs the queue (Run
// takes an exclusive lock), the others create, cancel, retry and delete by
// writing to the database; the queue process notices within a second.
package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"outcore/engine/dataset"
	"outcore/experiments/executors"
	"outcore/experiments/external"
	"outcore/experiments/grid"
	"outcore/experiments/supervise"
	"outcore/gpu"
	"outcore/store"
)

// Sentinel errors callers branch on.
var (
	// ErrQueueBusy: another process runs this data directory's queue.
	ErrQueueBusy = errors.New("another outcore process is running the queue of this data directory")
	// ErrNotFound: no such experiment or run (wraps store.ErrNotFound).
	ErrNotFound = store.ErrNotFound
	// ErrConflict: the run or experiment is not in a state that allows the
	// action (wraps store.ErrConflict).
	ErrConflict = store.ErrConflict
)

// Options configure a Manager. DataDir and Store are required.
type Options struct {
	// DataDir holds datasets/, outcore.db, runs/ (per-run config and
	// stderr files) and queue.lock.
	DataDir string
	// Store is the open database of DataDir.
	Store *store.Store
	// Binary is the outcore executable children run as
	// `<Binary> train --config <file> --cgroup <group>` (experiments/supervise
	// appends --cgroup); default os.Executable().
	Binary string
	// Args replaces the default child arguments {"train", "--config"}; the
	// config file path and then `--cgroup <group>` are appended. Tests use it
	// to run a fake child.
	Args []string
	// Env is added to the children's environment.
	Env []string
	// Concurrency is how many local runs may run at once; default 1 (runs
	// compete for the same disk and cores).
	Concurrency int
	// Executor runs the runs of grids that name no "executor":
	// store.ExecutorLocal (default) or a registered executor
	// (experiments/executors).
	Executor string
	// Executors are the executors this queue offers (`serve --executor
	// local,NAME`); default: Executor alone. The executor is the
	// server's choice, not the grid's: a grid, an API request or `exp
	// create --executor` naming another is refused at creation, and the
	// queue claims only runs of these (docs/SECURITY.md).
	Executors []string
	// ExecutorOptions are the registered executors' own options, by
	// executor name (what their flags gave: executors.Registration's
	// Flags); an executor without an entry gets its defaults.
	ExecutorOptions map[string]any
	// DropCaches drops the page cache before each run when permitted
	// (root); whether it happened is recorded per run.
	DropCaches bool
	// KeepPageCache leaves the run's dataset files in the page cache
	// between runs. By default the runner evicts their clean pages before
	// each run (posix_fadvise DONTNEED, no root needed): a page cached by an
	// earlier run stays charged to that run's cgroup, so without eviction a
	// run would read from cache its own limit does not pay for.
	KeepPageCache bool
	// Finished, when set, is called with a run's id once its outcome is
	// stored (by any executor): the command line stores
	// the run's digest for the dashboard there (report.StoreRunDigest),
	// so that the first view of a large experiment does not read every
	// epoch. Its error is logged.
	Finished func(ctx context.Context, runID int64) error
	// KillGrace is how long a cancelled child has between SIGTERM and
	// SIGKILL; default 10 s.
	KillGrace time.Duration
	// StallAfter is how long a local run's child may write no record while
	// its process lives before the run is shown stalled (DESIGN §2 "A
	// run's lifecycle"); default StallSamples sample intervals
	// (metrics.SampleInterval: the engine writes a resource sample each).
	StallAfter time.Duration
	// NoCgroups runs children without memory cgroups (limit_enforced =
	// false, with the reason recorded), as on a machine without them.
	NoCgroups bool
	// GPU samples the GPU beside each run to fill samples the child sent
	// without GPU numbers; default gpu.Open() (no GPU: nothing is filled).
	GPU gpu.Sampler
	// MinMemory rejects limits a variant cannot start with; default
	// VariantMinMemory.
	MinMemory grid.MinMemoryFunc
	// External is the operator's registry of external systems (DESIGN
	// §14; `serve --systems FILE`, default <data dir>/systems.json): grids
	// may name its systems as "external:NAME"; nil registers none.
	External *external.Registry
	// Logf receives the runner's diagnostics; default discards them.
	Logf func(format string, args ...any)
}

// Manager creates experiments, runs their queue and publishes events. It
// is safe for concurrent use.
type Manager struct {
	opts Options
	st   *store.Store
	hub  *hub

	wake chan struct{} // a run was queued or a slot freed

	mu       sync.Mutex
	active   map[int64]*activeRun // running in this process
	running  bool                 // Run is active
	standby  bool                 // Standby waits for the queue lock
	draining bool                 // Drain was called
	closed   bool

	sup supervise.Supervisor // starts every run's child in its memory cgroup

	execs map[string]executors.Executor // by name: local and the registered ones
	seam  map[string]executors.Executor // the registered ones (executor_host.go)

	dbID string // store.Identity: the runs' directories are runs/<dbID>/<id>

	dsMu  sync.Mutex
	dsGen map[string]*sync.Mutex // per derived dataset being generated

	probe storageProbe // the measurement of this host's storage (io_floor.go)

	// claimMu is held from claiming a run until it is in active, so that
	// a run marked running in the store but absent from active is known
	// to be left over (see finishGhost).
	claimMu sync.Mutex

	// Fault injection for tests: writeFault fails a store write (before
	// it starts) and logFault a record-log write when they return an error.
	writeFault  func() error
	logFault    func() error
	executeHook func(store.Run) // called before each run starts
	loopHook    func()          // called at each turn of the queue loop
}

// New returns a Manager. It does not start the queue: call Run.
func New(opts Options) (*Manager, error) {
	if opts.DataDir == "" || opts.Store == nil {
		return nil, errors.New("experiments: Options.DataDir and Options.Store are required")
	}
	if opts.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("experiments: find the outcore binary: %w", err)
		}
		opts.Binary = exe
	}
	if opts.Args == nil {
		opts.Args = []string{"train", "--config"}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 1
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = 10 * time.Second
	}
	if opts.GPU == nil {
		opts.GPU = gpu.Open()
	}
	if opts.MinMemory == nil {
		opts.MinMemory = grid.VariantMinMemory
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Executor == "" {
		opts.Executor = store.ExecutorLocal
	}
	if err := grid.ValidExecutor(opts.Executor); err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	if len(opts.Executors) == 0 {
		opts.Executors = []string{opts.Executor}
	}
	for _, e := range opts.Executors {
		if err := grid.ValidExecutor(e); err != nil {
			return nil, fmt.Errorf("experiments: %w", err)
		}
	}
	if !slices.Contains(opts.Executors, opts.Executor) {
		return nil, fmt.Errorf("experiments: the default executor %q is not among the executors offered (%s)", opts.Executor, strings.Join(opts.Executors, ", "))
	}
	m := &Manager{
		opts:   opts,
		st:     opts.Store,
		wake:   make(chan struct{}, 1),
		active: map[int64]*activeRun{},
		dsGen:  map[string]*sync.Mutex{},
	}
	id, err := opts.Store.Identity(context.Background())
	if err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	m.dbID = id
	m.hub = newHub(opts.Store, opts.Logf)
	if m.seam, err = newSeamExecutors(m); err != nil {
		return nil, err
	}
	m.execs = map[string]executors.Executor{store.ExecutorLocal: localExecutor{m}}
	for name, e := range m.seam {
		m.execs[name] = e
	}
	return m, nil
}

// Store returns the database the manager writes to (for reads).
func (m *Manager) Store() *store.Store { return m.st }

// Close ends every subscription. Runs are stopped by cancelling Run's
// context, not by Close.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.hub.close()
	return m.opts.GPU.Close()
}

// update runs fn in a write transaction and wakes subscribers after the
// commit.
func (m *Manager) update(ctx context.Context, fn func(*store.Tx) error) error {
	if m.writeFault != nil {
		if err := m.writeFault(); err != nil {
			return err
		}
	}
	err := m.st.Update(ctx, fn)
	if err == nil {
		m.hub.kick()
	}
	return err
}

// updateRetry is update for writes that must not be lost (a run's
// outcome): it retries a failed write, backing off up to 2 s, until it
// commits, the database file is gone, or stop ends (the server is
// stopping; the next queue process recovers what is left).
func (m *Manager) updateRetry(stop, ctx context.Context, fn func(*store.Tx) error) error {
	wait := 100 * time.Millisecond
	for {
		err := m.update(ctx, fn)
		if err == nil || errors.Is(err, store.ErrGone) {
			return err
		}
		m.opts.Logf("store: %v (retrying)", err)
		select {
		case <-stop.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// signal wakes the queue loop.
func (m *Manager) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Subscribe returns the events written from now on, and a function that
// ends the subscription (it closes the channel). See SubscribeFrom.
func (m *Manager) Subscribe() (<-chan Event, func()) {
	last, err := m.st.LastEventID(context.Background())
	if err != nil {
		m.opts.Logf("subscribe: %v", err)
	}
	return m.hub.subscribe(last)
}

// SubscribeFrom returns every event with id > lastID, oldest first — the
// stored ones, then live ones as they are written — and a function that
// ends the subscription. An SSE handler passes the client's Last-Event-ID
// (0 for everything) and sends each event with its ID; a client that
// reconnects resumes without duplicates or gaps. A subscriber that reads
// slowly only falls behind: nothing is dropped and nothing is buffered for
// it beyond 64 events. Transient kinds (sample, progress) of finished runs
// are pruned from the log, so a late client does not see those.
func (m *Manager) SubscribeFrom(lastID int64) (<-chan Event, func()) {
	return m.hub.subscribe(lastID)
}

// Check lists every problem of a grid: its limits (Grid.Problems) and
// what the data directory and the variants say about it (datasets,
// variants, memory limits below what a variant needs to start, each run's
// configuration). pending names datasets a dataset job is about to make,
// with their meta as it will be. Create runs the same checks.
func (m *Manager) Check(g *grid.Grid, pending map[string]dataset.Meta) []grid.Problem {
	ps := grid.ProblemList(g.Problems())
	_, exec := m.chooseExecutor(g, CreateOptions{})
	ps = append(ps, exec...)
	_, _, more, _ := grid.Plan(g, m.world(pending), len(ps) == 0)
	return append(ps, more...)
}

// Refusals lists the cells of g that cannot start under their memory
// limit, each with its reason: the same check Create makes (plan with
// train.MinMemoryFor and the data directory), for the form's cell matrix.
func (m *Manager) Refusals(g *grid.Grid, pending map[string]dataset.Meta) []store.RefusedCell {
	if len(g.Problems()) > 0 {
		return nil
	}
	_, _, _, refused := grid.Plan(g, m.world(pending), true)
	return refused
}

// External is the registry of external systems grids may name (nil: none).
func (m *Manager) External() *external.Registry { return m.opts.External }

func (m *Manager) world(pending map[string]dataset.Meta) grid.World {
	return grid.World{DataDir: m.opts.DataDir, MinMem: m.opts.MinMemory, Pending: pending, External: m.opts.External}
}

// Create validates a grid file (see Grid), stores the experiment and
// queues its runs. Bad input is rejected with an *InvalidError (it wraps
// ErrInvalid) listing every problem in words; nothing is stored then.
func (m *Manager) Create(ctx context.Context, gridJSON []byte) (store.Experiment, error) {
	return m.CreateWith(ctx, gridJSON, CreateOptions{})
}

// CreateWith is Create with the command line's choices (the executor).
func (m *Manager) CreateWith(ctx context.Context, gridJSON []byte, co CreateOptions) (store.Experiment, error) {
	g, err := grid.ParseGrid(gridJSON)
	if g == nil {
		return store.Experiment{}, err
	}
	ps := grid.ProblemList(grid.ProblemsOf(err))
	executor, more := m.chooseExecutor(g, co)
	ps = append(ps, more...)
	specs, datasets, more, refused := grid.Plan(g, m.world(nil), len(ps) == 0)
	if g.Frontier != nil && len(ps)+len(more) == 0 {
		more = append(more, m.firstProbes(g, specs, datasets)...) // frontier.go: the first probe of every cell
	}
	if err := append(ps, more...).Err(); err != nil {
		return store.Experiment{}, err
	}
	base, err := json.Marshal(g.Base)
	if err != nil {
		return store.Experiment{}, fmt.Errorf("encode base config: %w", err)
	}
	e := store.Experiment{Name: g.Name, Dataset: g.Dataset, Grid: g.Raw, BaseConfig: base, Refused: refused}
	err = m.update(ctx, func(tx *store.Tx) error {
		for _, d := range datasets {
			if !d.Exists {
				continue
			}
			meta, _ := json.Marshal(d.Meta)
			row := store.Dataset{Name: d.Name, Path: filepath.Join(dataset.DatasetsDir(m.opts.DataDir), d.Name),
				Nodes: d.Meta.Nodes, Edges: d.Meta.Edges, FeatureDim: d.Meta.FeatureDim, Classes: d.Meta.Classes,
				Source: d.Meta.Source.Kind, Meta: meta}
			if err := tx.UpsertDataset(&row); err != nil {
				return err
			}
		}
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		for _, sp := range specs {
			cfg, err := json.Marshal(sp.Config)
			if err != nil {
				return fmt.Errorf("encode config of run %d: %w", sp.Seq, err)
			}
			r := store.Run{ExperimentID: e.ID, Seq: sp.Seq, System: sp.System, Dataset: sp.Dataset, Model: sp.Model,
				MemLimitBytes: sp.MemLimitBytes, FeatureDim: sp.FeatureDim, BatchSize: sp.BatchSize,
				Fanout: grid.FormatFanout(sp.Fanout), Repeat: sp.Repeat, Compute: sp.Compute, Config: cfg, Executor: executor}
			if err := tx.InsertRun(&r); err != nil {
				return err
			}
		}
		msg := fmt.Sprintf("created with %d runs", len(specs))
		if len(refused) > 0 {
			msg += fmt.Sprintf(", %d cell(s) refused: they cannot start (e.g. %s)", len(refused), refused[0].Reason)
		}
		if executor != store.ExecutorLocal {
			msg += " (executor " + executor + ")"
		}
		return tx.AppendEvent(&store.Event{ExperimentID: e.ID, Kind: store.EventExperiment,
			Msg: msg, Data: eventData(map[string]any{"action": "created", "runs": len(specs), "refused": len(refused), "executor": executor})})
	})
	if err != nil {
		return store.Experiment{}, fmt.Errorf("create experiment: %w", err)
	}
	m.signal()
	return m.st.Experiment(ctx, e.ID)
}

// CancelRun cancels one run: a queued run becomes cancelled at once; a
// running one is stopped (SIGTERM to its cgroup, SIGKILL after KillGrace)
// and ends as cancelled. The error wraps ErrConflict when the run has
// already finished.
func (m *Manager) CancelRun(ctx context.Context, runID int64) error {
	// A run of this process stops at once, even when the store cannot be
	// written (a full disk): its outcome is recorded when it can be.
	m.mu.Lock()
	ar := m.active[runID]
	m.mu.Unlock()
	if ar != nil {
		ar.stop(stopCancel)
	} else if done, err := m.finishGhost(ctx, runID, store.StatusCancelled, "cancelled; its child had already ended"); done || err != nil {
		return err
	}
	var r store.Run
	var state string
	err := m.update(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = tx.Run(runID); err != nil {
			return err
		}
		if ok, err := tx.CancelQueued(runID); err != nil {
			return err
		} else if ok {
			state = "cancelled"
			return tx.AppendEvent(statusEvent(r, store.StatusCancelled, "cancelled before it started"))
		}
		if ok, err := tx.RequestCancel(runID); err != nil {
			return err
		} else if ok {
			state = "stopping"
			return tx.AppendEvent(&store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: store.EventLog,
				Msg: "cancel requested"})
		}
		return fmt.Errorf("cancel run %d: it is %s: %w", runID, r.Status, ErrConflict)
	})
	if err != nil {
		return err
	}
	if state == "stopping" {
		m.mu.Lock()
		ar := m.active[runID]
		m.mu.Unlock()
		if ar != nil {
			ar.stop(stopCancel)
		}
	}
	return nil
}

// finishGhost ends a run the store says is running although no child of
// it runs: this process holds the queue (so no other process runs it) and
// has no child for it. Its outcome becomes status with msg. done says
// whether the run was such a ghost.
func (m *Manager) finishGhost(ctx context.Context, runID int64, status, msg string) (done bool, err error) {
	if !m.Running() {
		return false, nil
	}
	m.claimMu.Lock() // a run being claimed is not a ghost
	defer m.claimMu.Unlock()
	m.mu.Lock()
	active := m.active[runID] != nil
	m.mu.Unlock()
	if active {
		return false, nil
	}
	err = m.update(ctx, func(tx *store.Tx) error {
		r, err := tx.Run(runID)
		if err != nil || r.Status != store.StatusRunning || r.Executor != store.ExecutorLocal {
			return err // another executor's run outlives the process that submitted it
		}
		ok, err := tx.FinishRun(runID, store.RunEnd{Status: status, Error: msg})
		if err != nil || !ok {
			return err
		}
		done = true
		return tx.AppendEvent(statusEvent(r, status, status+": "+msg))
	})
	return done, err
}

// CancelExperiment cancels every queued or running run of an experiment
// and returns how many it cancelled.
func (m *Manager) CancelExperiment(ctx context.Context, id int64) (int, error) {
	if _, err := m.st.Experiment(ctx, id); err != nil {
		return 0, err
	}
	runs, err := m.st.Runs(ctx, store.RunFilter{ExperimentID: id, Statuses: []string{store.StatusQueued, store.StatusRunning}})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range runs {
		if err := m.CancelRun(ctx, r.ID); err != nil {
			if errors.Is(err, ErrConflict) {
				continue // finished meanwhile
			}
			return n, err
		}
		n++
	}
	return n, nil
}

// RetryRun queues a new attempt of a finished run (any outcome) at the
// end of the queue and returns it; the old run is kept, marked superseded.
// The error wraps ErrConflict when the run is queued, running or was
// already retried.
func (m *Manager) RetryRun(ctx context.Context, runID int64) (store.Run, error) {
	var nr store.Run
	err := m.update(ctx, func(tx *store.Tx) error {
		r, err := tx.Run(runID)
		if err != nil {
			return err
		}
		if !slices.Contains(m.opts.Executors, r.Executor) {
			// The executor is the server's choice (chooseExecutor).
			return fmt.Errorf("retry run %d: it runs on the %s executor, which this server does not offer (it runs %s): %w",
				runID, r.Executor, strings.Join(m.opts.Executors, ", "), ErrConflict)
		}
		if nr, err = tx.RetryRun(runID); err != nil {
			return err
		}
		return tx.AppendEvent(statusEvent(nr, store.StatusQueued, fmt.Sprintf("attempt %d of run %d queued", nr.Attempt, runID)))
	})
	if err != nil {
		return store.Run{}, err
	}
	m.signal()
	return nr, nil
}

// RetryExperiment retries every current run of an experiment that ended
// failed, cancelled or interrupted (not done, and not oom: an OOM is a
// result; retry those one by one with RetryRun). It returns the new runs.
func (m *Manager) RetryExperiment(ctx context.Context, id int64) ([]store.Run, error) {
	if _, err := m.st.Experiment(ctx, id); err != nil {
		return nil, err
	}
	runs, err := m.st.Runs(ctx, store.RunFilter{ExperimentID: id, Current: true,
		Statuses: []string{store.StatusFailed, store.StatusCancelled, store.StatusInterrupted}})
	if err != nil {
		return nil, err
	}
	var out []store.Run
	for _, r := range runs {
		nr, err := m.RetryRun(ctx, r.ID)
		if err != nil {
			return out, err
		}
		out = append(out, nr)
	}
	return out, nil
}

// DeleteExperiment cancels the experiment's runs, waits until none is
// running (at most KillGrace plus 30 s), then deletes the experiment with
// its runs, epochs, samples, events and run files.
func (m *Manager) DeleteExperiment(ctx context.Context, id int64) error {
	if _, err := m.CancelExperiment(ctx, id); err != nil {
		return err
	}
	deadline := time.Now().Add(m.opts.KillGrace + 30*time.Second)
	var runs []store.Run
	for {
		var err error
		runs, err = m.st.Runs(ctx, store.RunFilter{ExperimentID: id})
		if err != nil {
			return err
		}
		running := 0
		for _, r := range runs {
			if r.Status == store.StatusRunning {
				running++
			}
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("delete experiment %d: %d run(s) still running after cancel: %w", id, running, ErrConflict)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	err := m.update(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteExperiment(id); err != nil {
			return err
		}
		return tx.AppendEvent(&store.Event{ExperimentID: id, Kind: store.EventExperiment, Msg: "deleted",
			Data: eventData(map[string]any{"action": "deleted"})})
	})
	if err != nil {
		return err
	}
	for _, r := range runs {
		os.RemoveAll(m.runDir(r.ID))
	}
	return nil
}

// finished advances the run's experiment when it is a memory-frontier
// search (frontier_run.go) and runs Options.Finished for a run whose
// outcome was stored.
func (m *Manager) finished(ctx context.Context, runID int64) {
	if r, err := m.st.Run(ctx, runID); err == nil {
		if _, err := m.AdvanceFrontier(ctx, r.ExperimentID, runID); err != nil {
			m.opts.Logf("run %d: memory frontier: %v", runID, err)
		}
	}
	if m.opts.Finished == nil {
		return
	}
	if err := m.opts.Finished(ctx, runID); err != nil {
		m.opts.Logf("run %d: after its end: %v", runID, err)
	}
}

// SetExperimentMeta renames an experiment and replaces its notes and tags
// (store.Tx.SetExperimentMeta); pages showing it update live.
func (m *Manager) SetExperimentMeta(ctx context.Context, id int64, meta store.ExperimentMeta) error {
	return m.update(ctx, func(tx *store.Tx) error {
		if err := tx.SetExperimentMeta(id, meta); err != nil {
			return err
		}
		return tx.AppendEvent(&store.Event{ExperimentID: id, Kind: store.EventExperiment, Msg: "edited",
			Data: eventData(map[string]any{"action": "edited"})})
	})
}

// runDir is where a run's config, stderr and records files live:
// runs/<database identity>/<run id>, so that a database created again
// (its run ids restart at 1) never shares a run's files with an older one
// (store.Identity; runs/<run id> for a database older than identities).
func (m *Manager) runDir(id int64) string {
	return filepath.Join(m.opts.DataDir, m.runDirRel(id))
}

// runDirRel is runDir relative to the data directory, for messages.
func (m *Manager) runDirRel(id int64) string {
	return filepath.Join("runs", m.dbID, fmt.Sprint(id))
}

// freshRunDir creates the directory of a run that starts for the first
// time. One that exists already and holds files is an older run's (a
// database older than identities, created again): it is moved aside to
// <dir>.stale-<time>, never appended to, so that no record of it can be
// ingested as the new run's.
func (m *Manager) freshRunDir(r store.Run) (string, error) {
	dir := m.runDir(r.ID)
	if des, err := os.ReadDir(dir); err == nil && len(des) > 0 {
		aside := fmt.Sprintf("%s.stale-%d", dir, time.Now().UnixNano())
		if err := os.Rename(dir, aside); err != nil {
			return "", fmt.Errorf("run directory %s holds an older run's files and cannot be moved aside: %w", dir, err)
		}
		m.logEvent(r, "warn", fmt.Sprintf("the run directory %s held files of an older run (a database created again); moved them to %s",
			m.runDirRel(r.ID), filepath.Base(aside)))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

func eventData(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// statusEvent is the event of a run entering status.
func statusEvent(r store.Run, status, msg string) *store.Event {
	return &store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: store.EventStatus, Msg: msg,
		Data: eventData(map[string]any{"status": status, "system": r.System, "mem_limit_bytes": r.MemLimitBytes,
			"repeat": r.Repeat, "attempt": r.Attempt, "seq": r.Seq})}
}
