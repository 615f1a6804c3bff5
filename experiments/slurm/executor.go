package slurm

// The slurm executor (docs/ARCHITECTURE.md "Executors"): each run becomes
// one Slurm job submitted with sbatch; Slurm decides where and when it
// runs, and many may be in flight. The job writes its records to a file of
// the run's directory (shared storage), which the queue's loop ingests as
// it grows (job.go, records.go); squeue (one call per poll for all runs)
// and, once a job has ended, scontrol or sacct say how it ended, which
// JobOutcome maps to the run's outcome (state.go). The dashboard's
// cancel becomes scancel. A queue process that stops leaves the jobs to
// Slurm; the next one picks their runs up again at the committed offset of
// their records (PickUp, FindJob).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/train"
	"outcore/experiments/executors"
	"outcore/experiments/grid"
	"outcore/experiments/outcome"
	"outcore/experiments/supervise"
	"outcore/internal/units"
	"outcore/store"
)

const (
	// summaryGrace is how long a job Slurm reports COMPLETED may take for
	// its summary record to appear in the records file (shared file
	// systems publish writes late).
	summaryGrace = 10 * time.Second
	// unknownPolls: a job none of squeue, scontrol and sacct knows is
	// taken for gone after this many polls in a row.
	unknownPolls = 3
)

// Executor submits runs as Slurm jobs and hands each back as a job the
// queue follows (job.go). It knows the queue only through executors.Host and the
// run it launches through executors.Run.
type Executor struct {
	host   executors.Host
	cfg    Config
	cli    CLI
	user   string
	prefix string // job names of this data directory: prefix + run id

	pollMu  sync.Mutex // one squeue at a time; others use its answer
	snapAt  time.Time
	snap    map[string]JobInfo // by job id: this data directory's jobs
	snapErr error

	mu      sync.Mutex
	ended   map[string]JobInfo // final states with details, by job id
	unknown map[string]int     // polls in a row that found the job nowhere
	grids   map[int64]*GridOptions

	digestMu sync.Mutex // datasets are hashed one at a time
}

// NewExecutor returns the executor of a queue over host.
func NewExecutor(host executors.Host, cfg Config) *Executor {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		abs = cfg.DataDir
	}
	h := sha256.Sum256([]byte(abs))
	return &Executor{host: host, cfg: cfg, cli: CLI{BinDir: cfg.Options.BinDir}, user: name,
		prefix: "oc" + hex.EncodeToString(h[:4]) + "-r",
		ended:  map[string]JobInfo{}, unknown: map[string]int{}, grids: map[int64]*GridOptions{}}
}

// opts are the queue's Slurm options with defaults filled in.
func (s *Executor) opts() Options {
	o := s.cfg.Options
	if o.MaxJobs <= 0 {
		o.MaxJobs = DefaultMaxJobs
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Outcore == "" {
		o.Outcore = s.cfg.Binary
	}
	return o
}

// Capacity is how many runs the executor may have in Slurm at once.
func (s *Executor) Capacity() int { return s.opts().MaxJobs }

// jobName is the Slurm job name of a run.
func (s *Executor) jobName(runID int64) string { return fmt.Sprintf("%s%d", s.prefix, runID) }

// runOptions are the Slurm options of a run: the queue's, overridden by
// its experiment's grid.
func (s *Executor) runOptions(ctx context.Context, r store.Run) (Options, error) {
	s.mu.Lock()
	sg, ok := s.grids[r.ExperimentID]
	s.mu.Unlock()
	if !ok {
		e, err := s.host.Experiment(ctx, r.ExperimentID)
		if err != nil {
			return Options{}, err
		}
		g, err := grid.ParseGrid(e.Grid)
		if err != nil {
			return Options{}, fmt.Errorf("experiment %d's grid: %w", e.ID, err)
		}
		if sg, err = ParseGridOptions(g.ExecutorOptions[Name]); err != nil {
			return Options{}, fmt.Errorf("experiment %d's grid: %w", e.ID, err)
		}
		s.mu.Lock()
		s.grids[r.ExperimentID] = sg
		s.mu.Unlock()
	}
	return s.opts().Merged(sg, s.cfg.DataDir)
}

// Launch submits the run as a Slurm job and returns the job, or the end
// of a run that could not be submitted.
func (s *Executor) Launch(ctx context.Context, r store.Run, ar executors.Run) (executors.Job, *store.RunEnd) {
	r, end, ok := s.submit(ctx, r, ar)
	if !ok {
		return nil, &end
	}
	return s.newJob(r), nil
}

// forget drops what the executor keeps of an ended job.
func (s *Executor) forget(jobID string) {
	s.mu.Lock()
	delete(s.ended, jobID)
	delete(s.unknown, jobID)
	s.mu.Unlock()
}

// submit prepares the run's directory and submits its job. ok=false
// means it was not submitted and end says why.
func (s *Executor) submit(ctx context.Context, r store.Run, ar executors.Run) (store.Run, store.RunEnd, bool) {
	h := s.host
	start := time.Now()
	if end, ok := ar.StoppedEnd(start); ok {
		return r, end, false
	}
	opt, err := s.runOptions(ctx, r)
	if err != nil {
		return r, outcome.Failed(start, "slurm options: %v", err), false
	}
	if err := h.EnsureDataset(ctx, r); err != nil {
		if end, ok := ar.StoppedEnd(start); ok {
			return r, end, false
		}
		return r, outcome.Failed(start, "prepare dataset %s: %v", r.Dataset, err), false
	}
	dsDir := filepath.Join(dataset.DatasetsDir(s.cfg.DataDir), r.Dataset)
	meta, err := dataset.ReadMeta(dsDir)
	if err != nil {
		return r, outcome.Failed(start, "dataset %s: %v", r.Dataset, err), false
	}
	s.digestMu.Lock()
	digest, err := dataset.Digest(dsDir, true)
	s.digestMu.Unlock()
	if err != nil {
		return r, outcome.Failed(start, "digest of dataset %s: %v", r.Dataset, err), false
	}
	var cfg train.Config
	if err := json.Unmarshal(r.Config, &cfg); err != nil {
		return r, outcome.Failed(start, "run config: %v", err), false
	}
	dataDir, err := filepath.Abs(s.cfg.DataDir)
	if err != nil {
		return r, outcome.Failed(start, "data directory: %v", err), false
	}
	config := r.Config
	if opt.NodeDataDir != "" {
		dataDir = opt.NodeDataDir
		if config, err = withDataDir(r.Config, dataDir); err != nil {
			return r, outcome.Failed(start, "run config: %v", err), false
		}
	}
	dir, err := h.FreshRunDir(r)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return r, outcome.Failed(start, "create run directory: %v", err), false
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), append(append([]byte(nil), config...), '\n'), 0o644); err != nil {
		return r, outcome.Failed(start, "write run config: %v", err), false
	}
	if opt.NodeDataDir != "" {
		b, err := os.ReadFile(filepath.Join(dsDir, dataset.MetaFile))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, DatasetMetaFile), b, 0o644)
		}
		if err != nil {
			return r, outcome.Failed(start, "copy the dataset's meta.json for the nodes: %v", err), false
		}
	}
	allowance := opt.MemAllowance
	if allowance <= 0 {
		allowance = StepAllowance(cfg, meta)
	}
	mem := JobMemoryBytes(cfg, meta, r.MemLimitBytes, allowance)
	spec := JobSpec{RunID: r.ID, ExperimentID: r.ExperimentID, JobName: s.jobName(r.ID), RunDir: dir,
		MemMiB: (mem + 1<<20 - 1) >> 20, CPUs: opt.CPUs, Time: opt.Time, Partition: opt.Partition,
		Outcore: opt.Outcore, Env: s.cfg.Env, Dataset: r.Dataset, DataDir: dataDir,
		NodeData: opt.NodeDataDir != "", Digest: digest}
	if !reflect.DeepEqual(s.cfg.Args, []string{"train", "--config"}) {
		// A child other than `outcore train` (the tests' fake child).
		spec.Command = append([]string{s.cfg.Binary}, s.cfg.Args...)
	}
	script, err := JobScript(spec)
	if err != nil {
		return r, outcome.Failed(start, "%v", err), false
	}
	scriptPath := filepath.Join(dir, JobScriptFile)
	if err := os.WriteFile(scriptPath, []byte(script), 0o755); err != nil {
		return r, outcome.Failed(start, "write job script: %v", err), false
	}
	if end, ok := ar.StoppedEnd(start); ok {
		return r, end, false
	}
	// Not cut short by a stopping server: a job sbatch created must be
	// recorded, or it would run unwatched.
	jobID, err := s.cli.Submit(context.WithoutCancel(ctx), scriptPath, opt.Args)
	if err != nil {
		return r, outcome.Failed(start, "submit to Slurm: %v", err), false
	}
	r.JobID, r.JobState = jobID, "PENDING"
	where := "the default partition"
	if opt.Partition != "" {
		where = "partition " + opt.Partition
	}
	budget := "no budget: the dataset's files " + units.Bytes(mem-allowance-JobOverheadBytes)
	if r.MemLimitBytes > 0 {
		budget = "budget " + units.Bytes(r.MemLimitBytes)
	}
	msg := fmt.Sprintf("submitted as Slurm job %s to %s, --mem=%dM (%s + model step %s + job %s)",
		jobID, where, spec.MemMiB, budget, units.Bytes(allowance), units.Bytes(JobOverheadBytes))
	err = h.RecordSubmitted(ctx, r, store.RunStart{LimitNote: "decided on the node when the job starts",
		OutcoreVersion: s.cfg.Version, GoVersion: runtime.Version()}, msg)
	if err != nil {
		h.Logf("run %d: record Slurm job %s: %v", r.ID, jobID, err)
	}
	return r, store.RunEnd{}, true
}

// withDataDir returns a run config with another data_dir.
func withDataDir(config json.RawMessage, dir string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(config, &m); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(dir)
	m["data_dir"] = b
	return json.Marshal(m)
}

// snapshot returns this data directory's jobs as squeue lists them, asking
// squeue at most once per half poll interval whatever the number of runs.
func (s *Executor) snapshot(ctx context.Context) (map[string]JobInfo, error) {
	s.pollMu.Lock()
	defer s.pollMu.Unlock()
	if !s.snapAt.IsZero() && time.Since(s.snapAt) < s.opts().Poll/2 {
		return s.snap, s.snapErr
	}
	jobs, err := s.cli.Queue(ctx, s.user)
	s.snapAt = time.Now()
	if err != nil {
		s.snap, s.snapErr = nil, err
		return nil, err
	}
	snap := map[string]JobInfo{}
	for _, j := range jobs {
		if strings.HasPrefix(j.Name, s.prefix) {
			snap[j.ID] = j
		}
	}
	s.snap, s.snapErr = snap, nil
	return snap, nil
}

// IsFinal reports whether a Slurm state is a final one.
func IsFinal(state string) bool {
	return JobOutcome(JobInfo{State: state, Known: true}, "", "", false).Phase == PhaseEnded
}

// info returns what Slurm says about a job now. ok=false means Slurm
// could not be asked (the controller is unreachable): nothing is decided
// from that. A final state comes with details from scontrol (exit code,
// restarts) or sacct; a job that none of them knows for unknownPolls polls
// in a row is reported with Known=false.
func (s *Executor) info(ctx context.Context, id string) (JobInfo, bool) {
	s.mu.Lock()
	if j, ok := s.ended[id]; ok {
		s.mu.Unlock()
		return j, true
	}
	s.mu.Unlock()
	snap, err := s.snapshot(ctx)
	if err != nil {
		s.host.Logf("slurm: %v", err)
		return JobInfo{}, false
	}
	j, listed := snap[id]
	if listed && !IsFinal(j.State) {
		s.clearUnknown(id)
		return j, true
	}
	d, err := s.cli.Show(ctx, id)
	if err == nil {
		s.clearUnknown(id)
		if !IsFinal(d.State) {
			return d, true
		}
		if d.Node == "" && listed {
			d.Node = j.Node
		}
		s.mu.Lock()
		s.ended[id] = d
		s.mu.Unlock()
		return d, true
	}
	if !errors.Is(err, ErrJobUnknown) {
		s.host.Logf("slurm: %v", err)
		if listed {
			return j, true
		}
		return JobInfo{}, false
	}
	if a, err := s.cli.Acct(ctx, id); err == nil {
		s.clearUnknown(id)
		if IsFinal(a.State) {
			s.mu.Lock()
			s.ended[id] = a
			s.mu.Unlock()
		}
		return a, true
	}
	if listed {
		return j, true
	}
	s.mu.Lock()
	s.unknown[id]++
	n := s.unknown[id]
	s.mu.Unlock()
	if n < unknownPolls {
		return JobInfo{}, false
	}
	return JobInfo{ID: id, Known: false}, true
}

func (s *Executor) clearUnknown(id string) {
	s.mu.Lock()
	delete(s.unknown, id)
	s.mu.Unlock()
}

// limitFromNode says whether a Slurm run's memory limit is enforced, from
// its start record and what `outcore train` wrote to stderr on the node
// when it could not place itself in a cgroup (cmd/outcore/cli/memlimit.go).
func limitFromNode(r store.Run, rec metrics.StartRecord, dir string) (bool, string) {
	node := rec.Host.Hostname
	if node == "" {
		node = r.Node
	}
	if r.MemLimitBytes <= 0 {
		return false, fmt.Sprintf("no limit set (Slurm job %s on %s)", r.JobID, node)
	}
	why := ""
	for _, line := range strings.Split(readTail(filepath.Join(dir, JobStderrFile), supervise.TailBytes), "\n") {
		if _, after, ok := strings.Cut(line, "--mem-limit not enforced: "); ok {
			why = strings.TrimSpace(after)
		}
	}
	switch {
	case why != "" && rec.LimitEnforced:
		return false, fmt.Sprintf("outcore train could not place itself in a memory cgroup on %s: %s; only the Slurm job's memory request (budget + model step + job) holds", node, why)
	case why != "":
		return false, fmt.Sprintf("no memory cgroup on %s: %s", node, why)
	case rec.LimitEnforced:
		return true, fmt.Sprintf("memory cgroup placed by outcore train on %s (Slurm job %s)", node, r.JobID)
	}
	return false, fmt.Sprintf("the training process on %s reported no memory cgroup", node)
}

// readTail returns the last n bytes of a file as valid text ("" when it
// cannot be read).
func readTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, st.Size()-n)
	b := make([]byte, st.Size()-off)
	k, _ := f.ReadAt(b, off)
	t := supervise.NewTail(int(n))
	t.Write(b[:k])
	if off > 0 {
		t.MarkCut()
	}
	return t.String()
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n\r ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
