package experiments

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"outcore/engine/dataset"
	"outcore/internal/cgroup"
	"outcore/store"
)

// Environment variables the runner sets for each child.
const (
	EnvRunID         = "OUTCORE_RUN_ID"          // the run's id
	EnvCgroup        = "OUTCORE_CGROUP"          // the run's cgroup directory ("none" without one)
	EnvMemLimit      = "OUTCORE_MEM_LIMIT_BYTES" // the limit in bytes (0 = none)
	EnvLimitEnforced = "OUTCORE_LIMIT_ENFORCED"  // "1" when a memory cgroup enforces the limit
)

// cgroups detects the memory cgroup hierarchy once.
func (m *Manager) cgroups() (*cgroup.Manager, error) {
	m.cgOnce.Do(func() { m.cg, m.cgErr = cgroup.Detect() })
	return m.cg, m.cgErr
}

// execute runs one claimed run to its outcome and records it.
func (m *Manager) execute(ctx context.Context, r store.Run, ar *activeRun) {
	runDone := make(chan struct{})
	defer close(runDone)
	go func() {
		select {
		case <-ctx.Done():
			ar.stop(stopShutdown)
		case <-runDone:
		}
	}()
	// Records are written whatever happens to ctx: a run stopped by a
	// shutdown must still be recorded as interrupted.
	wctx := context.WithoutCancel(ctx)
	end := m.runChild(ctx, r, ar)
	err := m.update(wctx, func(tx *store.Tx) error {
		ok, err := tx.FinishRun(r.ID, end)
		if err != nil || !ok {
			return err
		}
		if err := tx.PruneTransient(r.ID); err != nil {
			return err
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
	}
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

func failed(start time.Time, format string, a ...any) store.RunEnd {
	return store.RunEnd{Status: store.StatusFailed, Error: fmt.Sprintf(format, a...), TotalS: time.Since(start).Seconds()}
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
func (m *Manager) runChild(ctx context.Context, r store.Run, ar *activeRun) store.RunEnd {
	start := time.Now()
	if err := m.ensureDataset(ctx, r); err != nil {
		if end, ok := stoppedEnd(ar, start); ok {
			return end
		}
		return failed(start, "prepare dataset %s: %v", r.Dataset, err)
	}
	if end, ok := stoppedEnd(ar, start); ok {
		return end
	}

	dropped := false
	if m.opts.DropCaches {
		if err := dropPageCache(); err != nil {
			m.logEvent(r, "warn", fmt.Sprintf("page cache not dropped before the run: %v", err))
		} else {
			dropped = true
			m.logEvent(r, "info", "page cache dropped before the run")
		}
	}

	if !m.opts.KeepPageCache {
		n, err := evictDataset(filepath.Join(dataset.DatasetsDir(m.opts.DataDir), r.Dataset))
		if err != nil {
			m.logEvent(r, "warn", fmt.Sprintf("dataset pages not evicted from the page cache: %v", err))
		} else {
			m.logEvent(r, "info", fmt.Sprintf("evicted the page cache of %d dataset files (fadvise DONTNEED)", n))
		}
	}

	dir := m.runDir(r.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failed(start, "create run directory: %v", err)
	}
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, append(append([]byte(nil), r.Config...), '\n'), 0o644); err != nil {
		return failed(start, "write run config: %v", err)
	}
	errFile, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return failed(start, "create stderr log: %v", err)
	}
	defer errFile.Close()

	// The memory cgroup, created before the child exists.
	var grp *cgroup.Group
	note := ""
	switch cg, err := m.cgroups(); {
	case m.opts.NoCgroups:
		note = "memory cgroups disabled by the runner's options"
	case err != nil:
		note = err.Error()
	default:
		grp, err = cg.Create(fmt.Sprintf("run%d-%s", r.ID, randHex(4)), r.MemLimitBytes)
		if err != nil {
			note = fmt.Sprintf("cgroup not created: %v", err)
			grp = nil
		} else if r.MemLimitBytes > 0 {
			note = fmt.Sprintf("%s, limit %s", cg.Describe(), FormatBytes(r.MemLimitBytes))
		} else {
			note = fmt.Sprintf("%s, no limit set (usage accounted only)", cg.Describe())
		}
	}
	enforced := grp != nil && r.MemLimitBytes > 0
	if grp != nil {
		defer func() {
			if err := grp.Remove(); err != nil {
				m.opts.Logf("run %d: %v", r.ID, err)
			}
		}()
	}
	if r.MemLimitBytes > 0 && !enforced {
		m.logEvent(r, "warn", fmt.Sprintf("memory limit %s NOT enforced: %s", FormatBytes(r.MemLimitBytes), note))
	}

	args := append(append([]string(nil), m.opts.Args...), cfgPath)
	cmd := exec.Command(m.opts.Binary, args...)
	cmd.Dir = dir
	// OUTCORE_CGROUP tells the child it is placed: it must not place
	// itself in a cgroup of its own (engine/system/memlimit.go). "none"
	// means the runner decided to run it without one.
	cgPath, cgEnv := "", "none"
	if grp != nil {
		cgPath, cgEnv = grp.Path, grp.Path
	}
	cmd.Env = append(append(os.Environ(), m.opts.Env...),
		EnvRunID+"="+strconv.FormatInt(r.ID, 10),
		EnvCgroup+"="+cgEnv,
		EnvMemLimit+"="+strconv.FormatInt(r.MemLimitBytes, 10),
		EnvLimitEnforced+"="+map[bool]string{true: "1", false: "0"}[enforced])
	// Own process group (so signals reach helpers it forks even without a
	// cgroup), and death with the server: a child must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	outR, outW, err := os.Pipe()
	if err != nil {
		return failed(start, "stdout pipe: %v", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return failed(start, "stderr pipe: %v", err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	after := func() {}
	if grp != nil {
		if after, err = grp.Prepare(cmd); err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			return failed(start, "place the child in its cgroup: %v", err)
		}
	}
	host := hostFacts(m.opts.DataDir, m.opts.GPU.Name())
	// Pdeathsig is tied to the thread that forks: keep it alive while the
	// child runs.
	runtime.LockOSThread()
	err = cmd.Start()
	after()
	outW.Close()
	errW.Close()
	if err != nil {
		runtime.UnlockOSThread()
		outR.Close()
		errR.Close()
		return failed(start, "start %s: %v", m.opts.Binary, err)
	}
	defer runtime.UnlockOSThread()
	pid := cmd.Process.Pid
	hostJSON, _ := json.Marshal(host)
	err = m.update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		if err := tx.SetRunStarted(r.ID, store.RunStart{PID: pid, LimitEnforced: enforced, LimitNote: note,
			CgroupPath: cgPath, CacheDropped: dropped, Host: hostJSON, OutcoreVersion: Version(), GoVersion: runtime.Version()}); err != nil {
			return err
		}
		ev := statusEvent(r, store.StatusRunning, fmt.Sprintf("running as pid %d (%s)", pid, note))
		return tx.AppendEvent(ev)
	})
	if err != nil {
		m.opts.Logf("run %d: %v", r.ID, err)
	}

	ing := newIngester(m, r, grp, host)
	go ing.loop()
	tail := newTail(TailBytes)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		readLines(outR, ing.in)
	}()
	go func() {
		defer readers.Done()
		io.Copy(io.MultiWriter(tail, errFile), errR)
	}()

	// Stopping: SIGTERM to the process group and the cgroup, SIGKILL after
	// the grace period.
	exited := make(chan struct{})
	var stopWG sync.WaitGroup
	stopWG.Add(1)
	go func() {
		defer stopWG.Done()
		select {
		case <-exited:
			return
		case <-ar.stopCh:
		}
		signalRun(pid, grp, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(m.opts.KillGrace):
			signalRun(pid, grp, syscall.SIGKILL)
			if grp != nil {
				grp.Kill(5 * time.Second)
			}
		}
	}()

	waitErr := cmd.Wait()
	close(exited)
	stopWG.Wait()
	// Anything the child left behind (helpers holding the pipes) goes too.
	syscall.Kill(-pid, syscall.SIGKILL)
	if grp != nil {
		grp.Kill(5 * time.Second)
	}
	readers.Wait()
	outR.Close()
	errR.Close()
	close(ing.in)
	<-ing.done

	return m.outcome(r, grp, ar, cmd.ProcessState, waitErr, ing, tail, start)
}

// outcome decides how a run ended from the child's exit, the cgroup's OOM
// count, the stop reason and the child's summary.
func (m *Manager) outcome(r store.Run, grp *cgroup.Group, ar *activeRun, ps *os.ProcessState, waitErr error,
	ing *ingester, tail *tailBuffer, start time.Time) store.RunEnd {
	end := store.RunEnd{StderrTail: tail.String(), TotalS: time.Since(start).Seconds()}
	ing.mu.Lock()
	summary, summaryRaw := ing.summary, ing.summaryRaw
	end.PeakRSSBytes, end.PeakCgroupBytes = ing.peakRSS, ing.peakCG
	storeErr := ing.lastErr
	ing.mu.Unlock()
	if summary != nil {
		end.Summary = summaryRaw
		if summary.TotalS > 0 {
			end.TotalS = summary.TotalS
		}
		end.PeakRSSBytes = max(end.PeakRSSBytes, summary.PeakRSSBytes)
		end.PeakCgroupBytes = max(end.PeakCgroupBytes, summary.PeakCgroupBytes)
	}
	var oomKills int64
	if grp != nil {
		if peak, ok := grp.Peak(); ok {
			end.PeakCgroupBytes = max(end.PeakCgroupBytes, peak)
		}
		n, err := grp.OOMKills()
		if err != nil {
			m.opts.Logf("run %d: %v", r.ID, err)
		}
		oomKills = n
	}
	exitedOK := false
	if ps != nil {
		ws, _ := ps.Sys().(syscall.WaitStatus)
		switch {
		case ws.Exited():
			code := ws.ExitStatus()
			end.ExitCode = &code
			exitedOK = code == 0
		case ws.Signaled():
			end.Signal = signalName(ws.Signal())
		}
	}
	summaryOutcome := ""
	if summary != nil {
		summaryOutcome = summary.Outcome
	}
	reason := ar.stopReason()
	switch {
	case exitedOK && summaryOutcome == store.StatusDone:
		end.Status = store.StatusDone
	case reason == stopCancel:
		end.Status, end.Error = store.StatusCancelled, "cancelled while running"
	case reason == stopShutdown:
		end.Status, end.Error = store.StatusInterrupted, "the server stopped while the run was running"
	case oomKills > 0 || summaryOutcome == store.StatusOOM:
		end.Status = store.StatusOOM
		end.Error = fmt.Sprintf("out of memory at the limit of %s", FormatBytes(r.MemLimitBytes))
		if oomKills > 0 {
			end.Error += fmt.Sprintf(" (the kernel's OOM killer killed %d process(es) of the run's cgroup)", oomKills)
		}
	case exitedOK && (summaryOutcome == "" || summaryOutcome == store.StatusDone):
		end.Status = store.StatusDone
		if summary == nil {
			m.logEvent(r, "warn", "the child exited 0 without a summary record")
		}
	default:
		end.Status = store.StatusFailed
		switch {
		case summary != nil && summary.Error != "":
			end.Error = summary.Error
		case waitErr != nil && tail.lastLine() != "":
			end.Error = fmt.Sprintf("%v: %s", waitErr, tail.lastLine())
		case waitErr != nil:
			end.Error = waitErr.Error()
		default:
			end.Error = fmt.Sprintf("the child reported outcome %q", summaryOutcome)
		}
	}
	if storeErr != "" {
		m.logEvent(r, "error", "some records could not be stored: "+storeErr)
	}
	return end
}

// signalRun signals the child's process group and every process in its
// cgroup.
func signalRun(pid int, grp *cgroup.Group, sig syscall.Signal) {
	syscall.Kill(-pid, sig)
	if grp != nil {
		grp.Signal(sig)
	}
}

// readLines sends each line of r to out (lines longer than maxLine are
// cut) until EOF.
func readLines(r io.Reader, out chan<- []byte) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 {
			out <- line
			line = nil
		}
		if err != nil {
			return
		}
	}
}

func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGSEGV: "SIGSEGV",
		syscall.SIGABRT: "SIGABRT", syscall.SIGINT: "SIGINT", syscall.SIGBUS: "SIGBUS", syscall.SIGPIPE: "SIGPIPE"}
	if n, ok := names[s]; ok {
		return n
	}
	return s.String()
}

// evictDataset drops the clean page-cache pages of every file of a
// dataset directory and returns how many files it advised.
func evictDataset(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return n, err
		}
		err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
		if err != nil {
			return n, fmt.Errorf("fadvise %s: %w", e.Name(), err)
		}
		n++
	}
	return n, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
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
	if r.Dataset == e.Dataset || r.Dataset != DerivedName(e.Dataset, r.FeatureDim) {
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
