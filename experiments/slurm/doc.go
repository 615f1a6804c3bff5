// Package slurm is what outcore's slurm executor runs on
// (docs/ARCHITECTURE.md, "Executors" and "Slurm runs"): the queue's Slurm
// options and a grid's overrides, the batch script of a run, Slurm's tools
// (sbatch, squeue, scontrol, sacct, scancel) and what they print, how a
// job's state maps to a run's outcome, the memory request of a job, the
// records files its executions write on shared storage, and the folder a
// node data directory may be in. It knows nothing of the queue: the
// executor (experiments/slurm_exec.go) drives runs with it, and the queue
// records their outcomes.
package slurm
