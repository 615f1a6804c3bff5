package experiments

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"outcore/engine/train"
	"outcore/store"
)

// SlurmOptions configure the slurm executor (docs/ARCHITECTURE.md
// "Executors"). A grid's "slurm" object (SlurmGrid) overrides them for its
// runs.
type SlurmOptions struct {
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

// Bounds of the Slurm settings of a grid and of the queue.
const (
	MaxSlurmCPUs         = 4096     // slurm.cpus, --slurm-cpus
	MaxSlurmMemAllowance = 16 << 40 // slurm.mem_allowance
)

// SlurmGrid is a grid file's "slurm" object; each field set overrides the
// queue's SlurmOptions for the grid's runs.
type SlurmGrid struct {
	Partition    string `json:"partition,omitempty"`
	Args         string `json:"args,omitempty"` // sbatch options, shell-quoted: "--qos=low --comment='a b'"
	CPUs         int    `json:"cpus,omitempty"`
	Time         string `json:"time,omitempty"`
	NodeDataDir  string `json:"node_data_dir,omitempty"`
	MemAllowance string `json:"mem_allowance,omitempty"` // "512MiB"
}

// CreateOptions are the command line's choices for Manager.CreateWith.
type CreateOptions struct {
	// Executor runs the experiment's runs ("" = the grid's "executor",
	// else the queue's Options.Executor). A grid naming another executor
	// is an error.
	Executor string
}

// validExecutor checks an executor name.
func validExecutor(name string) error {
	for _, e := range store.Executors {
		if name == e {
			return nil
		}
	}
	return fmt.Errorf("unknown executor %q (executors: %s)", name, strings.Join(store.Executors, ", "))
}

// parseExecutorKey parses a grid's "executor" or "slurm" key.
func parseExecutorKey(g *Grid, key string, v json.RawMessage) error {
	switch key {
	case "executor":
		if err := json.Unmarshal(v, &g.Executor); err != nil {
			return invalid("executor", "want \"local\" or \"slurm\"")
		}
		if err := validExecutor(g.Executor); err != nil {
			return invalid("executor", "%v", err)
		}
	case "slurm":
		var sg SlurmGrid
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sg); err != nil {
			if f := unknownField.FindStringSubmatch(err.Error()); f != nil {
				return invalid("slurm."+f[1], "unknown setting (slurm takes partition, args, cpus, time, node_data_dir, mem_allowance)")
			}
			return invalid("slurm", "want an object: %v", err)
		}
		if err := sg.check(); err != nil {
			return err
		}
		g.Slurm = &sg
	}
	return nil
}

// check validates a grid's Slurm settings: a problem per field at fault.
func (sg *SlurmGrid) check() error {
	var ps problems
	if sg.Partition != "" {
		if err := ValidPartition(sg.Partition); err != nil {
			ps.add("slurm.partition", "slurm.partition: %v", err)
		}
	}
	if sg.Args != "" {
		if _, err := ParseSbatchArgs(sg.Args); err != nil {
			ps.add("slurm.args", "slurm.args: %v", err)
		}
	}
	if sg.CPUs < 0 || sg.CPUs > MaxSlurmCPUs {
		ps.add("slurm.cpus", "slurm.cpus: %d is not a whole number from 1 to %d", sg.CPUs, MaxSlurmCPUs)
	}
	if sg.Time != "" {
		if err := ValidSlurmTime(sg.Time); err != nil {
			ps.add("slurm.time", "slurm.time: %v", err)
		}
	}
	if sg.NodeDataDir != "" {
		if err := nodeDataDirSyntax(sg.NodeDataDir); err != nil {
			ps.add("slurm.node_data_dir", "slurm.node_data_dir: %v", err)
		}
	}
	if sg.MemAllowance != "" {
		if v, err := train.ParseMemLimit(sg.MemAllowance, 0); err != nil || v < MinMemLimit || v > MaxSlurmMemAllowance {
			ps.add("slurm.mem_allowance", "slurm.mem_allowance: %q: want a size from %s to %s such as \"512MiB\"", sg.MemAllowance,
				FormatBytes(MinMemLimit), FormatBytes(MaxSlurmMemAllowance))
		}
	}
	return ps.err()
}

// merged returns o with a grid's settings applied, checked again as at
// creation (a run queued by an older outcore gets today's checks): the
// sbatch allow-list, and a node data directory inside the queue's
// (NodeDataRoot).
func (o SlurmOptions) merged(sg *SlurmGrid, dataDir string) (SlurmOptions, error) {
	if sg == nil {
		return o, nil
	}
	if err := sg.check(); err != nil {
		return o, err
	}
	if sg.NodeDataDir != "" {
		dir, err := ConfineNodeDataDir(o.NodeDataRoot(dataDir), sg.NodeDataDir)
		if err != nil {
			return o, err
		}
		sg = &SlurmGrid{Partition: sg.Partition, Args: sg.Args, CPUs: sg.CPUs, Time: sg.Time, NodeDataDir: dir, MemAllowance: sg.MemAllowance}
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
		v, err := train.ParseMemLimit(sg.MemAllowance, 0)
		if err != nil {
			return o, err
		}
		o.MemAllowance = v
	}
	return o, nil
}

// Check validates the queue's own Slurm options (flags).
func (o SlurmOptions) Check() error {
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
	if o.CPUs < 0 || o.CPUs > MaxSlurmCPUs {
		return fmt.Errorf("--slurm-cpus %d: want a whole number from 1 to %d", o.CPUs, MaxSlurmCPUs)
	}
	if o.Time != "" {
		if err := ValidSlurmTime(o.Time); err != nil {
			return err
		}
	}
	if o.NodeDataDir != "" {
		if err := nodeDataDirSyntax(o.NodeDataDir); err != nil {
			return fmt.Errorf("node data directory: %w", err)
		}
	}
	return nil
}

// chooseExecutor picks the executor of a grid's runs — the command line's
// choice, else the grid's "executor", else the queue's default — and
// refuses one the queue does not offer (Options.Executors) and a grid's
// Slurm node data directory outside the folder the queue allows.
func (m *Manager) chooseExecutor(g *Grid, co CreateOptions) (string, problems) {
	var ps problems
	executor := m.opts.Executor
	switch {
	case co.Executor != "" && g.Executor != "" && co.Executor != g.Executor:
		ps.add("executor", "executor: the grid names %q but %q was asked for; drop one", g.Executor, co.Executor)
		return executor, ps
	case co.Executor != "":
		if err := validExecutor(co.Executor); err != nil {
			ps.add("executor", "executor: %v", err)
			return executor, ps
		}
		executor = co.Executor
	case g.Executor != "":
		executor = g.Executor
	}
	if !contains(m.opts.Executors, executor) {
		ps.add("executor", "executor: %q is not offered here: this queue runs %s (the executor is the server's choice: `outcore serve --executor %s` offers it)",
			executor, strings.Join(m.opts.Executors, ", "), strings.Join(append(append([]string(nil), m.opts.Executors...), executor), ","))
	}
	if executor == store.ExecutorSlurm && g.Slurm != nil && g.Slurm.NodeDataDir != "" && nodeDataDirSyntax(g.Slurm.NodeDataDir) == nil {
		if _, err := ConfineNodeDataDir(m.opts.Slurm.NodeDataRoot(m.opts.DataDir), g.Slurm.NodeDataDir); err != nil {
			ps.add("slurm.node_data_dir", "slurm.node_data_dir: %v", err)
		}
	}
	return executor, ps
}
