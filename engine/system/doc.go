// Package system is the home of the training-system variants, one
// sub-package per variant, each registering a train.Variant from its init
// function through kit.Register (a run's memory limit reaches them as
// train.Env.Limit; placing the process in a memory cgroup is
// experiments/supervise's, never the engine's):
//
//   - pygplus: "pyg+", the memory-mapped baseline (Ginex §5.1,
//     GNNDrive §5).
//   - ginex: "ginex", the inspector–executor pipeline with superbatches,
//     Belady changesets and the neighbour cache (Ginex §3–4).
//   - mariusgnn: "mariusgnn", node partitions and edge buckets on disk, a
//     partition buffer with its orderings, DENSE sampling of in-buffer
//     edges (MariusGNN as GNNDrive §5.4 and DiskGNN §7 measure it).
//   - gnndrive: "gnndrive", asynchronous extraction into a shared feature
//     buffer (GNNDrive §4, Algorithm 1).
//   - diskgnn: "diskgnn", offline sampling, the four-level feature store,
//     segment search, MinHash reordering, batched packing and the
//     four-stage pipeline (DiskGNN §3–§6, Algorithms 1–2).
//   - gids: "gids", the storage access accumulator, the constant CPU
//     buffer by reverse PageRank and the software cache with window
//     buffering (GIDS §3), GPU parts stood in for on the CPU.
//   - helios: "helios", decoupled asynchronous I/O submission and
//     completion, the GPU/CPU static cache from pre-sampling and the deep
//     per-hop pipeline (Helios §3), GPU parts stood in for on the CPU.
//
// kit is the toolkit they share (the skeleton: registration, options,
// Base, the one sizing signature Sizer; profiling and the memory budget, the sampler pool,
// off-heap memory, gathers from memory maps); systest holds their test
// helpers and toy, the test variant built from the skeleton alone; all imports every variant and is the only list of them
// (docs/ARCHITECTURE.md "Adding a system").
package system
