// Package kit is the toolkit the variant packages share
// (docs/ARCHITECTURE.md "Adding a system"):
//
//   - budget.go: the memory budget every variant goes through (Budget:
//     Go memory limit, one profiled step held outside the budget, the
//     limit again for the planned heap), the reserve kept free
//     (ReserveBytes), and the lower-bound workspace and search behind each
//     variant's MinMemory (EstimateWorkspace, MinBudget);
//   - profile.go: profiling of one training step (ProfileWorkspace, Ginex
//     §3.5's "short offline profiling") and its accounting (PlanStep,
//     pure);
//   - model_mem.go: the model step held outside the host budget, through
//     the run's train.MemoryLimit;
//   - sampler_pool.go: a pool of sampling workers feeding a queue
//     (StartSamplers), each timed as a sample worker (busy and wait);
//   - offheap_linux.go: caches and buffers off the Go heap (OffHeap);
//   - mmap_linux.go, gather_mapped_linux.go: memory maps with readahead
//     off, page-cache residency, dropping a file's pages, and the
//     multi-threaded gather of rows from a mapping, which measures its
//     threads' device reads, rows from the device and busy/wait
//     (docs/DESIGN.md §5);
//   - first_error.go: the first error of a pipeline's goroutines.
//
// Nothing here is specific to one paper; a mechanism of one paper lives in
// that variant's package.
package kit
