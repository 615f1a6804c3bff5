package cli

// `outcore train --mem-limit`: the training process runs in its own memory
// cgroup (internal/cgroup: v2 memory.max, or v1 memory.limit_in_bytes), so
// the page cache it fills counts against the limit, as in the papers'
// experiments (GNNDrive §5.1 "Memory Capacity", Ginex Fig. 18). The process
// the user started stays outside as the supervisor (experiments/supervise,
// the same one the experiment runner uses): it starts `outcore train
// <args> --cgroup PATH` inside a fresh group, forwards its JSON lines, and
// when the kernel kills the child for exceeding the limit it writes the
// summary the child could not write, with outcome "oom". The child builds
// its train.MemoryLimit from --cgroup (cgroup.Limit). Without a usable
// memory cgroup the run goes on unlimited and says so (limit_enforced=false
// in its start record).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments/supervise"
	"outcore/internal/cgroup"
	"outcore/internal/units"
)

// ErrOutOfMemory is returned when the training process was killed by its
// memory limit (the run's outcome is "oom").
var ErrOutOfMemory = errors.New("training process killed by its memory limit (outcome oom)")

// resolveMemLimit returns cfg's memory limit in bytes, reading the
// dataset's meta.json for a percentage of its feature bytes.
func resolveMemLimit(cfg train.Config) (int64, error) {
	if cfg.MemLimit == "" {
		return cfg.MemLimitBytes, nil
	}
	var featureBytes int64
	if strings.HasSuffix(strings.TrimSpace(cfg.MemLimit), "%") {
		m, err := dataset.ReadMeta(datasetDir(cfg))
		if err != nil {
			return 0, fmt.Errorf("mem limit %q: %w", cfg.MemLimit, err)
		}
		featureBytes = m.FeatureBytes()
	}
	return units.ParseMemLimit(cfg.MemLimit, featureBytes)
}

// checkMinMemory refuses, before any process is placed in a memory group,
// a --mem-limit below the variant's floor on the dataset
// (train.CheckFeasible, the check every caller makes). A dataset whose
// meta.json cannot be read is left to the run to report.
func checkMinMemory(cfg train.Config) error {
	if cfg.MemLimit == "" && cfg.MemLimitBytes <= 0 {
		return nil
	}
	m, err := dataset.ReadMeta(datasetDir(cfg))
	if err != nil {
		return nil
	}
	budget, err := resolveMemLimit(cfg)
	if err != nil {
		return err
	}
	cfg.MemLimitBytes = budget
	return train.CheckFeasible(cfg, m)
}

func datasetDir(cfg train.Config) string {
	return filepath.Join(dataset.DatasetsDir(dataset.ResolveDataDir(cfg.DataDir)), cfg.Dataset)
}

// placement decides where the training of cfg runs. placed is the value
// of the hidden --cgroup flag: "" when this process was started by a user,
// else the group a supervisor placed it in (supervise.NoGroup: none).
// limit != nil means: train in this process under that limit. limit == nil
// with err == nil means a supervised child was started and has finished
// (its records are on stdout).
type placement struct {
	sup    *supervise.Supervisor
	stdout io.Writer
	stderr io.Writer
}

func (p placement) run(ctx context.Context, cfg train.Config, placed string, args []string) (train.MemoryLimit, error) {
	budget, err := resolveMemLimit(cfg)
	if err != nil {
		return nil, err
	}
	switch {
	case placed == supervise.NoGroup:
		return train.FixedLimit(budget), nil
	case placed != "":
		l, err := cgroup.OpenLimit(placed, budget)
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %w", supervise.CgroupFlag, placed, err)
		}
		return l, nil
	}
	have, limited := cgroup.SelfLimit()
	switch {
	case budget <= 0 && limited:
		// Started inside someone else's limited group (a container, a
		// systemd scope): that limit holds the run; it is not ours to move.
		return cgroup.OuterLimit(have), nil
	case budget <= 0:
		return train.FixedLimit(0), nil
	case limited && have <= budget:
		return cgroup.OuterLimit(budget), nil
	}
	if _, err := p.sup.Cgroups(); err != nil {
		fmt.Fprintf(p.stderr, "outcore train: --mem-limit not enforced: %v (the run records limit_enforced=false)\n", err)
		return train.FixedLimit(budget), nil
	}
	return nil, p.supervise(ctx, cfg, budget, args)
}

// supervise runs `outcore train <args>` in a memory cgroup of limit bytes
// and forwards its records.
func (p placement) supervise(ctx context.Context, cfg train.Config, limit int64, args []string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("mem limit: find own executable: %w", err)
	}
	c, err := p.sup.Start(supervise.Spec{
		Path: self, Args: append([]string{"train"}, args...),
		Name:  fmt.Sprintf("train-%d", os.Getpid()),
		Limit: limit,
		// Pages cached before the run are charged to whoever read them
		// first; the run pays for its own.
		Evict: datasetDir(cfg),
		// A child killed for memory leaves its scratch folders (ginex's
		// runtime files) in the data directory: the supervisor removes them.
		Scratch: dataset.ResolveDataDir(cfg.DataDir),
		Lines: func(line []byte) {
			p.stdout.Write(append(line, '\n'))
		},
		Stderr:       p.stderr,
		WriteSummary: true,
	})
	if err != nil {
		return fmt.Errorf("mem limit: %w", err)
	}
	if c.Group() == nil {
		fmt.Fprintf(p.stderr, "outcore train: --mem-limit not enforced: %s (the run records limit_enforced=false)\n", c.Note())
	}
	// Forward interrupts: the child ends its run with a cancelled summary.
	stop := context.AfterFunc(ctx, func() { c.Signal(syscall.SIGINT) })
	defer stop()
	r := c.Wait()
	switch {
	case r.OOM:
		return ErrOutOfMemory
	case r.Err != nil && r.Summary != "":
		// The child reported its own failure in its summary.
		return fmt.Errorf("training failed (see the summary record): %w", r.Err)
	case r.Err != nil:
		return fmt.Errorf("training process: %w", r.Err)
	}
	return nil
}
