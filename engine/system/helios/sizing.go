package helios

// How Helios lays out a run's memory (§3.2 "Cache Placement Strategy",
// §4.2): the CPU memory holds the entire topology first and the
// second-hottest features in the rest; the GPU memory holds the hottest
// features (Helios fills all the GPU memory the model leaves; here the
// gpu_cache option, 10% of the feature table by default) and the batches
// in flight. The pure functions here turn a dataset shape and the options
// into those sizes; MinMemory is the host floor: the runtime and the
// topology.

import "outcore/engine/train"

// runtimeFloor is what an `outcore train` process holds before any data
// (experiments.RuntimeFloor).
const runtimeFloor = 12 << 20

// TopologyBytes is the graph structure kept whole in host memory.
func TopologyBytes(shape train.DatasetShape) int64 {
	return shape.IndptrBytes() + shape.IndicesBytes()
}

// MinMemory is the least host budget Helios can start with on a dataset of
// this shape: the smallest budget whose Plan is feasible when the runtime
// and the labels are the only other host memory and nothing is reserved
// (the runtime, the topology and the labels). Everything else is cut to
// the budget.
func MinMemory(shape train.DatasetShape, _ train.Config) int64 {
	return runtimeFloor + TopologyBytes(shape) + 4*shape.Nodes
}

// LayoutInput is what the placement sizes depend on.
type LayoutInput struct {
	Shape train.DatasetShape
	// Budget is the host budget (0: unlimited), HostWork the process's own
	// host memory besides topology and CPU tier, Reserve the part of the
	// budget kept free.
	Budget, HostWork, Reserve int64
	// GPUCache is the GPU tier in bytes. CPUCache is the CPU tier in bytes,
	// or negative for "the rest of the host budget" (without a budget:
	// 10% of the feature table, the setting of §4.2's Fig. 6).
	GPUCache, CPUCache int64
}

// Layout is the size of each tier in feature rows.
type Layout struct {
	GPURows, CPURows int64
	// CPUCut is true when the budget held less CPU tier than was asked.
	CPUCut        bool
	TopologyBytes int64
	// Feasible is false when the budget cannot hold the whole topology
	// next to the process's own memory and the reserve.
	Feasible bool
}

// Plan sizes the two tiers.
func Plan(in LayoutInput) Layout {
	rb := in.Shape.RowBytes()
	n := in.Shape.Nodes
	l := Layout{TopologyBytes: TopologyBytes(in.Shape)}
	l.GPURows = min(max(0, in.GPUCache)/rb, n)
	want := in.CPUCache / rb
	switch {
	case in.CPUCache >= 0:
	case in.Budget > 0:
		want = n
	default:
		want = in.Shape.FeatureBytes() / 10 / rb
	}
	want = min(want, n-l.GPURows)
	l.CPURows = want
	l.Feasible = in.Budget <= 0 || in.Budget >= l.TopologyBytes+in.HostWork+in.Reserve
	if in.Budget > 0 {
		// the rows and the per-node tier map (4 bytes a node)
		avail := in.Budget - l.TopologyBytes - in.HostWork - in.Reserve - 4*n
		l.CPURows = min(want, max(0, avail)/rb)
		l.CPUCut = in.CPUCache >= 0 && l.CPURows < want
	}
	return l
}
