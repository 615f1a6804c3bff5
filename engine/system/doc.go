// Package system holds the disk-based training variants compared by
// outcore, one file per variant, each opening with the paper sections it
// implements, and each registered with the trainer under its name:
//
//   - pyg_plus.go: "pyg+", the memory-mapped baseline (Ginex §5.1,
//     GNNDrive §5).
//   - ginex.go (+ ginex_*.go): "ginex", the inspector–executor pipeline with
//     superbatches, Belady changesets and the neighbour cache (Ginex §3–4).
//   - gnndrive.go, extractor.go, releaser.go: "gnndrive", asynchronous
//     extraction into a shared feature buffer (GNNDrive §4, Algorithm 1),
//     CPU-training variant.
//
// memlimit.go places `outcore train --mem-limit` in its own memory cgroup
// and turns a kill by the limit into an "oom" outcome; budget.go holds the
// memory accounting every variant sizes its caches from.
package system
