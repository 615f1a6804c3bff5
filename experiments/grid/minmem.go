package grid

import (
	"outcore/engine/dataset"
	"outcore/engine/train"
)

// MinMemoryFunc returns the least memory limit a run can start with; a
// grid cell whose limit is below it cannot start (refused at creation, or
// skipped with its reason). It must be a lower bound: limits above it that
// still run out of memory are legitimate results (outcome oom), as in the
// papers' OOM cells.
type MinMemoryFunc func(cfg train.Config, meta dataset.Meta) int64

// VariantMinMemory is the default MinMemoryFunc: train.MinMemoryFor, the
// one floor the form's matrix, the submit, the API, the runner and the
// training process all use (cfg carries the data directory, so the first
// mini-batch is probed where the dataset exists).
func VariantMinMemory(cfg train.Config, meta dataset.Meta) int64 {
	return train.MinMemoryFor(cfg, meta)
}
