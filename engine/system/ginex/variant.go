package ginex

import (
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

func init() {
	train.RegisterVariant(train.Variant{
		Name:    Name,
		Paper:   "Ginex: SSD-enabled Billion-scale GNN Training on a Single Machine via Provably Optimal In-memory Caching (VLDB'22)",
		Summary: "superbatch inspector–executor, Belady feature cache, neighbour cache",
		Options: []train.Option{
			{Key: "superbatch", Type: train.OptInt, Default: "1000", Help: "iterations per superbatch (capped at an epoch and by runfile_budget)"},
			{Key: "samplers", Type: train.OptInt, Default: "2 × number of CPUs", Help: "sampling workers of the superbatch sample stage"},
			{Key: "io_threads", Type: train.OptInt, Default: "8 × number of CPUs", Help: "threads issuing O_DIRECT preads for topology and features"},
			{Key: "profile_batches", Type: train.OptInt, Default: "8", Help: "mini-batches sampled by the offline profiling (§3.5)"},
			{Key: "x_buffers", Type: train.OptInt, Default: "0", Help: "batch inputs of the main loop: 2 gathers the next iteration while one trains, 1 alternates, 0 picks 2 when the budget holds it"},
			{Key: "runfile_budget", Type: train.OptBytes, Default: "100GiB", Help: "disk space for runtime files; caps the superbatch"},
			{Key: "neighbor_cache", Type: train.OptBytes, Default: "from the budget", Help: "neighbour cache size (default: budget − sample-stage peak)"},
			{Key: "feature_cache", Type: train.OptBytes, Default: "from the budget", Help: "feature cache size (default: budget − main-loop peak)"},
			{Key: "read_block", Type: train.OptBytes, Default: "4096", Help: kit.ReadBlockHelp("the artifact: one pread of the aligned 4 KiB block per missing row, 8 KiB when it straddles two")},
			{Key: "keep_runfiles", Type: train.OptBool, Default: "false", Help: "keep the runtime files of each superbatch after it trained"},
		},
		MinMemory: minMemory,
		New:       func(cfg train.Config) (train.System, error) { return newGinex(cfg) },
		Order:     20,
		InOrder:   map[string]string{},
		// The inspector (inspect) samples the superbatch, loads the
		// neighbour cache and precomputes changesets (ginex.go, §3.1).
		NestedStages: map[string]string{"sample_s": "inspect_s", "changeset_s": "inspect_s", "neighbor_cache_load_s": "inspect_s"},
		// The superbatch's sampling pass and reading its stored samples
		// back are sampling; the switch and the cache updates load features.
		WallStages: map[string]string{"inspect_s": "sample_s", "runfile_io_s": "sample_s", "switch_s": "extract_s", "cache_update_s": "extract_s"},
	})
}
