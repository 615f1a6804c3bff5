// Package helios holds the mechanisms of Helios (Sun et al., "Helios: An
// Efficient Out-of-core GNN Training System on Terabyte-scale Graphs with
// In-memory Performance"), one file per mechanism:
//
//   - helios.go: the variant's Prepare (pre-sampling, cache placement) and
//     epoch;
//   - presample.go: the pre-sampling epoch that ranks the nodes (§3.2);
//   - submit_complete.go: the asynchronous disk I/O stack with decoupled
//     submission and completion (§3.1);
//   - static_cache.go: the heterogeneous GPU/CPU static cache placed by
//     one epoch of pre-sampling, and the read of its tiers' rows (§3.2);
//   - pipeline.go: the deep GNN-aware pipeline across and within
//     mini-batches (§3.3, Fig. 4), its operators in pipeline_stages.go;
//   - sizing.go: the tiers' sizes from the budget, pure;
//   - variant.go: registration, options and the constructor.
//
// Helios runs its I/O stack, cache and pipeline as GPU kernels; outcore
// has no GPU. The stand-ins (device memory held as a budget outside the
// host cgroup, GPU-initiated NVMe commands issued by goroutines over
// io_uring rings) are named in every run's deviations.
package helios

// Name is the registered name of the Helios variant; paper and summary
// are its lines in the registry (outcore systems, the dashboard).
const (
	Name    = "helios"
	paper   = "Helios: An Efficient Out-of-core GNN Training System on Terabyte-scale Graphs with In-memory Performance"
	summary = "decoupled asynchronous I/O submission and completion, GPU/CPU static cache from pre-sampling, deep per-hop pipeline (GPU parts stood in for on the CPU)"
)
