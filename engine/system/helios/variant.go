package helios

import "outcore/engine/train"

func init() {
	train.RegisterVariant(train.Variant{
		Name:    Name,
		Paper:   "Helios: An Efficient Out-of-core GNN Training System on Terabyte-scale Graphs with In-memory Performance",
		Summary: "decoupled asynchronous I/O submission and completion, GPU/CPU static cache from pre-sampling, deep per-hop pipeline (GPU parts stood in for on the CPU)",
		Options: []train.Option{
			{Key: "pipeline", Type: train.OptBool, Default: "true", Help: "deep pipeline across and within mini-batches (§3.3); false: Helios-NoPipe, every operator in turn"},
			{Key: "preparers", Type: train.OptInt, Default: "2", Help: "goroutines sampling batches hop by hop and submitting their reads"},
			{Key: "depth", Type: train.OptInt, Default: "3", Help: "batches in flight (prepared or preparing, not yet trained); each holds a batch buffer in device memory"},
			{Key: "rings", Type: train.OptInt, Default: "4", Help: "io_uring rings of the I/O stack, each with its own completion goroutine (§3.1)"},
			{Key: "gpu_cache", Type: train.OptBytes, Default: "10%", Help: "GPU tier of the static cache, bytes or % of the feature table (0: none)"},
			{Key: "cpu_cache", Type: train.OptBytes, Default: "the rest of the budget", Help: "CPU tier, bytes or % of the feature table; default: the host budget left after the topology (10% without a budget)"},
			{Key: "batch_margin", Type: train.OptFloat, Default: "1.25", Help: "batch buffers hold the largest profiled input-node count × batch_margin rows; a larger batch spills to a heap buffer"},
			{Key: "profile_batches", Type: train.OptInt, Default: "8", Help: "mini-batches sampled to size the batch buffers and the model step"},
		},
		MinMemory: MinMemory,
		New:       func(cfg train.Config) (train.System, error) { return newHelios(cfg) },
		Order:     70,
		// batches train in the reference order
		InOrder: map[string]string{},
	})
}
