package slurm

import (
	"fmt"
	"time"

	"outcore/internal/units"
)

// Defaults of Options.
const (
	DefaultMaxJobs = 64
	DefaultPoll    = 2 * time.Second
)

// Options configure the slurm executor (docs/ARCHITECTURE.md
// "Executors"). A grid's "slurm" object (GridOptions) overrides them for its
// runs.
type Options struct {
	// Partition is the partition jobs are submitted to ("" = the
	// cluster's default).
	Partition string
	// Args are extra sbatch options, one word each ("--qos=low").
	Args []string
	// CPUs per job (--cpus-per-task); 0 = Slurm's default.
	CPUs int
	// Time is the jobs' time limit (--time); "" = the partition's.
	Time string
	// MaxJobs caps the runs in flight in Slurm at once; default 64.
	MaxJobs int
	// NodeDataDir, when set, is a data directory local to each node: jobs
	// generate their dataset there (`outcore data gen --like`) instead of
	// reading the shared data directory's copy. Either way the dataset's
	// digest is checked on the node before training.
	NodeDataDir string
	// MemAllowance replaces the estimated model-step allowance of the
	// memory request (JobMemoryBytes); 0 = estimate.
	MemAllowance int64
	// Outcore is the outcore binary the jobs run, at the same path on the
	// nodes; default Options.Binary.
	Outcore string
	// Poll is how often squeue is asked and records files are read;
	// default 2 s.
	Poll time.Duration
	// BinDir holds sbatch, squeue, scontrol, sacct, scancel; "" = $PATH.
	BinDir string
}

// Merged returns o with a grid's settings applied, checked again as at
// creation (a run queued by an older outcore gets today's checks): the
// sbatch allow-list, and a node data directory inside the queue's
// (NodeDataRoot).
func (o Options) Merged(sg *GridOptions, dataDir string) (Options, error) {
	if sg == nil {
		return o, nil
	}
	if err := sg.Check(); err != nil {
		return o, err
	}
	if sg.NodeDataDir != "" {
		dir, err := ConfineNodeDataDir(o.NodeDataRoot(dataDir), sg.NodeDataDir)
		if err != nil {
			return o, err
		}
		sg = &GridOptions{Partition: sg.Partition, Args: sg.Args, CPUs: sg.CPUs, Time: sg.Time, NodeDataDir: dir, MemAllowance: sg.MemAllowance}
	}
	if sg.Partition != "" {
		o.Partition = sg.Partition
	}
	if sg.Args != "" {
		extra, err := ParseSbatchArgs(sg.Args)
		if err != nil {
			return o, err
		}
		o.Args = append(append([]string(nil), o.Args...), extra...)
	}
	if sg.CPUs > 0 {
		o.CPUs = sg.CPUs
	}
	if sg.Time != "" {
		o.Time = sg.Time
	}
	if sg.NodeDataDir != "" {
		o.NodeDataDir = sg.NodeDataDir
	}
	if sg.MemAllowance != "" {
		v, err := units.ParseMemLimit(sg.MemAllowance, 0)
		if err != nil {
			return o, err
		}
		o.MemAllowance = v
	}
	return o, nil
}

// Check validates the queue's own Slurm options (flags).
func (o Options) Check() error {
	if o.Partition != "" {
		if err := ValidPartition(o.Partition); err != nil {
			return err
		}
	}
	for _, a := range o.Args {
		if err := CheckSbatchArg(a); err != nil {
			return err
		}
	}
	if o.CPUs < 0 || o.CPUs > MaxCPUs {
		return fmt.Errorf("--slurm-cpus %d: want a whole number from 1 to %d", o.CPUs, MaxCPUs)
	}
	if o.Time != "" {
		if err := ValidTime(o.Time); err != nil {
			return err
		}
	}
	if o.NodeDataDir != "" {
		if err := NodeDataDirSyntax(o.NodeDataDir); err != nil {
			return fmt.Errorf("node data directory: %w", err)
		}
	}
	return nil
}
