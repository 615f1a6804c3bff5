package train

// The run's memory limit as a variant may move it (docs/ARCHITECTURE.md
// "Model step outside the budget"). The papers' host-memory limits never
// hold the GPU's memory; outcore trains on the CPU, so a variant lifts the
// limit while it profiles one training step and then holds the limit at
// budget + what it keeps outside the budget (engine/system/kit's Budget).
// The engine does not know how the limit is enforced and never starts,
// places or finds a process group itself: `outcore train` supplies a
// MemoryLimit through RunOptions.MemoryLimit, built from the memory cgroup
// its supervisor placed it in (internal/cgroup's Limit, named by the hidden
// --cgroup flag; experiments/supervise serves the CLI and the experiment
// runner alike).

// MemoryLimit is the limit of the memory group the training process runs
// in.
type MemoryLimit interface {
	// Lift removes the limit (while a step of unknown size is profiled).
	Lift() error
	// Hold sets the limit to the budget plus extra bytes held outside it.
	Hold(extra int64) error
	// Bytes is the budget in bytes (0 = unlimited).
	Bytes() int64
	// Enforced reports whether a memory cgroup holds this process to the
	// limit (the start record's limit_enforced). Lift and Hold move it only
	// where the group is the process's own; a limit someone else set
	// (internal/cgroup's OuterLimit) is enforced but does not move, and
	// false means there is nothing to move: they do nothing.
	Enforced() bool
}

// FixedLimit is a budget that no memory group enforces: it only sizes the
// variants' caches (no cgroups here, or none asked for). Lift and Hold do
// nothing.
type FixedLimit int64

// Lift does nothing.
func (FixedLimit) Lift() error { return nil }

// Hold does nothing.
func (FixedLimit) Hold(int64) error { return nil }

// Bytes is the budget.
func (l FixedLimit) Bytes() int64 { return int64(l) }

// Enforced is false.
func (FixedLimit) Enforced() bool { return false }
