// Package slurm is outcore's slurm executor (docs/ARCHITECTURE.md,
// "Executors" and "Slurm runs"): each run one Slurm job (executor.go),
// handed to the queue as a job it follows to its end (job.go), behind a
// seam to the queue that runs it (host.go).
// Beside it, what it runs on: the queue's Slurm
// options and a grid's overrides, the batch script of a run, Slurm's tools
// (sbatch, squeue, scontrol, sacct, scancel) and what they print, how a
// job's state maps to a run's outcome, the memory request of a job, the
// records files its executions write on shared storage, and the folder a
// node data directory may be in. It knows the queue only through executors.Host:
// the queue (package experiments, executor_host.go) hands it runs, follows
// the jobs it returns with its one loop (follow.go) and records their
// outcome.
package slurm
