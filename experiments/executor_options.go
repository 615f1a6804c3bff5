package experiments

import (
	"slices"
	"strings"

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
		if _, err := slurm.ConfineNodeDataDir(m.opts.Slurm.NodeDataRoot(m.opts.DataDir), g.Slurm.NodeDataDir); err != nil {
			ps.Add("slurm.node_data_dir", "slurm.node_data_dir: %v", err)
		}
	}
	return executor, ps
}
