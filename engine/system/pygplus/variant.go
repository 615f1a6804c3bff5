package pygplus

import (
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

func init() {
	train.RegisterVariant(train.Variant{
		Name:    Name,
		Paper:   "PyG+, the baseline of Ginex (VLDB'22) §5.1 and GNNDrive (ICPP'24) §5",
		Summary: "memory-mapped topology and features, page-cache faults on the critical path",
		Options: []train.Option{
			{Key: "samplers", Type: train.OptInt, Default: "number of CPUs", Help: "sampling workers feeding the shared queue (DataLoader workers)"},
			{Key: "prefetch", Type: train.OptInt, Default: "2", Help: "batches dispatched ahead per sampling worker (DataLoader prefetch_factor)"},
			{Key: "io_threads", Type: train.OptInt, Default: "4 × number of CPUs", Help: "threads gathering rows from the feature mapping (page faults in flight)"},
			{Key: "overlap", Type: train.OptBool, Default: "true", Help: "gather batch i+1 in a thread while batch i trains, as the artifact's baseline does (Ginex §5.1); false gathers on the trainer's critical path"},
			{Key: "stages", Type: train.OptEnum, Values: []string{"all", "sample"}, Default: "all", Help: kit.StagesHelp},
			{Key: "pagecache_stats", Type: train.OptBool, Default: "true", Help: "account each gather's rows by tier: mincore before the gather, then the rows not resident are copied one by one between readings of the thread's device reads (cpu and device tiers, rows_from_device); off: feature bytes only"},
		},
		MinMemory: minMemory,
		New:       func(cfg train.Config) (train.System, error) { return newPyGPlus(cfg) },
		Order:     10,
		InOrder:   map[string]string{},
		// The trainer's wait for a batch (stall) includes the synchronous
		// gather from the mapping (extract), pyg_plus.go.
		NestedStages: map[string]string{"extract_s": "stall_s"},
	})
}
