package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/train"
	"outcore/experiments/executors"
	"outcore/experiments/grid"
	"outcore/experiments/outcome"
	"outcore/experiments/supervise"
	"outcore/internal/cgroup"
	"outcore/internal/osutil"
	"outcore/internal/units"
	"outcore/store"
)

// lenientWriter writes to w until the first error, then drops what it is
// given (and says it wrote it), so that a tee never stops on it.
type lenientWriter struct {
	w   io.Writer
	err error
}

func (l *lenientWriter) Write(p []byte) (int, error) {
	if l.err == nil {
		_, l.err = l.w.Write(p)
	}
	return len(p), nil
}

// logEvent appends a log event for a run now.
func (m *Manager) logEvent(r store.Run, level, msg string) {
	err := m.update(context.Background(), func(tx *store.Tx) error {
		return tx.AppendEvent(&store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: store.EventLog, Level: level, Msg: msg})
	})
	if err != nil {
		m.opts.Logf("run %d: %v", r.ID, err)
	}
}

// stoppedEnd is the outcome of a run stopped before its child started.
func stoppedEnd(ar *activeRun, start time.Time) (store.RunEnd, bool) {
	return stopEnd(ar.stopReason(), start)
}

// stopEnd is the outcome of a run stopped for reason before its child
// started (ok false: no reason).
func stopEnd(reason stopReason, start time.Time) (store.RunEnd, bool) {
	switch reason {
	case stopCancel:
		return store.RunEnd{Status: store.StatusCancelled, Error: "cancelled before the child started", TotalS: time.Since(start).Seconds()}, true
	case stopShutdown:
		return store.RunEnd{Status: store.StatusInterrupted, Error: "the server stopped before the child started", TotalS: time.Since(start).Seconds()}, true
	}
	return store.RunEnd{}, false
}

// launch prepares a local run and starts its child: `outcore train
// --config FILE --cgroup PATH`, in its memory cgroup from its first
// instruction (experiments/supervise). It returns the child as the run's
// job, or the end of a run that could not start.
func (m *Manager) launch(ctx context.Context, r store.Run, run executors.Run) (executors.Job, *store.RunEnd) {
	start := time.Now()
	ended := func(end store.RunEnd) (executors.Job, *store.RunEnd) { return nil, &end }
	// stopped: the run was stopped, or the queue process is stopping
	// (interrupted), before its child started.
	stopped := func() (store.RunEnd, bool) {
		if end, ok := run.StoppedEnd(start); ok {
			return end, true
		}
		if ctx.Err() != nil {
			return stopEnd(stopShutdown, start)
		}
		return store.RunEnd{}, false
	}
	if err := m.ensureDataset(ctx, r); err != nil {
		if end, ok := stopped(); ok {
			return ended(end)
		}
		return ended(outcome.Failed(start, "prepare dataset %s: %v", r.Dataset, err))
	}
	if end, ok := stopped(); ok {
		return ended(end)
	}
	// The floor the grid was checked against at creation, again now that
	// the dataset exists (a derived dataset was just made): the same
	// check the child makes first (train.CheckFeasible).
	if err := checkFeasible(r, m.opts.DataDir); err != nil && !grid.IsExternal(r.System) {
		return ended(outcome.Failed(start, "refused before it started: %v", err))
	}
	// The storage the run reads, measured once on this host before its
	// first run (io_floor.go): the run's epochs get their I/O floor.
	m.ensureStorage(ctx, r)
	if end, ok := stopped(); ok {
		return ended(end)
	}

	dropped := false
	if m.opts.DropCaches {
		if err := osutil.DropAllCaches(); err != nil {
			m.logEvent(r, "warn", fmt.Sprintf("page cache not dropped before the run: %v", err))
		} else {
			dropped = true
			m.logEvent(r, "info", "page cache dropped before the run")
		}
	}

	dir, err := m.freshRunDir(r)
	if err != nil {
		return ended(outcome.Failed(start, "create run directory: %v", err))
	}
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, append(append([]byte(nil), r.Config...), '\n'), 0o644); err != nil {
		return ended(outcome.Failed(start, "write run config: %v", err))
	}
	errFile, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return ended(outcome.Failed(start, "create stderr log: %v", err))
	}

	// The child's stdout lines wait in lines (256 of them, then the child
	// waits) for the queue's loop (follow) to hand them to the ingester.
	j := &localJob{m: m, r: r, start: start, dir: dir, tail: supervise.NewTail(supervise.TailBytes),
		lines: make(chan executors.Item, 256), wake: make(chan struct{}, 1)}
	spec := supervise.Spec{
		Path: m.opts.Binary, Args: append(append([]string(nil), m.opts.Args...), cfgPath),
		Dir: dir, Env: m.opts.Env,
		Name:  fmt.Sprintf("run%d", r.ID),
		Limit: r.MemLimitBytes,
		Lines: j.line,
		// Stderr: the file keeps it all, the tail the end for the record.
		// A failing file (a full disk) must not stop the copy, or the
		// child would block writing to stderr.
		Stderr: io.MultiWriter(j.tail, &lenientWriter{w: errFile}),
	}
	if m.opts.NoCgroups {
		spec.NoCgroup = "memory cgroups disabled by the runner's options"
	}
	if !m.opts.KeepPageCache {
		spec.Evict = filepath.Join(dataset.DatasetsDir(m.opts.DataDir), r.Dataset)
	}
	// Variants make their scratch folders in the data directory; the
	// supervisor removes what a killed child left there.
	spec.Scratch = m.opts.DataDir
	var ext *externalRun // an external system's program (runner_external_linux.go)
	if grid.IsExternal(r.System) {
		if ext, err = m.prepareExternal(r, dir, j, &spec); err != nil {
			errFile.Close()
			return ended(outcome.Failed(start, "%v", err))
		}
	}
	j.host = hostFacts(m.opts.DataDir, m.opts.GPU.Name())
	child, err := m.sup.Start(spec)
	if err != nil {
		errFile.Close()
		if ext != nil {
			ext.stdout.Close()
		}
		return ended(outcome.Failed(start, "start %s: %v", spec.Path, err))
	}
	j.child = child
	j.group.Store(child.Group()) // samples from now on carry the group's usage on arrival
	if spec.Evict != "" {
		if n, err := child.Evicted(); err != nil {
			m.logEvent(r, "warn", fmt.Sprintf("dataset pages not evicted from the page cache: %v", err))
		} else {
			dropped = true // the dataset's pages are out of the page cache: the run reads them from the device
			m.logEvent(r, "info", fmt.Sprintf("evicted the page cache of %d dataset files (fadvise DONTNEED)", n))
		}
	}
	j.enforced, j.note, j.dropped = child.Enforced(), child.Note(), dropped
	if r.MemLimitBytes > 0 && !j.enforced {
		m.logEvent(r, "warn", fmt.Sprintf("memory limit %s NOT enforced: %s", units.Bytes(r.MemLimitBytes), j.note))
	}
	if ext != nil {
		ext.begin()
	}
	go func() {
		j.res = child.Wait() // after the child's last line
		if ext != nil {
			ext.end(j.res)
		}
		errFile.Close()
		close(j.lines)
		j.signal()
	}()
	return j, nil
}

// localJob is a local run's child as the queue's loop follows it.
type localJob struct {
	m     *Manager
	r     store.Run
	start time.Time
	dir   string
	tail  *supervise.Tail // the end of its stderr
	host  metrics.HostFacts
	child *supervise.Child
	group atomic.Pointer[cgroup.Group]

	enforced, dropped bool
	note              string

	lines    chan executors.Item // closed after the child's last line
	wake     chan struct{}
	res      *supervise.Result // set before lines is closed
	stopOnce sync.Once
}

var _ executors.Job = (*localJob)(nil)

// line takes one stdout line of the child (supervise.Spec.Lines), with
// the cgroup's usage now for a sample: the loop may handle it long after
// (store writes are slow on a loaded host), when the child may have ended
// and its group been removed (the supervisor removes it only after its
// last call returned).
func (j *localJob) line(b []byte) {
	var usage int64
	if isSample(b) {
		if grp := j.group.Load(); grp != nil {
			usage, _ = grp.Usage()
		}
	}
	j.lines <- executors.Item{Line: b, Usage: usage}
	j.signal()
}

func (j *localJob) signal() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

func (j *localJob) Run() store.Run             { return j.r }
func (j *localJob) Records() executors.Records { return executors.Records{} } // a stream: the record log keeps it
func (j *localJob) Wake() <-chan struct{}      { return j.wake }
func (j *localJob) Poll() time.Duration        { return time.Second }
func (j *localJob) Outlives() bool             { return false }
func (j *localJob) State() executors.State     { return executors.State{} } // its status says it all
func (j *localJob) Cancel(context.Context) (string, error) {
	// SIGTERM to the process group and the cgroup, SIGKILL after the
	// grace period; the loop goes on reading the child's last lines.
	j.stopOnce.Do(func() { go j.child.Stop(j.m.opts.KillGrace) })
	return "", nil
}

// Follow returns the lines that arrived; ended once the child has exited
// and its last line was returned.
func (j *localJob) Follow(context.Context) ([]executors.Item, bool) {
	var items []executors.Item
	for len(items) < cap(j.lines) {
		select {
		case it, ok := <-j.lines:
			if !ok {
				return items, true
			}
			items = append(items, it)
		default:
			return items, false
		}
	}
	j.signal() // more may wait
	return items, false
}

// attach records the child's start facts (queued first, before any
// record) and starts the ingester with what this host sees of the child:
// its cgroup, the machine, and, for a child whose records stop while its
// process lives, the cause the host tells (stall.go).
func (j *localJob) attach(ing *ingester) {
	m, r := j.m, j.r
	cgPath := ""
	if g := j.child.Group(); g != nil {
		cgPath = g.Path
	}
	pid := j.child.Pid()
	hostJSON, _ := json.Marshal(j.host)
	enforced, note, dropped := j.enforced, j.note, j.dropped
	ing.write(true, func(tx *store.Tx) error { // before the loop starts: queued in order
		if err := tx.SetRunStarted(r.ID, store.RunStart{PID: pid, LimitEnforced: enforced, LimitNote: note,
			CgroupPath: cgPath, CacheDropped: dropped, Host: hostJSON, OutcoreVersion: Version(), GoVersion: runtime.Version()}); err != nil {
			return err
		}
		ev := statusEvent(r, store.StatusRunning, fmt.Sprintf("running as pid %d (%s)", pid, note))
		return tx.AppendEvent(ev)
	})
	ing.watchStall(m.opts.StallAfter, func() stallFacts { return m.childStallFacts(pid, j.dir, j.tail) })
	ing.start(j.child.Group(), j.host)
}

// Wait reports how the child ended (the supervisor's result: exit, the
// one OOM rule of experiments/supervise) and the verdict of the local
// runner's rules.
func (j *localJob) Wait(context.Context) executors.Exit {
	res := j.res
	m, r := j.m, j.r
	for _, d := range res.ScratchRemoved {
		m.logEvent(r, "info", fmt.Sprintf("removed the scratch folder %s the run left behind", d))
	}
	if res.ScratchErr != nil {
		m.logEvent(r, "warn", res.ScratchErr.Error())
	}
	e := executors.Exit{Started: j.start, StderrTail: j.tail.String(), PeakMemory: res.PeakBytes,
		NoSummary: "the child exited 0 without a summary record"}
	switch {
	case res.Signal != 0:
		e.Signal = signalName(res.Signal)
	case res.ExitCode >= 0:
		code := res.ExitCode
		e.ExitCode = &code
	}
	tail := j.tail
	e.Verdict = func(v executors.Verdict) (string, string) { return localVerdict(r, res, tail.LastLine(), v) }
	return e
}

// localVerdict is how a local run ended: its child's exit (and the OOM
// rule of experiments/supervise), the summary's outcome and why the queue
// stopped it; lastLine is the child's last line on stderr.
func localVerdict(r store.Run, res *supervise.Result, lastLine string, v executors.Verdict) (status, reason string) {
	exitedOK := res.ExitCode == 0
	switch {
	case exitedOK && v.Summary == store.StatusDone:
		return store.StatusDone, ""
	case v.Cancelled:
		return store.StatusCancelled, "cancelled while running"
	case v.Shutdown:
		return store.StatusInterrupted, "the server stopped while the run was running"
	case res.OOM:
		reason = fmt.Sprintf("out of memory at the limit of %s", units.Bytes(r.MemLimitBytes))
		if raised := res.RaisedLimit(); raised > 0 {
			// the group's own limit: the budget and what the run held
			// outside it (the model step, see the deviations)
			reason = fmt.Sprintf("out of memory at its cgroup limit of %s (the %s budget + %s held outside it)",
				units.Bytes(raised), units.Bytes(r.MemLimitBytes), units.Bytes(raised-r.MemLimitBytes))
		}
		if res.OOMKills > 0 {
			reason += fmt.Sprintf(" (the kernel's OOM killer killed %d process(es) of the run's cgroup)", res.OOMKills)
		} else {
			reason += " (SIGKILL under the limit without a summary)"
		}
		return store.StatusOOM, reason
	case exitedOK && (v.Summary == "" || v.Summary == store.StatusDone):
		return store.StatusDone, ""
	}
	waitErr := res.Err
	switch {
	case v.SummaryErr != "":
		reason = v.SummaryErr
	case waitErr != nil && lastLine != "":
		reason = fmt.Sprintf("%v: %s", waitErr, lastLine)
	case waitErr != nil:
		reason = waitErr.Error()
	default:
		reason = fmt.Sprintf("the child reported outcome %q", v.Summary)
	}
	return store.StatusFailed, reason
}

func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGSEGV: "SIGSEGV",
		syscall.SIGABRT: "SIGABRT", syscall.SIGINT: "SIGINT", syscall.SIGBUS: "SIGBUS", syscall.SIGPIPE: "SIGPIPE"}
	if n, ok := names[s]; ok {
		return n
	}
	return s.String()
}

// ensureDataset makes sure the run's dataset exists, generating a derived
// <dataset>-d<dim> or <dataset>-ids-<numbering> (grid.IDsDataset) from its
// base's generator config when needed. The generation runs in this
// process (outside the run's cgroup and clock).
func (m *Manager) ensureDataset(ctx context.Context, r store.Run) error {
	dsDir := dataset.DatasetsDir(m.opts.DataDir)
	if fileExists(filepath.Join(dsDir, r.Dataset, dataset.MetaFile)) {
		return nil
	}
	e, err := m.st.Experiment(ctx, r.ExperimentID)
	if err != nil {
		return err
	}
	ids, isIDs := grid.IDsOfName(e.Dataset, r.Dataset)
	if r.Dataset == e.Dataset || (!isIDs && r.Dataset != grid.DerivedName(e.Dataset, r.FeatureDim)) {
		return fmt.Errorf("dataset %q not found in %s", r.Dataset, dsDir)
	}
	m.dsMu.Lock()
	mu := m.dsGen[r.Dataset]
	if mu == nil {
		mu = &sync.Mutex{}
		m.dsGen[r.Dataset] = mu
	}
	m.dsMu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if fileExists(filepath.Join(dsDir, r.Dataset, dataset.MetaFile)) {
		return nil
	}
	base, err := dataset.ReadMeta(filepath.Join(dsDir, e.Dataset))
	if err != nil {
		return err
	}
	if base.Source.Generator == nil {
		return fmt.Errorf("base dataset %q was not generated; cannot derive %q", e.Dataset, r.Dataset)
	}
	cfg := *base.Source.Generator
	how := fmt.Sprintf("at feature_dim %d", r.FeatureDim)
	if isIDs {
		cfg = cfg.WithIDs(ids == grid.IDsLocal)
		how = fmt.Sprintf("with %s node ids: the same graph renumbered", ids)
	} else {
		cfg.FeatureDim = r.FeatureDim
	}
	m.logEvent(r, "info", fmt.Sprintf("generating dataset %s (%s %s, same generator config and seed)", r.Dataset, e.Dataset, how))
	t0 := time.Now()
	if _, err := dataset.GenerateWith(ctx, dsDir, r.Dataset, cfg, dataset.GenOptions{Preset: base.Source.Preset, NoIndptr: true}); err != nil {
		return err
	}
	m.logEvent(r, "info", fmt.Sprintf("generated dataset %s in %.1f s", r.Dataset, time.Since(t0).Seconds()))
	if meta, err := dataset.ReadMeta(filepath.Join(dsDir, r.Dataset)); err == nil {
		raw, _ := json.Marshal(meta)
		m.update(ctx, func(tx *store.Tx) error {
			return tx.UpsertDataset(&store.Dataset{Name: meta.Name, Path: filepath.Join(dsDir, meta.Name), Nodes: meta.Nodes,
				Edges: meta.Edges, FeatureDim: meta.FeatureDim, Classes: meta.Classes, Source: meta.Source.Kind, Meta: raw})
		})
	}
	return nil
}

// checkFeasible is train.CheckFeasible of a run's configuration on its
// dataset (nil when either cannot be read: the child reports that).
func checkFeasible(r store.Run, dataDir string) error {
	cfg, err := train.ParseConfig(r.Config)
	if err != nil {
		return nil
	}
	meta, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(dataDir), r.Dataset))
	if err != nil {
		return nil
	}
	return train.CheckFeasible(cfg, meta)
}

// fileExists reports whether p exists.
func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
