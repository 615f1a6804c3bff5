// Package pygplus is the "pyg+" variant: PyTorch Geometric extended to
// disk-based training over a memory-mapped graph, the baseline of Ginex
// (VLDB 2022) §2.2–2.3 and §5.1 and of GNNDrive (ICPP 2024) §3 and §5:
//
//   - pyg_plus.go: memory-mapped topology and features with readahead
//     off, a pool of sampling workers feeding a queue, the gather from the
//     mapping on the trainer's side;
//   - gather_thread.go: the gather thread that overlaps batch i+1's gather
//     with batch i's training (Ginex §5.1);
//   - sizing.go: the little PyG+ sizes from the budget (the batch inputs;
//     the page cache is the rest), pure;
//   - variant.go: registration, options and the constructor.
package pygplus

// Name is the registered name of the PyG+ variant; paper and summary
// are its lines in the registry (outcore systems, the dashboard).
const (
	Name    = "pyg+"
	paper   = "PyG+, the baseline of Ginex (VLDB'22) §5.1 and GNNDrive (ICPP'24) §5"
	summary = "memory-mapped topology and features, page-cache faults on the critical path"
)
