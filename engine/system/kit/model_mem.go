package kit

// The model step outside the host budget ("device memory"). The papers
// train on a GPU: the model's parameters, optimizer state, activations and
// gradients live in GPU memory, and their memory limits (cgroups on the
// host) bound only host memory — page cache, caches, buffers, sampled
// mini-batches and the staged batch input. outcore trains on the CPU, so by
// default (train.Config.ModelMem "device") the step's memory is held
// outside the budget: profiling measures one step on the largest profiled
// mini-batch and the run's memory cgroup grows by that much. The variants
// then size their caches from the budget alone, as in the papers, and the
// run records the allowance as a deviation. ModelMem "host" charges the
// step to the budget instead.

import (
	"fmt"

	"outcore/engine/train"
)

// ModelMemOutside reports whether env's model step is held outside its
// memory budget.
func ModelMemOutside(env *train.Env) bool {
	return env.MemBudget > 0 && env.Config.ModelMem != train.ModelMemHost
}

// liftForProfiling removes the memory limit while the throw-away model
// step of profiling runs (its size is not known before); the caller then
// sets it with HoldOutsideBudget. lifted is false where the step is
// charged to the budget or the limit is not this process's to change
// (env.Limit not enforced).
func liftForProfiling(env *train.Env) (lifted bool, err error) {
	if !env.Limit.Enforced() || !ModelMemOutside(env) {
		return false, nil
	}
	if err := env.Limit.Lift(); err != nil {
		return false, fmt.Errorf("model step outside the budget: lift the limit for profiling: %w", err)
	}
	return true, nil
}

// HoldOutsideBudget sets the run's memory limit to its budget plus bytes
// held outside it (the model step and, for a variant whose paper keeps
// more in GPU memory, that too; with the trainer on the GPU, the GPU
// runtime's host memory, env.GPURuntimeBytes). Where the limit is not this process's to
// change it does nothing.
func HoldOutsideBudget(env *train.Env, bytes int64) error {
	if !env.Limit.Enforced() || env.MemBudget <= 0 {
		return nil
	}
	// with the trainer on the GPU, the runtime's host memory too
	// (train's gpu_runtime.go)
	bytes += env.GPURuntimeBytes
	if err := env.Limit.Hold(bytes); err != nil {
		return fmt.Errorf("hold %d MiB outside the %d MiB budget: %w", bytes>>20, env.MemBudget>>20, err)
	}
	return nil
}
