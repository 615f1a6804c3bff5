// Package gnndrive is the "gnndrive" variant: GNNDrive (Chen et al.,
// "GNNDrive: Reducing Memory Contention and I/O Congestion for Disk-based
// GNN Training", ICPP 2024), one file per mechanism:
//
//   - gnndrive.go: the pipeline of §4.1 (samplers, extractors, trainer,
//     releaser over bounded queues), CPU-based (§4.4) or with the GPU-based
//     buffer layout (§4.2);
//   - extractor.go: one asynchronous extractor over its own io_uring ring
//     (§4.2 "Asynchronous Extracting", Algorithm 1);
//   - releaser.go: releasing a trained batch's slots (§4.1 ⑧–⑨, §4.2
//     "Release Feature Buffer");
//   - staging_buffer.go: the host staging buffer of the GPU-based layout
//     (§4.2 "Reduced Memory Footprint");
//   - early_release.go: releasing a batch's nodes once its rows were read
//     (a recorded departure from §4.1 ⑧);
//   - sizing.go: the feature buffer, queues and extractors from the memory
//     budget, pure;
//   - variant.go: registration, options and the constructor.
//
// The feature buffer itself (mapping table, standby and wait lists) is
// engine/cache's FeatureBuffer.
package gnndrive

// Name is the registered name of the GNNDrive variant; paper and summary
// are its lines in the registry (outcore systems, the dashboard).
const (
	Name    = "gnndrive"
	paper   = "GNNDrive: Reducing Memory Contention and I/O Congestion for Disk-based GNN Training (ICPP'24)"
	summary = "asynchronous io_uring extractors into a shared feature buffer, out-of-order training"
)
