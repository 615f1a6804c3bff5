package cgroup

import "fmt"

// Limit is the memory limit of a group this process was placed in by its
// supervisor (`outcore train --cgroup PATH`, experiments/supervise), which the
// process may change: it satisfies the engine's train.MemoryLimit (Lift
// while profiling, then Hold the budget plus what is held outside it;
// docs/ARCHITECTURE.md, "Memory limits").
type Limit struct {
	g      *Group
	budget int64
}

// OpenLimit opens the group at dir as the limit of a budget of budget
// bytes (0 = none: the group only accounts usage, and Lift and Hold do
// nothing).
func OpenLimit(dir string, budget int64) (*Limit, error) {
	if budget < 0 {
		return nil, fmt.Errorf("memory limit of %s: negative budget %d", dir, budget)
	}
	g, err := Open(dir)
	if err != nil {
		return nil, err
	}
	return &Limit{g: g, budget: budget}, nil
}

// Lift removes the group's limit.
func (l *Limit) Lift() error {
	if l.budget <= 0 {
		return nil
	}
	return l.g.SetMemoryLimit(0)
}

// Hold sets the group's limit to the budget plus extra bytes.
func (l *Limit) Hold(extra int64) error {
	if l.budget <= 0 {
		return nil
	}
	if extra < 0 {
		return fmt.Errorf("memory limit of %s: negative allowance %d", l.g.Path, extra)
	}
	return l.g.SetMemoryLimit(l.budget + extra)
}

// Bytes is the budget.
func (l *Limit) Bytes() int64 { return l.budget }

// Enforced reports whether the group enforces a budget.
func (l *Limit) Enforced() bool { return l.budget > 0 }

// Path is the group's directory.
func (l *Limit) Path() string { return l.g.Path }

// OuterLimit is the limit of a memory cgroup someone else placed this
// process in (a container, a systemd scope) that already holds it at or
// below what was asked: enforced, but not this process's to move, so Lift
// and Hold do nothing.
type OuterLimit int64

// Lift does nothing: the group is not this process's.
func (OuterLimit) Lift() error { return nil }

// Hold does nothing: the group is not this process's.
func (OuterLimit) Hold(int64) error { return nil }

// Bytes is the budget.
func (l OuterLimit) Bytes() int64 { return int64(l) }

// Enforced is true: the kernel holds the process to the outer group's
// limit.
func (OuterLimit) Enforced() bool { return true }
