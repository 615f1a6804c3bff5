package gids

// GIDS's options and how it lays out a run's memory (§3.1 "CPU Memory"
// and "GPU Memory", §3.5, §4.1 "GIDS Dataloader"; artifact
// homogenous_train.py):
//
//   - host (the budget): the whole graph structure, pinned (§3.5), and the
//     constant CPU buffer, "a user-configurable portion of CPU memory"
//     (the paper's default 10% of the dataset, the artifact's
//     cpu_buffer_percent 0.2), cut to what the budget leaves after the
//     topology, the process's own memory and the reserve;
//   - device (the device budget, device_mem): the software cache (8 GB in
//     the paper), its metadata, the mini-batch buffers of merged iterations
//     and the window buffer's sampled node lists; gpu_cache "auto" (the
//     default) gives the cache what the device budget leaves after the
//     others (DeviceCacheLines).
//
// Plan is the pure function from a budget, a profiled (or estimated)
// workspace, the dataset's shape and the options to those sizes, with a
// feasibility verdict; the floor (kit.Register's) is the smallest budget it finds feasible
// with the estimated workspace.

import (
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

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
	// HeapNeed is the Go heap the host side plans for (workspace base with
	// the pinned topology, samplers' id maps, the model step when charged
	// to the budget); Staging the rings' buffers and scratch lines.
	HeapNeed, Staging int64
	// HostBytes is the host memory besides the CPU buffer: the heap with
	// its collection slack (a quarter, GOGC 25) and the staging.
	HostBytes int64
	// Feasible is false when the budget cannot hold HostBytes and the
	// reserve.
	Feasible bool
}

// Plan sizes a run's memory. ws is the profiled workspace (its base taken
// without the indices, which the plan counts itself) or an estimate.
func Plan(s kit.Sizing[options, kit.NoProfile]) Layout {
	budget, ws, shape, o := s.Budget, s.WS, s.Shape, s.Opt
	l := Layout{LineBytes: LineBytes(shape, o.line), TopologyBytes: kit.TopologyBytes(shape)}
	fb := shape.FeatureBytes()
	l.Lines = (fb + l.LineBytes - 1) / l.LineBytes
	l.CacheLines = min(max(0, kit.SizeBytes(o.gpuCache, fb))/l.LineBytes, l.Lines)
	l.HeapNeed = kit.PinnedHeap(ws, shape, o.samplers)
	l.Staging = int64(o.rings) * int64(o.depth) * l.LineBytes * 2
	l.HostBytes = l.HeapNeed + l.HeapNeed/4 + l.Staging
	rb := shape.RowBytes()
	want := min(max(0, kit.SizeBytes(o.cpuBuffer, fb))/rb, shape.Nodes)
	// the buffer's rows plus its per-node slot map
	l.CPUBufferRows, l.Feasible = kit.FitHostTier(budget, l.HostBytes, want, shape.Nodes, rb)
	l.CPUBufferCut = l.CPUBufferRows < want
	return l
}

// Fits is whether the budget holds the layout (kit.Fitter; Register's
// floor is the least budget where it does).
func (l Layout) Fits() bool { return l.Feasible }

// CacheMetaBytes is the software cache's metadata for a layout (per line
// of the file: its slot and window counter; per slot: its line, state and
// references).
func (l Layout) CacheMetaBytes() int64 {
	if l.CacheLines == 0 {
		return 0
	}
	return l.Lines*8 + l.CacheLines*(8+1+4)
}

// gpuCacheAuto is gpu_cache's default: the device budget less the other
// device memory (DeviceCacheLines); kit.SizeBytes reads it as 0, and
// Prepare sizes the cache.
const gpuCacheAuto = kit.Auto

// DeviceCacheLines is the software cache an automatic gpu_cache gets: the
// lines that, with their metadata (CacheMetaBytes), fit in the device
// budget left after the other device memory (batch buffers, the window's
// mini-batches) — the artifact sizes its cache from the GPU memory the
// training leaves (DESIGN §2 "One memory contract"). At most every line of
// the file.
func DeviceCacheLines(device, other int64, l Layout) int64 {
	avail := device - other - l.Lines*8
	if avail <= 0 {
		return 0
	}
	return min(avail/(l.LineBytes+8+1+4), l.Lines)
}
