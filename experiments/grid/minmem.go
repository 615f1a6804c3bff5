package grid

import (
	"outcore/engine/dataset"
	"outcore/engine/testbed"
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

// FloorConfig is cfg as its run sizes itself: under a paper's testbed
// (DESIGN §13), with the mapping applied as the run applies it
// (vocab.MapTestbed, vocab.ApplyTestbed) before its floor is checked, so
// that the floor before the run sees the mapped compute, device budget
// and I/O depth. The grid has no storage profile: the mapping's
// storage-derived settings (the I/O depth) are those of an unmeasured
// host, which the run replaces with the measured ones. A config under
// this host, or whose mapping fails (refused by the run itself), is
// returned as it is.
func FloorConfig(cfg vocab.Config, meta dataset.Meta) vocab.Config {
	fc, _ := floorAndHost(cfg, meta)
	return fc
}

// floorAndHost is FloorConfig with, from the same mapping, the host
// memory a run under a paper's testbed takes when it gives no limit of
// its own (the mapping's, as outcore train --testbed sets it; 0 under
// this host, when the mapping fails or gives none): the plan maps each
// cell once.
func floorAndHost(cfg vocab.Config, meta dataset.Meta) (vocab.Config, int64) {
	if !cfg.PaperTestbed() {
		return cfg, 0
	}
	s, err := vocab.MapTestbed(cfg, meta, testbed.Storage{})
	if err != nil {
		return cfg, 0
	}
	host, _, _ := s.For(cfg.System)
	vocab.ApplyTestbed(&cfg, s)
	_ = cfg.ResolveDeviceMem(meta.FeatureBytes()) // as the run does; an unparsable device_mem is the config's own problem
	return cfg, host
}
