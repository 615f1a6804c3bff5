package grid

import (
	"outcore/engine/dataset"
	"outcore/engine/vocab"
)

// MinMemoryFunc returns the least memory limit a run can start with; a
// grid cell whose limit is below it cannot start (refused at creation, or
// skipped with its reason). It must be a lower bound: limits above it that
// still run out of memory are legitimate results (outcome oom), as in the
// papers' OOM cells.
type MinMemoryFunc func(cfg vocab.Config, meta dataset.Meta) int64

// VariantMinMemory is the default MinMemoryFunc: vocab.MinMemoryFor, the
// one floor the form's matrix, the submit, the API, the runner and the
// training process all use (cfg carries the data directory, so the first
// mini-batch is probed where the dataset exists).
func VariantMinMemory(cfg vocab.Config, meta dataset.Meta) int64 {
	return vocab.MinMemoryFor(cfg, meta)
}
