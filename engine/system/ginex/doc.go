// Package ginex is the "ginex" variant: Ginex (Park et al., "Ginex:
// SSD-enabled Billion-scale GNN Training on a Single Machine via Provably
// Optimal In-memory Caching", VLDB 2022), one file per mechanism:
//
//   - ginex.go: the superbatch inspector–executor pipeline (§3.1, Fig. 8):
//     sample a superbatch, precompute the Belady changesets, then switch
//     and run the main loop with the feature cache;
//   - executor.go: the main loop: gather, cache update, training (§3.1,
//     §3.3–3.4);
//   - neighbor_cache.go: the static neighbour cache built offline (§3.2),
//     index_scan.go: the sequential reads of indices.bin behind it;
//   - cached_indices.go: sampling through the neighbour cache (§3.2, §4);
//   - runfiles.go: the runtime files between the stages (§3.1,
//     Fig. 8(b)–(e));
//   - fresh_slots.go: the rows the switch read, counted as device reads at
//     their first lookup (DESIGN §5's one hit-ratio definition);
//   - policy.go: the feature cache's policy, Belady or PaGraph's static
//     cache of the highest out-degree nodes (§5.4, Fig. 15);
//   - sizing.go: the cache sizes from the memory budget and the profiled
//     workspace (§3.5), pure;
//   - variant.go: registration, options and the constructor.
//
// The Belady changesets, feature cache and neighbour cache themselves are
// engine/cache's. Ginex trains on a GPU; the departures are named in every
// run's deviations.
package ginex

// Name is the registered name of the Ginex variant; paper and summary
// are its lines in the registry (outcore systems, the dashboard).
const (
	Name    = "ginex"
	paper   = "Ginex: SSD-enabled Billion-scale GNN Training on a Single Machine via Provably Optimal In-memory Caching (VLDB'22)"
	summary = "superbatch inspector–executor, Belady feature cache, neighbour cache"
)
