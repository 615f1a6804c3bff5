package gnndrive

import (
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

func init() {
	train.RegisterVariant(train.Variant{
		Name:    Name,
		Paper:   "GNNDrive: Reducing Memory Contention and I/O Congestion for Disk-based GNN Training (ICPP'24)",
		Summary: "asynchronous io_uring extractors into a shared feature buffer, out-of-order training",
		Options: []train.Option{
			{Key: "samplers", Type: train.OptInt, Default: "4", Help: "sampling workers (§4.1 ①–②)"},
			{Key: "extractors", Type: train.OptInt, Default: "4", Help: "extractors N_e, each with its own io_uring ring (reduced when the budget cannot hold N_e × M_b slots)"},
			{Key: "extracting_queue", Type: train.OptInt, Default: "6", Help: "bound of the extracting queue (sampled mini-batches)"},
			{Key: "training_queue", Type: train.OptInt, Default: "4", Help: "bound of the training queue (extracted mini-batches)"},
			{Key: "profile_batches", Type: train.OptInt, Default: "8", Help: "mini-batches sampled to measure M_b and the model step"},
			{Key: "buffer_factor", Type: train.OptFloat, Default: "1", Help: "feature buffer slots = (training queue + 1) × M_b × buffer_factor, capped by the budget"},
			{Key: "batch_margin", Type: train.OptFloat, Default: "1.1", Help: "M_b = largest profiled input-node count × batch_margin"},
			{Key: "feature_buffer", Type: train.OptEnum, Values: []string{"host", "device"}, Default: "host",
				Help: "host: CPU-based GNNDrive (§4.4), the buffer in the host budget; device: the GPU-based layout of §4.2, buffer and batch input held outside the host budget"},
			{Key: "read_block", Type: train.OptBytes, Default: "512", Help: kit.ReadBlockHelp("the artifact: one request per row at the 512-byte sector, rows sharing a sector read once (§4.4)")},
			{Key: "stages", Type: train.OptEnum, Values: []string{"all", "sample"}, Default: "all", Help: kit.StagesHelp},
			{Key: "release", Type: train.OptEnum, Values: []string{"auto", "after_step", "after_input"}, Default: "auto",
				Help: "when the trainer releases a batch's nodes: after_step (the paper, §4.1 ⑧), after_input (as soon as its rows were read out of the buffer), auto (after_input when the batch input is aliased)"},
			{Key: "batch_input", Type: train.OptEnum, Values: []string{"auto", "gather", "alias"}, Default: "auto",
				Help: "gather: the trainer copies x = buffer[aliases] as the artifact does; alias: the first layer reads the rows through the alias list (no copy); auto: alias only when the budget cannot hold the copy next to the paper's pipeline"},
		},
		MinMemory: minMemory,
		New:       func(cfg train.Config) (train.System, error) { return newGNNDrive(cfg) },
		Order:     40,
		// one sampler and one extractor deliver the batches in order
		InOrder: map[string]string{"samplers": "1", "extractors": "1"},
	})
}
