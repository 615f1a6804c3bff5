// Package dglondisk is the "dgl-ondisk" variant: DGL altered for
// disk-based training by reading the node features from disk with pread,
// the naive baseline of DiskGNN (arXiv:2405.05231) §7.1 ("we also altered
// DGL for disk-based training (called DGL-OnDisk) by directly using pread
// to read the node features from disk") and its Figs. 8–9:
//
//   - dgl_ondisk.go: the graph structure in memory (DGL's graph object),
//     each batch's node features read row by row with pread and no CPU or
//     GPU feature cache (§7.2: "DGL-OnDisk needs to read every node
//     feature from disk (without CPU and GPU cache)"), in the plain sample
//     → gather → train loop of DGL's open-source example (§7.1);
//   - sizing.go: what the budget must hold (process, one step, one batch
//     with its input, the in-memory topology, sized with the profiled
//     base less the indices it already holds: kit.ProfilePinned), pure; a
//     plan that does not fit is refused;
//   - variant.go: registration, options and the constructor.
//
// Where the paper is silent the guesses are recorded as deviations of
// every run (variant.go) and here:
//
//   - the reads are O_DIRECT, one 4 KiB-aligned pread per feature row
//     (storage SeparateReads): the paper says only "pread"; a buffered
//     pread would let the OS page cache act as the CPU cache the paper says
//     DGL-OnDisk lacks;
//   - sampling, gather and training run one after the other on one
//     goroutine: the paper does not say how DGL-OnDisk's data loader
//     overlaps them (DGL's DataLoader with num_workers=0 runs them so);
//   - the topology is held in memory and counted in the budget: the paper
//     sets the memory constraint as a share of the feature bytes and does
//     not say where DGL-OnDisk keeps the graph structure.
//
// Stages: sample_s, extract_s (the preads), train_s, as the reference.
// Device reads: the feature reads by the storage layer (feature_bytes_read,
// rows_from_device: every input row of every batch).
package dglondisk
