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
	"syscall"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments/grid"
	"outcore/experiments/outcome"
	"outcore/experiments/supervise"
	"outcore/internal/osutil"
	"outcore/internal/units"
	"outcore/store"
)

// execute runs one claimed run to its outcome (recorded by Manager.record).
func (m *Manager) execute(ctx context.Context, r store.Run, ar *activeRun) outcome.Outcome {
	runDone := make(chan struct{})
	defer close(runDone)
	go func() {
		select {
		case <-ctx.Done():
			ar.stop(stopShutdown)
		case <-runDone:
		}
	}()
	return m.runChild(ctx, r, ar)
}

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
	switch ar.stopReason() {
	case stopCancel:
		return store.RunEnd{Status: store.StatusCancelled, Error: "cancelled before the child started", TotalS: time.Since(start).Seconds()}, true
	case stopShutdown:
		return store.RunEnd{Status: store.StatusInterrupted, Error: "the server stopped before the child started", TotalS: time.Since(start).Seconds()}, true
	}
	return store.RunEnd{}, false
}

// runChild prepares and runs the child of one run and says how it ended.
func (m *Manager) runChild(ctx context.Context, r store.Run, ar *activeRun) outcome.Outcome {
	start := time.Now()
	if err := m.ensureDataset(ctx, r); err != nil {
		if end, ok := stoppedEnd(ar, start); ok {
			return outcome.Ended(end)
		}
		return outcome.Ended(outcome.Failed(start, "prepare dataset %s: %v", r.Dataset, err))
	}
	if end, ok := stoppedEnd(ar, start); ok {
		return outcome.Ended(end)
	}
	// The floor the grid was checked against at creation, again now that
	// the dataset exists (a derived dataset was just made): the same
	// check the child makes first (train.CheckFeasible).
	if err := checkFeasible(r, m.opts.DataDir); err != nil {
		return outcome.Ended(outcome.Failed(start, "refused before it started: %v", err))
	}
	// The storage the run reads, measured once on this host before its
	// first run (io_floor.go): the run's epochs get their I/O floor.
	m.ensureStorage(ctx, r)
	if end, ok := stoppedEnd(ar, start); ok {
		return outcome.Ended(end)
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
		return outcome.Ended(outcome.Failed(start, "create run directory: %v", err))
	}
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, append(append([]byte(nil), r.Config...), '\n'), 0o644); err != nil {
		return outcome.Ended(outcome.Failed(start, "write run config: %v", err))
	}
	errFile, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return outcome.Ended(outcome.Failed(start, "create stderr log: %v", err))
	}
	defer errFile.Close()

	// The child, in its memory cgroup from its first instruction
	// (experiments/supervise): `outcore train --config FILE --cgroup PATH`.
	// The ingester keeps every write the store refuses and retries it while
	// the training goes on (the record log holds the lines); a line the
	// record log refuses stops the run (it then fails with the reason).
	ing := newChildIngester(m, r, ctx, func(reason string) { ar.fail(reason) })
	tail := supervise.NewTail(supervise.TailBytes)
	spec := supervise.Spec{
		Path: m.opts.Binary, Args: append(append([]string(nil), m.opts.Args...), cfgPath),
		Dir: dir, Env: m.opts.Env,
		Name:  fmt.Sprintf("run%d", r.ID),
		Limit: r.MemLimitBytes,
		Lines: ing.receive,
		// Stderr: the file keeps it all, the tail the end for the record.
		// A failing file (a full disk) must not stop the copy, or the
		// child would block writing to stderr.
		Stderr: io.MultiWriter(tail, &lenientWriter{w: errFile}),
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
	host := hostFacts(m.opts.DataDir, m.opts.GPU.Name())
	child, err := m.sup.Start(spec)
	if err != nil {
		return outcome.Ended(outcome.Failed(start, "start %s: %v", m.opts.Binary, err))
	}
	ing.watchGroup(child.Group()) // samples from now on carry the group's usage on arrival
	if spec.Evict != "" {
		if n, err := child.Evicted(); err != nil {
			m.logEvent(r, "warn", fmt.Sprintf("dataset pages not evicted from the page cache: %v", err))
		} else {
			dropped = true // the dataset's pages are out of the page cache: the run reads them from the device
			m.logEvent(r, "info", fmt.Sprintf("evicted the page cache of %d dataset files (fadvise DONTNEED)", n))
		}
	}
	enforced, note := child.Enforced(), child.Note()
	if r.MemLimitBytes > 0 && !enforced {
		m.logEvent(r, "warn", fmt.Sprintf("memory limit %s NOT enforced: %s", units.Bytes(r.MemLimitBytes), note))
	}
	cgPath := ""
	if g := child.Group(); g != nil {
		cgPath = g.Path
	}
	pid := child.Pid()
	hostJSON, _ := json.Marshal(host)
	ing.write(true, func(tx *store.Tx) error { // before the loop starts: queued in order
		if err := tx.SetRunStarted(r.ID, store.RunStart{PID: pid, LimitEnforced: enforced, LimitNote: note,
			CgroupPath: cgPath, CacheDropped: dropped, Host: hostJSON, OutcoreVersion: Version(), GoVersion: runtime.Version()}); err != nil {
			return err
		}
		ev := statusEvent(r, store.StatusRunning, fmt.Sprintf("running as pid %d (%s)", pid, note))
		return tx.AppendEvent(ev)
	})
	// A child whose records stop while its process lives is shown stalled,
	// with the cause the host tells (stall.go).
	ing.watchStall(m.opts.StallAfter, func() stallFacts { return m.childStallFacts(pid, dir, tail) })
	ing.start(child.Group(), host)

	// Stopping: SIGTERM to the process group and the cgroup, SIGKILL after
	// the grace period.
	var stopWG sync.WaitGroup
	stopWG.Add(1)
	go func() {
		defer stopWG.Done()
		select {
		case <-child.Done():
		case <-ar.stopCh:
			child.Stop(m.opts.KillGrace)
		}
	}()
	res := child.Wait()
	for _, d := range res.ScratchRemoved {
		m.logEvent(r, "info", fmt.Sprintf("removed the scratch folder %s the run left behind", d))
	}
	if res.ScratchErr != nil {
		m.logEvent(r, "warn", res.ScratchErr.Error())
	}
	stopWG.Wait()
	ing.closeAndWait()

	return m.outcome(r, res, ar, ing, tail, start)
}

// outcome decides how a run ended from the supervisor's result (exit,
// the one OOM rule of experiments/supervise), the stop reason and the child's
// summary.
func (m *Manager) outcome(r store.Run, res *supervise.Result, ar *activeRun, ing *ingester, tail *supervise.Tail, start time.Time) outcome.Outcome {
	var out outcome.Outcome
	end := store.RunEnd{StderrTail: tail.String(), TotalS: time.Since(start).Seconds()}
	got := ing.result()
	summary, summaryRaw := got.Summary, got.SummaryRaw
	end.PeakRSSBytes, end.PeakCgroupBytes = got.PeakRSS, got.PeakCgroup
	unstored := got.unstored
	storeErr := got.LastErr
	if summary != nil {
		end.Summary = summaryRaw
		if summary.TotalS > 0 {
			end.TotalS = summary.TotalS
		}
		end.PeakRSSBytes = max(end.PeakRSSBytes, summary.PeakRSSBytes)
		end.PeakCgroupBytes = max(end.PeakCgroupBytes, summary.PeakCgroupBytes)
	}
	end.PeakCgroupBytes = max(end.PeakCgroupBytes, res.PeakBytes)
	exitedOK := res.ExitCode == 0
	switch {
	case res.Signal != 0:
		end.Signal = signalName(res.Signal)
	case res.ExitCode >= 0:
		code := res.ExitCode
		end.ExitCode = &code
	}
	summaryOutcome := ""
	if summary != nil {
		summaryOutcome = summary.Outcome
	}
	waitErr := res.Err
	reason := ar.stopReason()
	switch {
	case reason == stopFailed:
		end.Status = store.StatusFailed
		end.Error = fmt.Sprintf("%s: the run's records could not be kept, so the run was stopped (what the child reported is in %s, or in memory until it can be written, and stored once the write succeeds)",
			ar.failReason(), filepath.Join(m.runDirRel(r.ID), RecordLogFile))
	case exitedOK && summaryOutcome == store.StatusDone:
		end.Status = store.StatusDone
	case reason == stopCancel:
		end.Status, end.Error = store.StatusCancelled, "cancelled while running"
	case reason == stopShutdown:
		end.Status, end.Error = store.StatusInterrupted, "the server stopped while the run was running"
	case res.OOM:
		end.Status = store.StatusOOM
		end.Error = fmt.Sprintf("out of memory at the limit of %s", units.Bytes(r.MemLimitBytes))
		if raised := res.RaisedLimit(); raised > 0 {
			// the group's own limit: the budget and what the run held
			// outside it (the model step, see the deviations)
			end.Error = fmt.Sprintf("out of memory at its cgroup limit of %s (the %s budget + %s held outside it)",
				units.Bytes(raised), units.Bytes(r.MemLimitBytes), units.Bytes(raised-r.MemLimitBytes))
		}
		if res.OOMKills > 0 {
			end.Error += fmt.Sprintf(" (the kernel's OOM killer killed %d process(es) of the run's cgroup)", res.OOMKills)
		} else {
			end.Error += " (SIGKILL under the limit without a summary)"
		}
	case exitedOK && (summaryOutcome == "" || summaryOutcome == store.StatusDone):
		end.Status = store.StatusDone
		if summary == nil {
			out.Note("warn", "the child exited 0 without a summary record")
		}
	default:
		end.Status = store.StatusFailed
		switch {
		case summary != nil && summary.Error != "":
			end.Error = summary.Error
		case waitErr != nil && tail.LastLine() != "":
			end.Error = fmt.Sprintf("%v: %s", waitErr, tail.LastLine())
		case waitErr != nil:
			end.Error = waitErr.Error()
		default:
			end.Error = fmt.Sprintf("the child reported outcome %q", summaryOutcome)
		}
	}
	if unstored > 0 {
		out.Note("error", fmt.Sprintf("%d record write(s) could not be stored (%s); the next start ingests them from the record log", unstored, storeErr))
	}
	out.End = end
	return out
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
// <dataset>-d<dim> from its base's generator config when needed. The
// generation runs in this process (outside the run's cgroup and clock).
func (m *Manager) ensureDataset(ctx context.Context, r store.Run) error {
	dsDir := dataset.DatasetsDir(m.opts.DataDir)
	if fileExists(filepath.Join(dsDir, r.Dataset, dataset.MetaFile)) {
		return nil
	}
	e, err := m.st.Experiment(ctx, r.ExperimentID)
	if err != nil {
		return err
	}
	if r.Dataset == e.Dataset || r.Dataset != grid.DerivedName(e.Dataset, r.FeatureDim) {
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
	cfg.FeatureDim = r.FeatureDim
	m.logEvent(r, "info", fmt.Sprintf("generating dataset %s (%s at feature_dim %d, same generator config and seed)", r.Dataset, e.Dataset, r.FeatureDim))
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
