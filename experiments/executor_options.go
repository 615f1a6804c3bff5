package experiments

import (
	"path/filepath"
	"slices"
	"strings"

	"outcore/engine/train"
	"outcore/gpu"

	"outcore/experiments/grid"
	"outcore/experiments/slurm"
	"outcore/store"
)

// CreateOptions are the command line's choices for Manager.CreateWith.
type CreateOptions struct {
	// Executor runs the experiment's runs ("" = the grid's "executor",
	// else the queue's Options.Executor). A grid naming another executor
	// is an error.
	Executor string
}

// chooseExecutor picks the executor of a grid's runs — the command line's
// choice, else the grid's "executor", else the queue's default — and
// refuses one the queue does not offer (Options.Executors) and a grid's
// Slurm node data directory outside the folder the queue allows.
func (m *Manager) chooseExecutor(g *grid.Grid, co CreateOptions) (string, grid.ProblemList) {
	var ps grid.ProblemList
	executor := m.opts.Executor
	switch {
	case co.Executor != "" && g.Executor != "" && co.Executor != g.Executor:
		ps.Add("executor", "executor: the grid names %q but %q was asked for; drop one", g.Executor, co.Executor)
		return executor, ps
	case co.Executor != "":
		if err := grid.ValidExecutor(co.Executor); err != nil {
			ps.Add("executor", "executor: %v", err)
			return executor, ps
		}
		executor = co.Executor
	case g.Executor != "":
		executor = g.Executor
	}
	if !slices.Contains(m.opts.Executors, executor) {
		ps.Add("executor", "executor: %q is not offered here: this queue runs %s (the executor is the server's choice: `outcore serve --executor %s` offers it)",
			executor, strings.Join(m.opts.Executors, ", "), strings.Join(append(append([]string(nil), m.opts.Executors...), executor), ","))
	}
	if executor == store.ExecutorSlurm && g.Slurm != nil && g.Slurm.NodeDataDir != "" && grid.NodeDataDirSyntax(g.Slurm.NodeDataDir) == nil {
		if p, err := slurm.ConfineNodeDataDir(m.opts.Slurm.NodeDataRoot(m.opts.DataDir), g.Slurm.NodeDataDir); err != nil {
			ps.Add("slurm.node_data_dir", "slurm.node_data_dir: %v", err)
		} else if sameDir(p, m.opts.DataDir) {
			// The jobs generate their datasets into the node data
			// directory: the shared data directory itself would have every
			// node write over the datasets the server reads.
			ps.Add("slurm.node_data_dir", "slurm.node_data_dir: %s is the data directory itself; name a folder inside it (each node generates its datasets there)", g.Slurm.NodeDataDir)
		}
	}
	// A run that asks for the GPU on this host fails without one: said at
	// creation, not when the run starts.
	if executor == store.ExecutorLocal {
		if cfg, err := g.CellConfig(grid.Cell{}); err == nil && cfg.Device == train.DeviceCUDA && m.opts.GPU != nil && m.opts.GPU.Name() == gpu.None {
			ps.Add("device", "device: %q asks for a GPU and this host has none (NVML found no GPU); use \"auto\" (the GPU where there is one, else the CPU, recorded) or \"cpu\"", cfg.Device)
		}
	}
	return executor, ps
}

// sameDir reports whether a and b name the same folder (symbolic links
// followed where they exist).
func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA != nil || errB != nil {
		ra, rb = filepath.Clean(a), filepath.Clean(b)
	}
	if aa, err := filepath.Abs(ra); err == nil {
		ra = aa
	}
	if bb, err := filepath.Abs(rb); err == nil {
		rb = bb
	}
	return ra == rb
}
