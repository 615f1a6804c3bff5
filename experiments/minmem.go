package experiments

import (
	"outcore/engine/dataset"
	"outcore/engine/train"
)

// MinMemoryFunc returns the least memory limit a run can start with; a
// grid whose limit is below it is rejected at creation. It must be a lower
// bound: limits above it that still run out of memory are legitimate
// results (outcome oom), as in the papers' OOM cells.
type MinMemoryFunc func(cfg train.Config, meta dataset.Meta) int64

// RuntimeFloor is a lower bound of the memory an `outcore train` process
// needs before it loads any data: the Go runtime, the pages of the binary
// it touches, and the first heap arenas. Measured on the tiny dataset
// (docs/benchmarks/store.md): every variant is OOM-killed at 12 MiB, and
// pyg+ completes at 16 MiB.
const RuntimeFloor = 12 << 20

// ConservativeMinMemory is the runner's own lower bound for any variant:
// the runtime floor plus what every variant keeps in memory for the whole
// run — the CSC indptr array
// (8 bytes per node + 8, kept in memory by all the papers' systems) and
// the labels (4 bytes per node). Variant caches are not counted: they are
// sized from the limit, so they cannot make a limit impossible.
func ConservativeMinMemory(cfg train.Config, meta dataset.Meta) int64 {
	return RuntimeFloor + 8*(meta.Nodes+1) + 4*meta.Nodes
}

// VariantMinMemory is the default MinMemoryFunc: the larger of
// ConservativeMinMemory and the variant's own floor (train.Variant's
// MinMemory, from the same sizing the variant runs with) on the dataset's
// shape.
//
// When the dataset exists in cfg's data directory, its shape includes the
// first mini-batch's sampled input nodes (train.ProbeShape), a lower bound
// of the largest batch that makes the floors of variants that hold batch
// inputs realistic.
func VariantMinMemory(cfg train.Config, meta dataset.Meta) int64 {
	need := ConservativeMinMemory(cfg, meta)
	if v, ok := train.LookupVariant(cfg.System); ok && v.MinMemory != nil {
		shape := train.ShapeOf(meta)
		if probed, err := train.ProbeShape(cfg); err == nil && probed.Nodes == meta.Nodes {
			shape.FirstBatchInputs = probed.FirstBatchInputs
		}
		need = max(need, v.MinMemory(shape, cfg))
	}
	return need
}
