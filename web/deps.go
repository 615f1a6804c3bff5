package web

import (
	"context"
	"io"

	"outcore/engine/dataset"
	"outcore/experiments/grid"
	"outcore/store"
)

// Store is what the pages read from the experiment store; *store.Store
// implements it.
type Store interface {
	ListExperiments(ctx context.Context) ([]store.Experiment, error)
	Experiment(ctx context.Context, id int64) (store.Experiment, error)
	Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error)
	Run(ctx context.Context, id int64) (store.Run, error)
	Epochs(ctx context.Context, runID int64) ([]store.Epoch, error)
	ExperimentEpochs(ctx context.Context, experimentID int64) (map[int64][]store.Epoch, error)
	Samples(ctx context.Context, runID int64, fromT, toT float64, limit int) ([]store.Sample, error)
	RunEvents(ctx context.Context, runID int64, kinds ...string) ([]store.Event, error)
	EventsSince(ctx context.Context, after int64, limit int) ([]store.Event, error)
	ExperimentsWithRuns(ctx context.Context, conds []store.Cond) (map[int64]bool, error)
	LastEventID(ctx context.Context) (int64, error)
	ExportCSV(ctx context.Context, w io.Writer, experimentID int64, what string) error
}

// Queue is what the pages ask of the experiment runner: check a grid,
// create an experiment from a grid file (its runs join the queue), cancel,
// retry, delete, and follow the store's event log; *experiments.Manager
// implements it. Create's validation errors are *grid.InvalidError
// (wrapping grid.ErrInvalid), listing the problems Check lists.
type Queue interface {
	Check(g *grid.Grid, pending map[string]dataset.Meta) []grid.Problem
	// Refusals lists the cells of a grid that cannot start under their
	// memory limit, with their reasons: the check Create makes
	// (train.MinMemoryFor with the data directory), for the form's matrix.
	Refusals(g *grid.Grid, pending map[string]dataset.Meta) []store.RefusedCell
	Create(ctx context.Context, gridJSON []byte) (store.Experiment, error)
	CancelRun(ctx context.Context, runID int64) error
	RetryRun(ctx context.Context, runID int64) (store.Run, error)
	// RetryExperiment requeues an experiment's failed, cancelled and
	// interrupted runs (a new attempt each), as `outcore exp retry ID`.
	RetryExperiment(ctx context.Context, id int64) ([]store.Run, error)
	CancelExperiment(ctx context.Context, id int64) (int, error)
	DeleteExperiment(ctx context.Context, id int64) error
	// SetExperimentMeta renames an experiment and replaces its notes and
	// tags; refused values wrap store.ErrInvalidMeta.
	SetExperimentMeta(ctx context.Context, id int64, m store.ExperimentMeta) error
	// SubscribeFrom delivers every event with id > lastID in order, stored
	// ones first, then live ones; the function ends the subscription.
	SubscribeFrom(lastID int64) (<-chan store.Event, func())
}
