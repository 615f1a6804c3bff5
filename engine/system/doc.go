// Package system runs `outcore train --mem-limit` inside its own memory
// cgroup (memlimit.go) and gives a run its movable memory limit
// (OwnGroupLimit). The training-system variants live in its
// sub-packages, one package per variant, each registering a train.Variant
// from its init function:
//
//   - pygplus: "pyg+", the memory-mapped baseline (Ginex §5.1,
//     GNNDrive §5).
//   - ginex: "ginex", the inspector–executor pipeline with superbatches,
//     Belady changesets and the neighbour cache (Ginex §3–4).
//   - gnndrive: "gnndrive", asynchronous extraction into a shared feature
//     buffer (GNNDrive §4, Algorithm 1).
//
// kit is the toolkit they share (profiling and the memory budget, the
// sampler pool, off-heap memory, memory maps); all imports every variant
// and is the only list of them (docs/ARCHITECTURE.md "Adding a system").
package system
