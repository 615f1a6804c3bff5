package system

// `outcore train --mem-limit`: the training process runs in its own memory
// cgroup (internal/cgroup: v2 memory.max, or v1 memory.limit_in_bytes),
// so the page cache it fills counts against the limit, as in the papers'
// experiments (GNNDrive §5.1 "Memory Capacity", Ginex Fig. 18). The process
// the user started stays outside as a watcher: it re-executes itself inside
// a fresh group, forwards the child's JSON lines, and when the kernel kills
// the child for exceeding the limit it writes the summary the child could
// not write, with outcome "oom". Without a usable memory cgroup the run
// goes on unlimited and says so (limit_enforced=false in its start record).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/cgroup"
)

// EnvCgroup is set in the environment of a training process placed in a
// memory cgroup by RunUnderMemLimit: the group's directory. A process that
// finds it set does not place itself again.
const EnvCgroup = "OUTCORE_CGROUP"

// ErrOutOfMemory is returned when the training process was killed by its
// memory limit (the run's outcome is "oom").
var ErrOutOfMemory = errors.New("training process killed by its memory limit (outcome oom)")

// ResolveMemLimitBytes returns cfg's memory limit in bytes, reading the
// dataset's meta.json for a percentage of its feature bytes.
func ResolveMemLimitBytes(cfg train.Config) (int64, error) {
	if cfg.MemLimit == "" {
		return cfg.MemLimitBytes, nil
	}
	var featureBytes int64
	if strings.HasSuffix(strings.TrimSpace(cfg.MemLimit), "%") {
		dir := filepath.Join(dataset.DatasetsDir(dataset.ResolveDataDir(cfg.DataDir)), cfg.Dataset)
		m, err := dataset.ReadMeta(dir)
		if err != nil {
			return 0, fmt.Errorf("mem limit %q: %w", cfg.MemLimit, err)
		}
		featureBytes = m.FeatureBytes()
	}
	return train.ParseMemLimit(cfg.MemLimit, featureBytes)
}

// RunUnderMemLimit places `outcore train <args>` in a memory cgroup of
// cfg's limit when it is not in one already. handled=false means the caller
// should run the training itself: no limit was asked for, this process is
// already the placed child (EnvCgroup set) or already limited at or below
// the limit (e.g. by the experiment runner), or memory cgroups are not
// available (a warning then goes to stderr). handled=true means a child ran
// the training with its records forwarded to stdout; err is ErrOutOfMemory
// when the limit killed it.
func RunUnderMemLimit(ctx context.Context, cfg train.Config, args []string, stdout, stderr io.Writer) (handled bool, err error) {
	if cfg.MemLimit == "" && cfg.MemLimitBytes == 0 {
		return false, nil
	}
	if os.Getenv(EnvCgroup) != "" {
		return false, nil
	}
	limit, err := ResolveMemLimitBytes(cfg)
	if err != nil {
		return true, err
	}
	if limit <= 0 {
		return false, nil
	}
	if have, ok := metrics.MemoryCgroupLimit(); ok && have <= limit {
		return false, nil
	}
	mgr, err := cgroup.Detect()
	if err != nil {
		fmt.Fprintf(stderr, "outcore train: --mem-limit not enforced: %v (the run records limit_enforced=false)\n", err)
		return false, nil
	}
	self, err := os.Executable()
	if err != nil {
		return true, fmt.Errorf("mem limit: find own executable: %w", err)
	}
	g, err := mgr.Create(fmt.Sprintf("train-%d-%d", os.Getpid(), time.Now().UnixNano()), limit)
	if err != nil {
		return true, fmt.Errorf("mem limit: %w", err)
	}
	defer g.Remove()
	// Pages cached before the run are charged to whoever read them first;
	// drop the dataset's clean pages so that the run pays for its own.
	dsDir := filepath.Join(dataset.DatasetsDir(dataset.ResolveDataDir(cfg.DataDir)), cfg.Dataset)
	for _, f := range []string{dataset.FeaturesFile, dataset.IndicesFile} {
		kit.DropFileCache(filepath.Join(dsDir, f))
	}

	cmd := exec.Command(self, append([]string{"train"}, args...)...)
	cmd.Env = append(os.Environ(), EnvCgroup+"="+g.Path)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return true, fmt.Errorf("mem limit: %w", err)
	}
	after, err := g.Prepare(cmd)
	if err != nil {
		return true, fmt.Errorf("mem limit: %w", err)
	}
	if err := cmd.Start(); err != nil {
		after()
		return true, fmt.Errorf("mem limit: start training process: %w", err)
	}
	after()
	// Forward interrupts: the child ends its run with a cancelled summary.
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Signal(syscall.SIGINT) })
	defer stop()

	sawSummary := false
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &head) == nil && head.Type == metrics.TypeSummary {
			sawSummary = true
		}
		stdout.Write(line)
		stdout.Write([]byte{'\n'})
	}
	waitErr := cmd.Wait()
	kills, _ := g.OOMKills()
	oom := kills > 0 && !sawSummary
	if !sawSummary {
		sum := metrics.SummaryRecord{Type: metrics.TypeSummary, Outcome: metrics.OutcomeFailed, BestEpoch: -1}
		if peak, ok := g.Peak(); ok {
			sum.PeakCgroupBytes = peak
		}
		switch {
		case oom:
			sum.Outcome = metrics.OutcomeOOM
			sum.Error = fmt.Sprintf("killed by the memory limit of %d bytes (cgroup %s)", limit, g.Path)
		case ctx.Err() != nil:
			sum.Outcome = metrics.OutcomeInterrupted
			sum.Error = fmt.Sprintf("training process ended by an interrupt: %v", waitErr)
		default:
			sum.Error = fmt.Sprintf("training process ended without a summary: %v", waitErr)
		}
		b, _ := json.Marshal(sum)
		stdout.Write(append(b, '\n'))
	}
	switch {
	case oom:
		return true, ErrOutOfMemory
	case waitErr != nil:
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) && sawSummary {
			// The child reported its own failure in its summary.
			return true, fmt.Errorf("training failed (see the summary record): %w", waitErr)
		}
		return true, fmt.Errorf("training process: %w", waitErr)
	}
	return true, nil
}

// OwnGroupLimit returns the run's movable memory limit
// (train.RunOptions.MemoryLimit): the memory cgroup this process was placed
// in (EnvCgroup, by RunUnderMemLimit or the experiment runner) with budget
// bytes, or train.FixedLimit(budget) when the process has no group of its
// own (its limit is not this process's to change).
func OwnGroupLimit(budget int64) train.MemoryLimit {
	dir := os.Getenv(EnvCgroup)
	if dir == "" || dir == "none" {
		return train.FixedLimit(budget)
	}
	g, err := cgroup.Open(dir)
	if err != nil {
		return train.FixedLimit(budget)
	}
	return groupLimit{g: g, budget: budget}
}

// groupLimit is a train.MemoryLimit over this process's own cgroup.
type groupLimit struct {
	g      *cgroup.Group
	budget int64
}

func (l groupLimit) Lift() error    { return l.g.SetMemoryLimit(0) }
func (l groupLimit) Bytes() int64   { return l.budget }
func (l groupLimit) Enforced() bool { return true }

// Hold sets the group's limit to the budget plus extra; without a budget
// the group stays unlimited.
func (l groupLimit) Hold(extra int64) error {
	if l.budget <= 0 {
		return nil
	}
	return l.g.SetMemoryLimit(l.budget + extra)
}
