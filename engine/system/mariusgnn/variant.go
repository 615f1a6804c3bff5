package mariusgnn

import (
	"strconv"

	"outcore/engine/train"
)

func init() {
	train.RegisterVariant(train.Variant{
		Name:    Name,
		Paper:   "MariusGNN: Resource-Efficient Out-of-Core Training of Graph Neural Networks (EuroSys'23), as measured by GNNDrive (ICPP'24) §3, §5.4 and DiskGNN (arXiv 2405.05231) §7",
		Summary: "node partitions and edge buckets on disk, a buffer of c partitions, per-epoch ordering and preload, DENSE sampling of in-buffer edges only (biased)",
		Options: []train.Option{
			{Key: "ordering", Type: train.OptEnum, Values: []string{OrderingSequential, OrderingDispersed}, Default: OrderingSequential,
				Help: "node-partition ordering: sequential = training partitions plus random others, one buffer state per epoch; dispersed = swap one partition per state"},
			{Key: "partitions", Type: train.OptInt, Default: strconv.Itoa(DefaultPartitions), Help: "p, the number of node partitions (p² edge buckets)"},
			{Key: "buffer_capacity", Type: train.OptInt, Default: "0", Help: "c, partitions resident at once; 0 = the largest c the memory budget holds (p without a budget)"},
			{Key: "prefetch", Type: train.OptBool, Default: "true", Help: "dispersed: read the next state's partition into a spare slot while the current state trains"},
			{Key: "samplers", Type: train.OptInt, Default: "number of CPUs", Help: "DENSE sampling workers working ahead of the trainer"},
			{Key: "profile_batches", Type: train.OptInt, Default: "8", Help: "mini-batches sampled to measure batch sizes and the model step"},
			{Key: "keep_partitions", Type: train.OptBool, Default: "false", Help: "keep the partitioned features and edge buckets after the run"},
		},
		MinMemory:   minMemory,
		New:         func(cfg train.Config) (train.System, error) { return newSystem(cfg) },
		Order:       30,
		OwnSampling: true,
		// Loading a buffer state (the epoch's first: prep, later: swap)
		// reads partitions from disk (DESIGN §5).
		WallStages: map[string]string{"prep_s": "extract_s", "swap_s": "extract_s"},
	})
}
