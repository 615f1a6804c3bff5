package helios

// Helios's options and how it lays out a run's memory (§3.2 "Cache
// Placement Strategy", §4.2): the CPU memory holds the entire topology
// first and the second-hottest features in the rest; the GPU memory holds
// the hottest features (Helios fills all the GPU memory the model leaves;
// here the device budget, device_mem, less the batches in flight, or the
// gpu_cache option) and the batches in flight.
//
// Plan is the pure function from a budget, a profiled (or estimated)
// workspace, the dataset's shape and the options to the tiers' sizes,
// with a feasibility verdict; the floor (kit.Register's) is the smallest budget it finds
// feasible with the estimated workspace.

import (
	"outcore/engine/system/kit"
)

// Layout is the size of each tier in feature rows, and the host memory
// around them.
type Layout struct {
	GPURows, CPURows int64
	// CPUCut is true when the budget held less CPU tier than was asked.
	CPUCut        bool
	TopologyBytes int64
	// MaxBatch is the rows of one batch buffer (device memory).
	MaxBatch int64
	// HeapNeed is the Go heap the host side plans for (workspace base with
	// the topology, the preparers' id maps, the model step when charged to
	// the budget); Staging the rings' buffers; HostBytes the host memory
	// besides the CPU tier (the heap with a quarter of collection slack,
	// the staging).
	HeapNeed, Staging, HostBytes int64
	// Feasible is false when the budget cannot hold HostBytes and the
	// reserve.
	Feasible bool
}

// Plan sizes a run's memory. ws is the profiled workspace (its base taken
// without the indices, which the plan counts itself) or an estimate.
// Without a budget and without cpu_cache, the CPU tier is 10% of the
// feature table (the setting of §4.2's Fig. 6).
func Plan(s kit.Sizing[options, kit.NoProfile]) Layout {
	budget, ws, shape, o := s.Budget, s.WS, s.Shape, s.Opt
	rb := shape.RowBytes()
	n := shape.Nodes
	fb := shape.FeatureBytes()
	l := Layout{TopologyBytes: kit.TopologyBytes(shape)}
	l.MaxBatch = min(int64(float64(ws.MaxInputs)*o.margin)+1, n)
	if o.gpuCache == gpuCacheAuto {
		l.GPURows = min(max(0, o.device-DeviceOther(ws, l.MaxBatch, rb, o.depth))/rb, n)
	} else {
		l.GPURows = min(max(0, kit.SizeBytes(o.gpuCache, fb))/rb, n)
	}
	l.HeapNeed = kit.PinnedHeap(ws, shape, o.preparers)
	l.Staging = int64(o.rings) * int64(o.ringDepth) * max(512, rb)
	l.HostBytes = l.HeapNeed + l.HeapNeed/4 + l.Staging
	var want int64
	switch {
	case o.cpuCache != "":
		want = kit.SizeBytes(o.cpuCache, fb) / rb
	case budget > 0:
		want = n
	default:
		want = fb / 10 / rb
	}
	want = min(want, n-l.GPURows)
	// the rows and the per-node tier map
	l.CPURows, l.Feasible = kit.FitHostTier(budget, l.HostBytes, want, n, rb)
	l.CPUCut = o.cpuCache != "" && l.CPURows < want
	return l
}

// Fits is whether the budget holds the layout (kit.Fitter; Register's
// floor is the least budget where it does).
func (l Layout) Fits() bool { return l.Feasible }

// gpuCacheAuto is gpu_cache's default: the GPU tier gets what the device
// budget leaves after the batch buffers and the sampled mini-batches in
// flight ("Helios fills all the GPU memory the model leaves", DESIGN §2
// "One memory contract").
const gpuCacheAuto = kit.Auto

// DeviceOther is the device memory besides the GPU tier: depth batch
// buffers of maxBatch rows and the sampled mini-batches in flight.
func DeviceOther(ws kit.Workspace, maxBatch, rowBytes int64, depth int) int64 {
	return int64(depth) * (maxBatch*rowBytes + ws.BatchBytes + int64(ws.MaxInputs)*8)
}
