package train

// The run's memory limit as a variant may move it (docs/ARCHITECTURE.md
// "Model step outside the budget"). The papers' host-memory limits never
// hold the GPU's memory; outcore trains on the CPU, so a variant lifts the
// limit while it profiles one training step and then holds the limit at
// budget + what it keeps outside the budget (engine/system/kit's Budget).
// The engine does not know how the limit is enforced: whoever starts the
// run (the CLI, the experiment runner) supplies a MemoryLimit through
// RunOptions.MemoryLimit.

// MemoryLimit is the limit of the memory group the training process runs
// in.
type MemoryLimit interface {
	// Lift removes the limit (while a step of unknown size is profiled).
	Lift() error
	// Hold sets the limit to the budget plus extra bytes held outside it.
	Hold(extra int64) error
	// Bytes is the budget in bytes (0 = unlimited).
	Bytes() int64
	// Enforced reports whether Lift and Hold change a limit that applies to
	// this process (false: nothing to move; they do nothing).
	Enforced() bool
}

// FixedLimit is a budget this process cannot move: no memory group of its
// own (unlimited, or limited by a group someone else manages). Lift and
// Hold do nothing.
type FixedLimit int64

// Lift does nothing.
func (FixedLimit) Lift() error { return nil }

// Hold does nothing.
func (FixedLimit) Hold(int64) error { return nil }

// Bytes is the budget.
func (l FixedLimit) Bytes() int64 { return int64(l) }

// Enforced is false.
func (FixedLimit) Enforced() bool { return false }
