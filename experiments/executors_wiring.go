package experiments

// The executors this queue can run besides its own local one: each
// package registers itself from its init (experiments/executors); a new
// executor is one more import here (docs/ARCHITECTURE.md "Adding an
// executor").
import (
	_ "outcore/experiments/slurm"
)
