package experiments

import (
	"slices"
	"strings"

	"outcore/engine/train"
	"outcore/gpu"

	"outcore/experiments/grid"
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
// refuses one the queue does not offer (Options.Executors) and a grid
// whose options block its executor refuses here (executors.Executor's
// CheckGrid).
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
	// The grid's options block for its executor, checked by the
	// executor against this queue's own options (a folder the queue
	// allows, say).
	if e, ok := m.seam[executor]; ok && len(g.ExecutorOptions[executor]) > 0 {
		if err := e.CheckGrid(g.ExecutorOptions[executor]); err != nil {
			if gp := grid.ProblemsOf(err); len(gp) > 0 {
				ps = append(ps, gp...)
			} else {
				ps.Add(executor, "%s: %v", executor, err)
			}
		}
	}
	// External systems (DESIGN §14) run on the local executor only: a job
	// executor would need the registry and the program on its nodes.
	if executor != store.ExecutorLocal {
		for _, sys := range g.Axes.System {
			if grid.IsExternal(sys) {
				ps.Add(grid.AxisSystem, "variants: %q is an external system, which only the local executor runs (this grid's executor is %q)", sys, executor)
			}
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
