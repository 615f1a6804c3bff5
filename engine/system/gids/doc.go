// Package gids holds the mechanisms of GIDS (Park et al., "Accelerating
// Sampling and Aggregation Operations in GNN Frameworks with GPU Initiated
// Direct Storage Accesses", PVLDB 17(6), 2024), one file per mechanism:
//
//   - gids.go: the dataloader's Prepare (§3.1, §3.3, §3.5);
//   - epoch.go: the epoch: window buffering, merged passes, training in
//     the reference order (§3.2, §3.4);
//   - aggregation_pass.go: one feature-aggregation pass over merged
//     iterations (§3.1, Fig. 1);
//   - accumulator.go: the dynamic storage access accumulator (§3.2, Eq. 2–3);
//   - iops_probe.go: measuring the accumulator's IOPS and latency inputs
//     (§3.2, §4.2);
//   - reverse_pagerank.go: the weighted reverse PageRank that picks the
//     constant CPU buffer's hot nodes (§3.3);
//   - window_cache.go: the software cache of 4 KiB lines with random
//     eviction and window buffering (§3.1, §3.4).
//   - sizing.go: the host and device memory layout from the budget, pure;
//   - variant.go: registration, options and the constructor.
//
// GIDS runs on a GPU; outcore has none. The stand-ins (device memory held
// as a budget outside the host cgroup, GPU-initiated NVMe reads done by
// goroutines over io_uring rings) are named in every run's deviations.
package gids

// Name is the registered name of the GIDS variant; paper and summary
// are its lines in the registry (outcore systems, the dashboard).
const (
	Name    = "gids"
	paper   = "Accelerating Sampling and Aggregation Operations in GNN Frameworks with GPU Initiated Direct Storage Accesses (GIDS, PVLDB'24)"
	summary = "storage access accumulator, constant CPU buffer by reverse PageRank, software cache with window buffering (GPU parts stood in for on the CPU)"
)
