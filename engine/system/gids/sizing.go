package gids

// How GIDS lays out a run's memory (§3.1 "CPU Memory" and "GPU Memory",
// §3.5, §4.1 "GIDS Dataloader"; artifact homogenous_train.py):
//
//   - host (the budget): the whole graph structure, pinned (indptr and
//     indices, §3.5), and the constant CPU buffer, "a user-configurable
//     portion of CPU memory" (the paper's default 10% of the dataset, the
//     artifact's cpu_buffer_percent 0.2), cut to what the budget leaves
//     after the topology, the process's own memory and the reserve;
//   - device (outside the budget): the software cache (8 GB in the paper),
//     its metadata, the mini-batch buffers of merged iterations and the
//     window buffer's sampled node lists.
//
// The pure functions here turn a dataset shape and the options into those
// sizes; MinMemory is the host floor: the runtime and the pinned topology.

import (
	"outcore/engine/train"
)

// runtimeFloor is what an `outcore train` process holds before any data
// (experiments.RuntimeFloor: every variant is OOM-killed below 12 MiB).
const runtimeFloor = 12 << 20

// MinMemory is the least host budget GIDS can start with on a dataset of
// this shape: the smallest budget whose Plan is feasible when the runtime
// and the labels are the only other host memory and nothing is reserved
// (the runtime, the topology and the labels). Everything else is cut to
// the budget.
func MinMemory(shape train.DatasetShape, _ train.Config) int64 {
	return runtimeFloor + TopologyBytes(shape) + 4*shape.Nodes
}

// TopologyBytes is the graph structure pinned in host memory (§3.5).
func TopologyBytes(shape train.DatasetShape) int64 {
	return shape.IndptrBytes() + shape.IndicesBytes()
}

// LineBytes is the cache line size: want when set, else one feature row
// rounded up to the 512-byte sector (the artifact's page_size is one row:
// 4096 for the 1024-dimensional IGB features, 512 for the 128-dimensional
// OGB ones).
func LineBytes(shape train.DatasetShape, want int64) int64 {
	if want > 0 {
		return want
	}
	const sector = 512
	return (shape.RowBytes() + sector - 1) / sector * sector
}

// Layout is the memory plan of one run.
type Layout struct {
	// LineBytes is the cache line; Lines the lines of the feature file.
	LineBytes, Lines int64
	// CacheLines is the software cache's size in lines (device memory).
	CacheLines int64
	// CPUBufferRows is the constant CPU buffer's size in feature rows
	// (host memory); CPUBufferCut is true when the budget cut it.
	CPUBufferRows int64
	CPUBufferCut  bool
	// TopologyBytes is the pinned graph structure (host memory).
	TopologyBytes int64
	// Feasible is false when the budget cannot hold the pinned topology
	// next to the process's own memory and the reserve.
	Feasible bool
}

// LayoutInput is what the plan depends on.
type LayoutInput struct {
	Shape train.DatasetShape
	// Budget is the host budget in bytes (0: unlimited); HostWork the
	// process's own host memory besides topology and buffer (the runtime,
	// labels, mini-batches, readers, the Go heap's slack) and Reserve the
	// part of the budget kept free.
	Budget, HostWork, Reserve int64
	// CPUBuffer and GPUCache are the sizes asked for, in bytes; Line the
	// line asked for (0: one row).
	CPUBuffer, GPUCache, Line int64
}

// Plan sizes the CPU buffer and the software cache.
func Plan(in LayoutInput) Layout {
	l := Layout{LineBytes: LineBytes(in.Shape, in.Line), TopologyBytes: TopologyBytes(in.Shape)}
	fb := in.Shape.FeatureBytes()
	l.Lines = (fb + l.LineBytes - 1) / l.LineBytes
	l.CacheLines = min(max(0, in.GPUCache/l.LineBytes), l.Lines)
	rb := in.Shape.RowBytes()
	want := min(max(0, in.CPUBuffer)/rb, in.Shape.Nodes)
	l.CPUBufferRows = want
	l.Feasible = in.Budget <= 0 || in.Budget >= l.TopologyBytes+in.HostWork+in.Reserve
	if in.Budget > 0 {
		avail := max(0, in.Budget-l.TopologyBytes-in.HostWork-in.Reserve)
		// the buffer's rows plus its per-node slot map (4 bytes a node)
		if avail < in.Shape.Nodes*4 {
			l.CPUBufferRows = 0
		} else {
			l.CPUBufferRows = min(want, (avail-in.Shape.Nodes*4)/rb)
		}
		l.CPUBufferCut = l.CPUBufferRows < want
	}
	return l
}

// CacheMetaBytes is the software cache's metadata for a layout (per line
// of the file: its slot and window counter; per slot: its line and state).
func (l Layout) CacheMetaBytes() int64 {
	if l.CacheLines == 0 {
		return 0
	}
	return l.Lines*8 + l.CacheLines*(8+1+4)
}
