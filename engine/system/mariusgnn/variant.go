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
		MinMemory:   MinMemory,
		New:         func(cfg train.Config) (train.System, error) { return newSystem(cfg) },
		Order:       30,
		OwnSampling: true,
	})
}

// MinMemory is the least budget a run of shape can start with: the
// runtime's indptr, labels and partition maps (12 + 8 bytes per node) and
// the feature rows of the partitions the ordering keeps resident (the
// training partitions for SEQUENTIAL, one for DISPERSED). Reserve, batches
// and edges are measured at prepare time; a budget above this that cannot
// hold them is refused there, naming what it needs.
func MinMemory(shape train.DatasetShape, cfg train.Config) int64 {
	o := train.Opts(cfg.Options)
	p, err := o.Int("partitions", DefaultPartitions)
	if err != nil || p < 1 || shape.Nodes < 1 {
		return 0
	}
	p = int(min(int64(p), shape.Nodes))
	ps := (shape.Nodes + int64(p) - 1) / int64(p)
	minC := 1
	if o.String("ordering", OrderingSequential) == OrderingSequential {
		minC = int((shape.Train + ps - 1) / ps)
	}
	return MinBudget(8*(shape.Nodes+1)+4*shape.Nodes+8*shape.Nodes, shape.RowBytes(), ps, minC)
}
