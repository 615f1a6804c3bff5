package slurm

// This executor behind the executor seam (experiments/executors,
// docs/ARCHITECTURE.md "Executors" and "Adding an executor"): it registers
// itself under Name — its grid options' check, its flags, its constructor
// — and knows the queue only through executors.Host; each run it launches
// comes with an executors.Run and becomes an executors.Job (job.go) that
// the queue's one loop follows, ingests and decides the outcome of.

import (
	"context"
	"encoding/json"
	"fmt"

	"outcore/experiments/executors"
	"outcore/store"
)

// Name is this executor's name: a grid's "executor", `--executor`, a
// run's executor column and the grid key of its options block.
const Name = "slurm"

func init() {
	executors.Register(executors.Registration{
		Name: Name,
		CreateHelp: `A grid may name "executor": "slurm" (or give --executor slurm) to run each run as
a Slurm job; its "slurm" object (partition, args, cpus, time, node_data_dir,
mem_allowance) overrides the --slurm-* flags for its runs. See README
"Running grids on Slurm".`,
		ServeHelp: `--executor slurm hands the runs of grids that name no executor to Slurm:
one job per run, many in flight, records read back from the run's
directory; the data directory must be on storage the nodes share (README
"Running grids on Slurm").`,
		CheckOptions: CheckGridOptions,
		Flags:        addFlags,
		New: func(host executors.Host, cfg executors.Config) (executors.Executor, error) {
			var o Options
			switch v := cfg.Options.(type) {
			case nil:
			case Options:
				o = v
			default:
				return nil, fmt.Errorf("options of type %T, want slurm.Options", cfg.Options)
			}
			if err := o.Check(); err != nil {
				return nil, err
			}
			return NewExecutor(host, Config{DataDir: cfg.DataDir, Binary: cfg.Binary, Args: cfg.Args, Env: cfg.Env,
				Options: o, Version: cfg.Version}), nil
		},
	})
}

// Config is what the executor is given once: the queue's data directory,
// the child it runs (an outcore binary and its arguments: `train
// --config`, or the tests' fake child), the environment of the jobs, the
// queue's Slurm options and the version recorded with each run.
type Config struct {
	DataDir string
	Binary  string
	Args    []string
	Env     []string
	Options Options
	Version string
}

var _ executors.Executor = (*Executor)(nil)

// PickUp takes over a run a stopped queue process left in Slurm: its job
// goes on, its records are read on from the committed offset. A run that
// has no job id yet is looked up by its job name (the process may have
// stopped between sbatch and recording the id); one that Slurm does not
// know was never submitted and ends interrupted.
func (s *Executor) PickUp(ctx context.Context, r store.Run) (executors.Job, string, *store.RunEnd) {
	if r.JobID == "" {
		j, found, err := s.FindJob(ctx, r.ID)
		if err != nil {
			return nil, "", &store.RunEnd{Status: store.StatusInterrupted,
				Error: fmt.Sprintf("the server stopped while submitting the run to Slurm, and squeue cannot tell whether it was: %v", err)}
		}
		if found {
			r.JobID, r.JobState, r.Node = j.ID, j.State, j.Node
		}
		if r.JobID == "" {
			return nil, "", &store.RunEnd{Status: store.StatusInterrupted,
				Error: "the server stopped before the run was submitted to Slurm; retry it to run it again"}
		}
	}
	file := r.RecordsFile
	if file == "" {
		file = "-"
	}
	return s.newJob(r), fmt.Sprintf("picked up again after a restart: Slurm job %s, records read on from byte %d of %s",
		r.JobID, r.RecordsOffset, file), nil
}

// CheckGrid checks a grid's "slurm" block at creation: its node data
// directory must be inside the folder the queue allows
// (ConfineNodeDataDir), and not the data directory itself.
func (s *Executor) CheckGrid(block json.RawMessage) error {
	sg, err := ParseGridOptions(block)
	if err != nil || sg == nil || sg.NodeDataDir == "" {
		return err
	}
	return checkNodeDataDir(s.cfg.Options.NodeDataRoot(s.cfg.DataDir), sg.NodeDataDir, s.cfg.DataDir)
}

// FindJob looks a run's job up by its name in squeue (a queue process
// that stopped between sbatch and recording the job id): found false when
// Slurm does not list it.
func (s *Executor) FindJob(ctx context.Context, runID int64) (job JobInfo, found bool, err error) {
	snap, err := s.snapshot(ctx)
	if err != nil {
		return JobInfo{}, false, err
	}
	for _, j := range snap {
		if j.Name == s.jobName(runID) {
			job, found = j, true
		}
	}
	return job, found, nil
}
