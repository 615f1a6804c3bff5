package slurm

// The executor's command-line flags (`outcore serve`, `outcore exp
// create`), declared here through its Registration and read into Options:
// README "Running grids on Slurm", docs/ARCHITECTURE.md "Executors".

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"outcore/internal/units"
)

// addFlags declares the --slurm-* flags on fs and returns what reads them
// into Options (the Registration's Flags); its errors are usage errors.
func addFlags(fs *flag.FlagSet) func() (any, error) {
	var (
		partition, args, tlimit, nodeData, allowance, outcore string
		cpus, maxJobs                                         int
		poll                                                  time.Duration
	)
	fs.StringVar(&partition, "slurm-partition", "", "slurm: partition to submit to (default: the cluster's)")
	fs.StringVar(&args, "slurm-args", "", `slurm: extra sbatch options, shell-quoted, each as --name=value ("--qos=low --account=a1"); only the options of the allow-list (docs/SECURITY.md)`)
	fs.IntVar(&cpus, "slurm-cpus", 0, "slurm: CPUs per job (--cpus-per-task; default: Slurm's)")
	fs.StringVar(&tlimit, "slurm-time", "", "slurm: time limit per job (--time: minutes, HH:MM:SS, D-HH, ...)")
	fs.IntVar(&maxJobs, "slurm-max-jobs", DefaultMaxJobs, "slurm: runs in flight in Slurm at once")
	fs.StringVar(&nodeData, "slurm-node-data-dir", "", "slurm: a data directory local to each node; jobs generate their dataset there (default: read the shared data directory)")
	fs.StringVar(&allowance, "slurm-mem-allowance", "", `slurm: model-step allowance added to each run's budget in its memory request (default: estimated from the run's shapes), e.g. "1GiB"`)
	fs.StringVar(&outcore, "slurm-outcore", "", "slurm: the outcore binary on the nodes (default: this one, at the same path)")
	fs.DurationVar(&poll, "slurm-poll", DefaultPoll, "slurm: how often squeue is asked and records files are read")
	return func() (any, error) {
		o := Options{Partition: partition, CPUs: cpus, Time: tlimit, MaxJobs: maxJobs,
			NodeDataDir: nodeData, Outcore: outcore, Poll: poll}
		if args != "" {
			a, err := ParseSbatchArgs(args)
			if err != nil {
				return o, fmt.Errorf("--slurm-args: %v", err)
			}
			o.Args = a
		}
		if allowance != "" {
			v, err := units.ParseMemLimit(allowance, 0)
			if err != nil || v <= 0 {
				return o, fmt.Errorf("--slurm-mem-allowance %q: want a size such as \"1GiB\"", allowance)
			}
			o.MemAllowance = v
		}
		if maxJobs < 1 {
			return o, errors.New("--slurm-max-jobs must be at least 1")
		}
		if poll < 100*time.Millisecond {
			return o, errors.New("--slurm-poll must be at least 100ms")
		}
		if err := o.Check(); err != nil {
			return o, err
		}
		return o, nil
	}
}
