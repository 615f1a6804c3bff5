package train

// The GPU runtime's host memory under the memory contract (docs/DESIGN.md
// §2 "One memory contract"). With the trainer on the GPU the process also
// holds what the CUDA runtime keeps in host memory: the driver's context,
// cuBLAS's and NVRTC's state, the loaded kernels and engine/cuda's pinned
// staging slots. None of it is data the papers' host budgets hold (their
// GPU processes carry the same runtime), so it is held outside the budget
// like the model step: measured here as the growth of the process's
// anonymous memory while the device opens (the limit lifted meanwhile, so
// the measurement cannot be cut short), added to every later Hold
// (kit.HoldOutsideBudget), and stated among the run's deviations.
// docs/benchmarks/gpu.md gives PyTorch Geometric's runtime the same
// allowance.

import (
	"fmt"

	"outcore/engine/cuda"
	"outcore/internal/osutil"
)

// useDevice moves env's trainer to the device named by device and records
// the GPU runtime's host memory in env.GPURuntimeBytes.
func useDevice(env *Env, device string) error {
	lifted := false
	if device != "" && device != DeviceCPU && env.Limit.Enforced() {
		if err := env.Limit.Lift(); err != nil {
			return fmt.Errorf("--device %s: lift the memory limit while the GPU runtime loads: %w", device, err)
		}
		lifted = true
	}
	before, _ := osutil.AnonRSSBytes()
	note, err := env.Trainer.UseDevice(device)
	if err != nil {
		return err
	}
	if note != "" {
		env.Deviate("%s", note)
	}
	g := env.Trainer.DeviceName()
	if g != "" {
		after, _ := osutil.AnonRSSBytes()
		env.GPURuntimeBytes = gpuRuntimeBytes(before, after)
		env.Logf("trainer on the GPU: %s (engine/cuda)", g)
		env.Deviate("the trainer ran on the GPU (%s, engine/cuda): where another deviation says training runs on the CPU, the training step ran on this GPU, its batch input copied host-to-device each step through pinned staging; the caches and buffers those deviations name stayed in host memory", g)
		env.Deviate("the GPU runtime's host memory (%d MiB: CUDA context, cuBLAS, NVRTC, kernels, %d MiB of pinned staging) is held outside the %d MiB host budget, as the model step is",
			env.GPURuntimeBytes>>20, int64(cuda.StagingBytes)>>20, env.MemBudget>>20)
	}
	if lifted {
		if err := env.Limit.Hold(env.GPURuntimeBytes); err != nil {
			return fmt.Errorf("--device %s: hold the GPU runtime's %d MiB outside the budget: %w", device, env.GPURuntimeBytes>>20, err)
		}
	}
	return nil
}

// gpuRuntimeBytes is the GPU runtime's host memory: the anonymous memory
// the process gained while the device opened (before and after; 0 when
// either could not be read) plus the pinned staging slots it allocates at
// the first step.
func gpuRuntimeBytes(before, after int64) int64 {
	grew := int64(0)
	if before > 0 && after > before {
		grew = after - before
	}
	return grew + int64(cuda.StagingBytes)
}
