package slurm

// The memory a run's Slurm job requests (docs/ARCHITECTURE.md
// "Executors"): the run's budget, plus the model step that outcore holds
// outside the budget (engine/system/kit/model_mem.go: parameters, optimizer
// state, activations and gradients, as the GPU memory of the papers), plus
// what the job runs beside the training process. The step is measured by
// profiling only once the run has started, so the request uses an upper
// estimate from the configuration's shapes; a grid may give its own
// allowance (slurm.mem_allowance) instead.

import (
	"outcore/engine/dataset"
	"outcore/engine/train"
)

const (
	// JobOverheadBytes: the batch shell, the `outcore train` watcher that
	// places the training process in its cgroup, the dataset commands.
	JobOverheadBytes = 128 << 20
	// matrixLibBytes: the matrix library's per-thread buffers (OpenBLAS
	// keeps them for the process's life; engine/system/budget.go counts
	// them in the step).
	matrixLibBytes = 64 << 20
)

// StepAllowance estimates the model step held outside a run's budget: the
// trainer's workspace for a mini-batch whose every hop is full (seeds ×
// Π(1+fanout), capped at the node count), with profiling's margins
// (workspace +1/8, then +1/8), the parameters with their gradients and
// Adam state, and the matrix library's buffers. An estimate, not a
// measurement: it errs high for sparse neighbourhoods. 0 in the compute
// modes that train no model (none, model:).
func StepAllowance(cfg train.Config, meta dataset.Meta) int64 {
	if m, _, err := cfg.ComputeMode(); err == nil && !m.Trains() {
		return 0 // none and model: modes run no model step (DESIGN §10)
	}
	layers := len(cfg.Fanout)
	if layers == 0 || meta.Nodes == 0 {
		return matrixLibBytes
	}
	classes := max(meta.Classes, 1)
	hidden := max(cfg.Hidden, 1)
	dims := make([]int64, layers+1)
	dims[0], dims[layers] = int64(meta.FeatureDim), int64(classes)
	for l := 1; l < layers; l++ {
		dims[l] = int64(hidden)
	}
	seeds := int64(cfg.Batch)
	if seeds <= 0 {
		seeds = max(meta.Train, 1)
	}
	// n[h]: nodes at hop h of the sampled neighbourhood (n[0] the seeds).
	n := make([]int64, layers+1)
	n[0] = min(seeds, meta.Nodes)
	for h := 0; h < layers; h++ {
		f := int64(cfg.Fanout[h])
		if f < 0 || n[h] > meta.Nodes/(f+1) {
			n[h+1] = meta.Nodes
		} else {
			n[h+1] = min(meta.Nodes, n[h]*(f+1))
		}
	}
	heads := int64(max(cfg.Heads, 1))
	var floats, params int64
	for l := 0; l < layers; l++ {
		in, out := dims[l], dims[l+1]
		src, dst := n[layers-l], n[layers-l-1]
		// aggregated input, pre-activation, activation and their gradients,
		// and the gradient with respect to the layer's input
		floats += dst*(2*in+3*out) + src*in
		params += 2*in*out + 2*out
		if cfg.Model == "gat" {
			edges := dst * (int64(max(cfg.Fanout[layers-l-1], 1)) + 1)
			floats += 2 * edges * heads
			params += 2 * heads * out
		}
	}
	arena := floats * 4
	arena += arena / 8 // the reserve of profiling
	arena += arena / 8 // and its margin
	return arena + params*4*4 + matrixLibBytes
}

// JobMemoryBytes is a run's memory request: budget + allowance + device
// budget + the job's own processes. A run without a budget asks for its
// dataset's files (all of them may end up in the page cache) instead of a
// budget. allowance 0 means StepAllowance's estimate. The device budget
// (device_mem, DESIGN §2 "One memory contract") is host memory here: the
// variants' device tiers live beside the budget in the run's cgroup.
func JobMemoryBytes(cfg train.Config, meta dataset.Meta, budget, allowance int64) int64 {
	device := int64(0)
	if c := cfg; c.ResolveDeviceMem(meta.FeatureBytes()) == nil {
		device = c.DeviceMemBytes
	}
	if allowance <= 0 {
		allowance = StepAllowance(cfg, meta)
	}
	if budget <= 0 {
		for _, size := range meta.Files {
			budget += size
		}
	}
	return budget + allowance + device + JobOverheadBytes
}
