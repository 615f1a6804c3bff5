package gids

import "outcore/engine/train"

func init() {
	train.RegisterVariant(train.Variant{
		Name:    Name,
		Paper:   "Accelerating Sampling and Aggregation Operations in GNN Frameworks with GPU Initiated Direct Storage Accesses (GIDS, PVLDB'24)",
		Summary: "storage access accumulator, constant CPU buffer by reverse PageRank, software cache with window buffering (GPU parts stood in for on the CPU)",
		Options: []train.Option{
			{Key: "window", Type: train.OptInt, Default: "8", Help: "window buffering depth: iterations sampled ahead whose cache lines are unevictable (§3.4); 0 turns it off"},
			{Key: "accumulator", Type: train.OptBool, Default: "true", Help: "merge iterations until N_access accesses of Eq. 2 are in flight (§3.2)"},
			{Key: "peak_percent", Type: train.OptFloat, Default: "0.95", Help: "fraction p of the peak IOPS the accumulator aims at (artifact peak_percent)"},
			{Key: "max_merge", Type: train.OptInt, Default: "8", Help: "most iterations one pass merges (batch buffers held in device memory)"},
			{Key: "cpu_buffer", Type: train.OptBytes, Default: "10%", Help: "constant CPU buffer (§3.3), bytes or % of the feature table; cut by the host budget"},
			{Key: "cpu_buffer_select", Type: train.OptEnum, Values: []string{"pagerank", "first"}, Default: "pagerank", Help: "nodes pinned in the CPU buffer: highest weighted reverse PageRank, or the first node ids (no ranking, Fig. 10's baseline)"},
			{Key: "pagerank_iters", Type: train.OptInt, Default: "20", Help: "power iterations of the reverse PageRank (artifact K)"},
			{Key: "gpu_cache", Type: train.OptBytes, Default: "10%", Help: "software cache in device memory, bytes or % of the feature table (0: none)"},
			{Key: "line", Type: train.OptInt, Default: "0", Help: "cache line and read size in bytes, a multiple of 512; 0: one feature row rounded up to 512 (the artifact's page size)"},
			{Key: "rings", Type: train.OptInt, Default: "4", Help: "I/O goroutines, each with its own io_uring ring (stand-in for the GPU threads issuing BaM reads)"},
			{Key: "iops", Type: train.OptFloat, Default: "0", Help: "IOP_peak per SSD for Eq. 2; 0 measures it at start"},
			{Key: "latency_us", Type: train.OptFloat, Default: "0", Help: "initial latency T_i in µs for Eq. 2; 0 measures it at start"},
			{Key: "ssds", Type: train.OptInt, Default: "1", Help: "N_ssd of Eq. 2"},
			{Key: "samplers", Type: train.OptInt, Default: "2", Help: "sampling goroutines feeding the window buffer (stand-in for GPU sampling)"},
			{Key: "batch_margin", Type: train.OptFloat, Default: "1.25", Help: "batch buffers hold the largest profiled input-node count × batch_margin rows; a larger batch uses a heap buffer"},
			{Key: "profile_batches", Type: train.OptInt, Default: "8", Help: "mini-batches sampled to size the batch buffers and the model step"},
		},
		MinMemory: MinMemory,
		New:       func(cfg train.Config) (train.System, error) { return newGIDS(cfg) },
		Order:     60,
		// the DGL dataloader's order: every batch as the reference trains it
		InOrder: map[string]string{},
	})
}
