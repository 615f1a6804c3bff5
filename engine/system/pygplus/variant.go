package pygplus

import "outcore/engine/train"

func init() {
	train.RegisterVariant(train.Variant{
		Name:    Name,
		Paper:   "PyG+, the baseline of Ginex (VLDB'22) §5.1 and GNNDrive (ICPP'24) §5",
		Summary: "memory-mapped topology and features, page-cache faults on the critical path",
		Options: []train.Option{
			{Key: "samplers", Type: train.OptInt, Default: "number of CPUs", Help: "sampling workers feeding the shared queue (DataLoader workers)"},
			{Key: "prefetch", Type: train.OptInt, Default: "2", Help: "batches dispatched ahead per sampling worker (DataLoader prefetch_factor)"},
			{Key: "io_threads", Type: train.OptInt, Default: "4 × number of CPUs", Help: "threads gathering rows from the feature mapping (page faults in flight)"},
			{Key: "pagecache_stats", Type: train.OptBool, Default: "true", Help: "count page-cache hits of each gather with mincore (the cpu tier)"},
		},
		MinMemory: minMemory,
		New:       func(cfg train.Config) (train.System, error) { return newPyGPlus(cfg) },
		Order:     10,
		InOrder:   map[string]string{},
	})
}
