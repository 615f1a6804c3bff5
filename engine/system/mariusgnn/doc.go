// Package mariusgnn is the "mariusgnn" variant: MariusGNN (Waleffe et al.,
// EuroSys '23) as GNNDrive (ICPP '24) §2, §3 (D2) and §5.4 and DiskGNN
// (arXiv 2405.05231) §1 and §7 describe and measure it, following the
// public artifact (marius-team/marius: ordering.cpp, the DENSE neighbour
// sampler, the partition buffer) where the papers are silent. One file per
// mechanism:
//
//   - mariusgnn.go: Prepare (partitioning, the buffer sized from the
//     budget) and Close;
//   - partitions.go: p node partitions with contiguous features on disk and
//     p² edge buckets, written at prepare time (prepare stages
//     partition_s, partition_features_s, edge_buckets_s);
//   - partition_buffer.go: a buffer of c partitions (c from the host budget,
//     sizing.go) filled with direct I/O through engine/storage, with
//     asynchronous prefetch of the next state's partition;
//   - in_memory_subgraph.go: the graph of the resident partitions;
//   - ordering.go: SEQUENTIAL and DISPERSED node-partition orderings
//     (option ordering);
//   - epoch.go: the epoch over the ordering's buffer states;
//   - dense_sampler.go: DENSE sampling restricted to in-buffer edges, biased
//     on purpose; the records count the edges it hides; the DENSE batches
//     measured for sizing (profileDense);
//   - sizing.go: the buffer's capacity from the budget, pure;
//   - variant.go: registration, options and the constructor.
//
// An epoch (GNNDrive §3 D2: "MariusGNN prepares data by ordering a desired
// sequence of partitions and loading them to memory in advance for an
// epoch"): build the ordering, load the first buffer state (both on the
// critical path: stage prep_s, GNNDrive Table 2's "Data Preparation"),
// then for every state train its training nodes in mini-batches sampled
// from the in-memory subgraph, features copied from the buffer (extract_s),
// while the next state's partition is read ahead; waiting for a swap is
// swap_s. The buffer is unloaded at the end of the epoch, as the artifact
// does. Counters: partition_loads, partition_hits (resident when a state
// needed them), partition_misses (= loads), prefetched_loads,
// partition_bytes_read, bucket_loads, edge_bytes_read, buffer_states,
// buffer_edges (edges of the states' subgraphs), graph_edges, and from the
// sampler sampled_nodes, sampled_buffer_edges, edges_dropped (in-edges of
// sampled nodes that come from partitions on disk) and isolated_nodes.
// Tiers: every feature row comes from the buffer ("cpu").
package mariusgnn

// Name is the registered name of the MariusGNN variant; paper and summary
// are its lines in the registry (outcore systems, the dashboard).
const (
	Name    = "mariusgnn"
	paper   = "MariusGNN: Resource-Efficient Out-of-Core Training of Graph Neural Networks (EuroSys'23), as measured by GNNDrive (ICPP'24) §3, §5.4 and DiskGNN (arXiv 2405.05231) §7"
	summary = "node partitions and edge buckets on disk, a buffer of c partitions, per-epoch ordering and preload, DENSE sampling of in-buffer edges only (biased)"
)
