package kit

import (
	"outcore/engine/sample"
	"outcore/engine/train"
)

// PinnedHeap is the Go heap of a variant that keeps the graph's indices
// in host memory and samples with samplers workers (GIDS, Helios): the
// profiled base, the indices, the arena and the step's extra, and each
// sampler's id map.
func PinnedHeap(ws Workspace, shape train.DatasetShape, samplers int) int64 {
	return ws.BaseBytes + shape.IndicesBytes() + ws.ArenaBytes + ws.StepExtra +
		int64(samplers)*sample.IDMapBytes(shape.Nodes, ws.MaxInputs)
}

// FitHostTier is the rows of a host-memory feature tier (GIDS's CPU
// buffer, Helios's CPU tier) the budget holds beside hostBytes and the
// reserve, of want rows asked for, each rowBytes, with a per-node slot
// map of 4 bytes a node; feasible is whether hostBytes fits at all.
// Without a budget (0) the tier is want.
func FitHostTier(budget, hostBytes, want, nodes, rowBytes int64) (rows int64, feasible bool) {
	if budget <= 0 {
		return want, true
	}
	avail := budget - hostBytes - ReserveBytes(budget)
	rows = want
	if want > 0 {
		rows = min(want, max(0, avail-4*nodes)/rowBytes)
	}
	return rows, avail >= 0
}
