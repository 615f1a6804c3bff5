// Package cgroup puts a child process into its own memory cgroup with a
// memory limit, from its first instruction on, and reads back what the
// kernel observed: usage including page cache, the peak, and OOM kills.
//
// Both hierarchies are supported:
//
//   - cgroup v2: the limit is memory.max (with memory.swap.max = 0) and the
//     child is cloned straight into the group (clone3 CLONE_INTO_CGROUP via
//     SysProcAttr.UseCgroupFD), so no instruction of it runs outside.
//   - cgroup v1 (memory controller mounted on its own): the limit is
//     memory.limit_in_bytes (and memory.memsw.limit_in_bytes when swap
//     accounting exists). v1 has no clone-into-cgroup, so the child starts
//     as a tiny /bin/sh trampoline that writes its own pid into the group's
//     cgroup.procs and then execs the real program: the program's whole
//     address space is created by that exec, inside the group.
//
// Groups are created under a parent group named "outcore" next to (v2) or
// below (v1) the cgroup this process lives in, one leaf per run, and are
// removed when the run ends.
package cgroup

import (
	"errors"
	"fmt"
)

// ErrUnavailable is wrapped by Detect's error when no writable memory
// cgroup hierarchy exists (not root, no memory controller, read-only
// mount, non-Linux). Callers run without a limit and record why.
var ErrUnavailable = errors.New("memory cgroups unavailable")

// ParentName is the name of the group that holds the per-run groups.
const ParentName = "outcore"

// Version is a cgroup hierarchy version.
type Version int

// Hierarchy versions.
const (
	V1 Version = 1
	V2 Version = 2
)

func (v Version) String() string { return fmt.Sprintf("cgroup v%d", int(v)) }
