package experiments

// External systems on the local executor (DESIGN §14): the program the
// operator registered runs in the run's memory cgroup through
// experiments/supervise exactly as `outcore train` does (cache drop,
// eviction, limit, OOM, cancel and timeout handling), with the argument
// vector and environment of experiments/external and nothing of the
// request but declared option values. It writes its records (the record
// protocol) to the pipe it gets as /dev/fd/3; each line is parsed with
// external.ParseLine into the records of engine/metrics and goes to the
// ingester as a built-in's stdout line does. outcore writes the start
// record, the per-second samples (the cgroup's memory, the program's
// RSS, CPU and disk reads from /proc, the host's pressure; the ingester
// adds the GPU's NVML readings) and the summary's outcome, peaks and host
// pressure itself: those are its measurements, not the program's.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/experiments/executors"
	"outcore/experiments/external"
	"outcore/experiments/supervise"
	"outcore/internal/units"
	"outcore/store"
)

// externalRun is the part of a local job that only an external system's
// run has.
type externalRun struct {
	j       *localJob
	name    string
	scratch string
	stdout  *os.File

	ready chan struct{} // closed once the start record is queued

	mu      sync.Mutex
	lineNo  int
	summary *metrics.SummaryRecord // the program's, held until it exits
	epochs  int                    // epoch lines accepted
	peakRSS int64

	runMeter     metrics.PressureMeter // the host's pressure over the run, for the summary
	stopSampling chan struct{}
	sampled      sync.WaitGroup
}

// externalConfig is what the runner reads of an external run's stored
// configuration (grid.externalConfig wrote it).
type externalConfig struct {
	System  string            `json:"system"`
	Options map[string]string `json:"options"`
}

// prepareExternal fills spec for run r of an external system: the
// registered program, its arguments and environment (external.Argv, Env),
// its records pipe and its stdout kept in the run directory.
func (m *Manager) prepareExternal(r store.Run, dir string, j *localJob, spec *supervise.Spec) (*externalRun, error) {
	var cfg externalConfig
	if err := json.Unmarshal(r.Config, &cfg); err != nil {
		return nil, fmt.Errorf("read the run's configuration: %v", err)
	}
	name, ok := external.ParseRef(cfg.System)
	if !ok {
		return nil, fmt.Errorf("run system %q is not an external system", cfg.System)
	}
	s, ok := m.opts.External.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w", m.opts.External.Check(name, nil)) // no longer registered: say what is
	}
	opts, err := s.OptionsFromText(cfg.Options)
	if err != nil {
		return nil, err
	}
	scratch := filepath.Join(dir, "scratch")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, fmt.Errorf("create the run's scratch directory: %v", err)
	}
	files := external.RunFiles{
		Dataset: filepath.Join(dataset.DatasetsDir(m.opts.DataDir), r.Dataset),
		Records: fmt.Sprintf("/dev/fd/%d", supervise.RecordsFD),
		Scratch: scratch,
		RunID:   r.ID,
	}
	argv, err := external.Argv(s, opts, files)
	if err != nil {
		return nil, err
	}
	env, err := external.Env(s, files)
	if err != nil {
		return nil, err
	}
	out, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		return nil, fmt.Errorf("create stdout log: %v", err)
	}
	x := &externalRun{j: j, name: name, scratch: scratch, stdout: out, ready: make(chan struct{}), stopSampling: make(chan struct{})}
	spec.Path, spec.Args, spec.Dir, spec.Env = argv[0], argv[1:], s.Workdir, env
	spec.External = true
	spec.Stdout = &lenientWriter{w: out}
	spec.Lines = x.line
	spec.Scratch = "" // its scratch is the run directory's, removed below
	argvJSON, _ := json.Marshal(argv)
	m.logEvent(r, "info", fmt.Sprintf("external system %s: %s", name, argvJSON))
	return x, nil
}

// begin queues the start record (after the child started: it says
// whether the limit is enforced) and starts the samples.
func (x *externalRun) begin() {
	j := x.j
	rec := metrics.StartRecord{Type: metrics.TypeStart, System: external.Prefix + x.name, Dataset: j.r.Dataset,
		Config: j.r.Config, Host: j.host, IOBackend: "external", MemLimitBytes: j.r.MemLimitBytes, LimitEnforced: j.enforced,
		Deviations: []string{"external system " + x.name + ": a program outside outcore; its epochs and numbers are its own report (record protocol), its memory and I/O outcore's measurements"}}
	x.push(rec)
	close(x.ready)
	x.runMeter = metrics.NewPressureMeter()
	x.sampled.Add(1)
	go x.sample()
}

// push hands one record to the ingester as if the child had written it.
func (x *externalRun) push(rec any) {
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	var usage int64
	if _, isSample := rec.(metrics.SampleRecord); isSample {
		if g := x.j.group.Load(); g != nil {
			usage, _ = g.Usage()
		}
	}
	x.j.lines <- executors.Item{Line: b, Usage: usage}
	x.j.signal()
}

// line takes one line of the program's records pipe.
func (x *externalRun) line(b []byte) {
	<-x.ready
	x.mu.Lock()
	x.lineNo++
	n := x.lineNo
	x.mu.Unlock()
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	rec, err := external.ParseLine(b)
	if err != nil {
		x.push(metrics.LogRecord{Type: metrics.TypeLog, Level: "warn",
			Msg: fmt.Sprintf("records line %d of external system %s refused: %v: %q", n, x.name, err, units.Clip(string(b), 200))})
		return
	}
	switch {
	case rec.Epoch != nil:
		x.mu.Lock()
		x.epochs++
		x.mu.Unlock()
		x.push(rec.Epoch)
	case rec.Log != nil:
		x.push(rec.Log)
	case rec.Summary != nil:
		x.mu.Lock()
		dup := x.summary != nil
		if !dup {
			x.summary = rec.Summary
		}
		x.mu.Unlock()
		if dup {
			x.push(metrics.LogRecord{Type: metrics.TypeLog, Level: "warn",
				Msg: fmt.Sprintf("records line %d of external system %s refused: a second summary line", n, x.name)})
		}
	}
}

// sample writes a sample record every metrics.SampleInterval while the
// program runs, taken by the sampler outcore train uses on itself, pointed
// at the program (metrics.NewProcessSampler: its RSS, CPU and disk reads,
// the system's iowait, the host's pressure); the cgroup's usage the
// ingester fills on arrival.
func (x *externalRun) sample() {
	defer x.sampled.Done()
	s := metrics.NewProcessSampler(x.j.child.Pid(), x.j.start)
	t := time.NewTicker(metrics.SampleInterval)
	defer t.Stop()
	for {
		select {
		case <-x.stopSampling:
			return
		case <-t.C:
			rec := s.Sample()
			x.mu.Lock()
			x.peakRSS, _ = s.Peaks()
			x.mu.Unlock()
			x.push(rec)
		}
	}
}

// end runs after the program exited: it stops the samples, writes the
// summary (the program's numbers, outcore's outcome and peaks) and removes
// the scratch directory.
func (x *externalRun) end(res *supervise.Result) {
	close(x.stopSampling)
	x.sampled.Wait()
	x.stdout.Close()
	x.mu.Lock()
	sum, epochs, peakRSS := x.summary, x.epochs, x.peakRSS
	x.mu.Unlock()
	if sum == nil {
		sum = &metrics.SummaryRecord{Type: metrics.TypeSummary, Epochs: epochs, BestEpoch: -1}
	}
	sum.Type = metrics.TypeSummary
	sum.PeakCgroupBytes, sum.PeakRSSBytes = res.PeakBytes, peakRSS
	hp := x.runMeter.Stop()
	sum.HostPressure = &hp
	if sum.TotalS == 0 {
		sum.TotalS = time.Since(x.j.start).Seconds()
	}
	switch {
	case res.OOM:
		sum.Outcome = metrics.OutcomeOOM
	case res.ExitCode == 0 && x.summary != nil && sum.Error == "":
		sum.Outcome = metrics.OutcomeDone
	default:
		sum.Outcome = metrics.OutcomeFailed
		if sum.Error == "" {
			switch {
			case res.Signal != 0:
				sum.Error = fmt.Sprintf("external system %s was killed by %s", x.name, signalName(res.Signal))
			case res.ExitCode != 0:
				sum.Error = fmt.Sprintf("external system %s exited with status %d", x.name, res.ExitCode)
			default:
				sum.Error = fmt.Sprintf("external system %s exited 0 without a summary line", x.name)
			}
			if last := x.j.tail.LastLine(); last != "" {
				sum.Error += ": " + last
			}
		}
	}
	x.push(sum)
	if err := os.RemoveAll(x.scratch); err != nil {
		x.j.m.logEvent(x.j.r, "warn", fmt.Sprintf("scratch directory %s not removed: %v", x.scratch, err))
	}
}
