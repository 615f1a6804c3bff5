// Package diskgnn holds the mechanisms of DiskGNN (Liu et al., "DiskGNN:
// Bridging I/O Efficiency and Model Accuracy for Out-of-Core GNN Training",
// arXiv:2405.05231), one file per mechanism, each citing the sections it
// implements:
//
//   - diskgnn.go: the variant's Prepare (offline sampling, placement,
//     search, packing) and epoch, in the order of a run.
//   - offline_sampling.go: sample the pool of mini-batches before
//     training (one epoch's, reused by every epoch, or every epoch's:
//     option sample_pool) and store the graph samples on disk (§3, §4).
//   - graph_samples.go: the on-disk format of those graph samples.
//   - tier_plan.go: the four-level feature store's placement by access
//     frequency: device ("GPU") cache, host cache, and what is left for the
//     disk (§4).
//   - segment_search.go: Algorithm 2, the 1-D approximate search for the
//     segment size under the disk budget (§5.1), and the plan for a
//     segment size given instead (option segment_size: Fig. 13's 50, 100
//     and 150 mini-batches, or all: Fig. 5's global disk cache).
//   - minhash_reorder.go: Algorithm 1, MinHash reordering of a segment's
//     disk cache (§5.1; option reorder=none keeps node order, the
//     "No-reorder" baseline of Fig. 5 and Fig. 13).
//   - segmented_disk_cache.go: per-segment disk caches of the nodes a
//     segment's batches share, and each batch's interpreted addresses
//     (§5.1, §6 "Feature assembling").
//   - chunk_format.go: a batch's chunk on disk: its address header and its
//     packed features (§4 "Packed feature chunk", §6).
//   - layout.go: writing the disk levels of the feature store (§4 Fig. 2,
//     §6).
//   - packing.go: batched sequential packing (§5.2).
//   - individual_packing.go: Fig. 14's baseline, each chunk gathered by
//     random row reads (option packing=individual).
//   - brute_force_search.go: Table 4's baseline, every (segment size,
//     disk-cache entries) built and measured (option search=brute).
//   - tiers.go: the four-level store at training time and the feature
//     assembler (§4 "Feature assembling", Fig. 3).
//   - feature_loader.go: stage ①, the packed chunk by pread and the disk
//     cache rows by io_uring threads (§5.3, §6 "I/O operations").
//   - pipeline.go: the four-stage training pipeline with its two dependency
//     paths and queues of 2 (§5.3, §6).
//   - sizing.go: the memory plan from the budget (§4, §6), pure.
//   - variant.go: registration, options and the constructor.
//
// Other packages reach the variant only through its registration: Name is
// its one exported identifier.
//
// Code comments cite docs/ARCHITECTURE.md for the engine's contracts.
package diskgnn

// Name is the registered name of the DiskGNN variant; paper and summary
// are its lines in the registry (outcore systems, the dashboard).
const (
	Name    = "diskgnn"
	paper   = "DiskGNN: Bridging I/O Efficiency and Model Accuracy for Out-of-Core GNN Training (arXiv:2405.05231)"
	summary = "offline sampling, four-level feature store (device/host caches, segmented disk cache, packed chunks), batched packing, four-stage pipeline"
)
