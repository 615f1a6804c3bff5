// Package cache holds the reusable cache structures of the system variants,
// one file per paper mechanism:
//
//   - changeset.go: Ginex's three-pass O(S) changeset precomputation (Ginex
//     §3.4, Fig. 12–13) that simulates Belady's algorithm exactly over a
//     superbatch trace and yields per-iteration in_ids/out_ids/in_positions.
//   - feature_cache.go: Ginex's direct-addressed feature cache (§3.3, Fig. 11),
//     initialised per superbatch and updated from changesets.
//   - neighbor_cache.go: Ginex's static neighbour cache (§3.2, Fig. 10), filled
//     by the out/in-degree score and sized from a byte budget.
//   - lru.go, static_cache.go: an LRU cache and a static top-score (PaGraph
//     style) cache, the comparison points for Ginex's optimal policy.
//   - mapping_table.go, standby_list.go, wait_list.go, feature_buffer.go:
//     GNNDrive's feature buffer (GNNDrive §4.2, Algorithm 1): mapping table
//     {slot, refcount, valid}, reverse mapping, standby LRU list of released
//     slots, wait list for nodes another extractor is loading, and the
//     N_e × M_b reservation against deadlock.
//
// Node ids are int64 global ids as in graph.MiniBatch.InputNodes.
package cache
