package cli

import (
	"flag"
	"slices"
	"strings"
	"time"

	"outcore/experiments/grid"
	"outcore/experiments/slurm"
	"outcore/internal/units"
	"outcore/store"
)

// slurmFlags are the executor flags of `outcore serve` and `outcore exp
// create` (docs/ARCHITECTURE.md "Executors", README "Running grids on
// Slurm").
type slurmFlags struct {
	executor, partition, args, time, nodeData, allowance, outcore string
	cpus, maxJobs                                                 int
	poll                                                          time.Duration
}

func addSlurmFlags(fs *flag.FlagSet, executorDoc string) *slurmFlags {
	f := &slurmFlags{}
	fs.StringVar(&f.executor, "executor", "", executorDoc)
	fs.StringVar(&f.partition, "slurm-partition", "", "slurm: partition to submit to (default: the cluster's)")
	fs.StringVar(&f.args, "slurm-args", "", `slurm: extra sbatch options, shell-quoted, each as --name=value ("--qos=low --account=a1"); only the options of the allow-list (docs/SECURITY.md)`)
	fs.IntVar(&f.cpus, "slurm-cpus", 0, "slurm: CPUs per job (--cpus-per-task; default: Slurm's)")
	fs.StringVar(&f.time, "slurm-time", "", "slurm: time limit per job (--time: minutes, HH:MM:SS, D-HH, ...)")
	fs.IntVar(&f.maxJobs, "slurm-max-jobs", slurm.DefaultMaxJobs, "slurm: runs in flight in Slurm at once")
	fs.StringVar(&f.nodeData, "slurm-node-data-dir", "", "slurm: a data directory local to each node; jobs generate their dataset there (default: read the shared data directory)")
	fs.StringVar(&f.allowance, "slurm-mem-allowance", "", `slurm: model-step allowance added to each run's budget in its memory request (default: estimated from the run's shapes), e.g. "1GiB"`)
	fs.StringVar(&f.outcore, "slurm-outcore", "", "slurm: the outcore binary on the nodes (default: this one, at the same path)")
	fs.DurationVar(&f.poll, "slurm-poll", slurm.DefaultPoll, "slurm: how often squeue is asked and records files are read")
	return f
}

// executors returns the default executor and the executors the queue
// offers: --executor names one ("slurm") or several, the first the
// default ("local,slurm"); default local. A grid may name only these.
func (f *slurmFlags) executors() (string, []string, error) {
	if f.executor == "" {
		return "", nil, nil
	}
	var list []string
	for _, e := range strings.Split(f.executor, ",") {
		e = strings.TrimSpace(e)
		switch e {
		case store.ExecutorLocal, store.ExecutorSlurm:
		default:
			return "", nil, usagef("--executor %q: want local or slurm, or both (local,slurm: the first is the default)", f.executor)
		}
		if !slices.Contains(list, e) {
			list = append(list, e)
		}
	}
	return list[0], list, nil
}

// options returns the executor and the Slurm options the flags ask for.
func (f *slurmFlags) options() (string, slurm.Options, error) {
	o := slurm.Options{Partition: f.partition, CPUs: f.cpus, Time: f.time, MaxJobs: f.maxJobs,
		NodeDataDir: f.nodeData, Outcore: f.outcore, Poll: f.poll}
	if f.args != "" {
		args, err := grid.ParseSbatchArgs(f.args)
		if err != nil {
			return "", o, usagef("--slurm-args: %v", err)
		}
		o.Args = args
	}
	if f.allowance != "" {
		v, err := units.ParseMemLimit(f.allowance, 0)
		if err != nil || v <= 0 {
			return "", o, usagef("--slurm-mem-allowance %q: want a size such as \"1GiB\"", f.allowance)
		}
		o.MemAllowance = v
	}
	if f.maxJobs < 1 {
		return "", o, usagef("--slurm-max-jobs must be at least 1")
	}
	if f.poll < 100*time.Millisecond {
		return "", o, usagef("--slurm-poll must be at least 100ms")
	}
	if err := o.Check(); err != nil {
		return "", o, usagef("%v", err)
	}
	executor, _, err := f.executors()
	return executor, o, err
}
