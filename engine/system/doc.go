// Package system is the home of the training-system variants, one
// sub-package per variant, each registering a train.Variant from its init
// function (a run's memory limit reaches them as train.Env.Limit; placing
// the process in a memory cgroup is internal/supervise's, never the
// engine's):
//
//   - pygplus: "pyg+", the memory-mapped baseline (Ginex §5.1,
//     GNNDrive §5).
//   - ginex: "ginex", the inspector–executor pipeline with superbatches,
//     Belady changesets and the neighbour cache (Ginex §3–4).
//   - gnndrive: "gnndrive", asynchronous extraction into a shared feature
//     buffer (GNNDrive §4, Algorithm 1).
//   - diskgnn: "diskgnn", offline sampling, the four-level feature store,
//     segment search, MinHash reordering, batched packing and the
//     four-stage pipeline (DiskGNN §3–§6, Algorithms 1–2).
//
// kit is the toolkit they share (profiling and the memory budget, the
// sampler pool, off-heap memory, memory maps); all imports every variant
// and is the only list of them (docs/ARCHITECTURE.md "Adding a system").
package system
