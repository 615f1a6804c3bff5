// Package grid is the grid language of outcore's experiments
// (docs/ARCHITECTURE.md, "Grids"): a grid file or the dashboard's form
// becomes a Grid (ParseGrid, NewGrid), held to the limits every grid is
// held to (Problems, in words), planned against a data directory into one
// RunSpec per cell (Plan), each cell's configuration checked as the child
// will read it, cells below their variant's floor refused
// (VariantMinMemory). Of the executor keys of a grid, only the name is
// checked here (registered, experiments/executors); an executor's options
// block goes, unread, to that executor's own check.
//
// It is a leaf under the runner (package experiments): the report and the
// dashboard import it without the queue, the supervisor, cgroups or
// any executor (internal/lint, viewers.go).
package grid
