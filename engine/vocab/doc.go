// Package vocab is the vocabulary of a training run, a leaf with no cgo
// and no runtime: the run's configuration (Config, its validation and
// defaults, the memory and device budgets' syntax, the compute modes, the
// I/O backends' names), the variant registry's descriptions (Variant:
// name, paper, options and their checks, the memory floor as a pure
// function, order, stages), the dataset's shape (DatasetShape) and the
// feasibility of a budget (MinMemoryFor, CheckFeasible). The grid
// (experiments/grid) reads runs through it without linking the engine;
// engine/train keeps the runtime (Env, the run loop, each variant's
// factory) and aliases these names (docs/ARCHITECTURE.md, "Import rules").
// A variant registers through engine/system/kit.Register, which fills
// this registry and engine/train's factories at once.
package vocab
