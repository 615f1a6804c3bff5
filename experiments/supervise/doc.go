// Package supervise runs one training child under its memory limit. It is
// the one supervisor behind both `outcore train --mem-limit` and the
// experiment runner (docs/ARCHITECTURE.md, "Process model" and "Memory
// limits"):
//
//  1. create the child's memory cgroup with the limit (internal/cgroup);
//     without one the child still runs, unenforced, and the note says why;
//  2. drop the dataset's clean pages from the page cache, so that the run
//     pays for what it reads instead of finding pages an earlier run (or
//     the generator) left charged elsewhere;
//  3. start the child inside the group from its first instruction (v2
//     clone-into-cgroup, v1 trampoline), in its own process group, killed
//     if the supervisor dies, with `--cgroup PATH` (or `--cgroup none`)
//     appended so that the child knows its group and neither places itself
//     again nor reads the environment for it;
//  4. hand its JSON lines to the caller, noting the summary record;
//  5. when it ends, decide whether the limit killed it (IsOOM: the one OOM
//     rule) and, where the caller asks, write the summary it could not
//     write.
//
// The engine never starts processes: it receives the limit as a
// train.MemoryLimit built from the group (cgroup.Limit).
package supervise
