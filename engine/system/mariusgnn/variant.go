package mariusgnn

import (
	"fmt"
	"runtime"

	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

func init() {
	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 30, OwnSampling: true, WallStages: wallStages}, newSystem, (*options).bind, size)
}

// Loading a buffer state (the epoch's first: prep, later: swap)
// reads partitions from disk (DESIGN §5).
var wallStages = map[string]string{"prep_s": "extract_s", "swap_s": "extract_s"}

// options are MariusGNN's settings (bufferCapacity 0: from the budget).
type options struct {
	ordering                                      string
	partitions, bufferCapacity, samplers, profile int
	prefetch, keepFiles                           bool
}

func (o *options) bind(b *kit.Binder) {
	b.Enum(&o.ordering, "ordering", OrderingSequential, []string{OrderingSequential, OrderingDispersed},
		"node-partition ordering: sequential = training partitions plus random others, one buffer state per epoch; dispersed = swap one partition per state")
	b.Int(&o.partitions, "partitions", DefaultPartitions, "p, the number of node partitions (p² edge buckets)", kit.Range(1, 1<<16))
	b.Int(&o.bufferCapacity, "buffer_capacity", 0, "c, partitions resident at once; 0 = the largest c the memory budget holds (p without a budget)", kit.Range(0, 1<<16))
	b.Bool(&o.prefetch, "prefetch", true, "dispersed: read the next state's partition into a spare slot while the current state trains")
	b.Workers(&o.samplers, "samplers", runtime.NumCPU(), "DENSE sampling workers working ahead of the trainer", kit.Shown("number of CPUs"))
	b.ProfileBatches(&o.profile, "to measure batch sizes and the model step")
	b.Bool(&o.keepFiles, "keep_partitions", false, "keep the partitioned features and edge buckets after the run")
	b.Check(func() error {
		if o.bufferCapacity > o.partitions {
			return fmt.Errorf("mariusgnn: buffer_capacity %d above partitions %d", o.bufferCapacity, o.partitions)
		}
		return nil
	})
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

var newSystem = kit.New(parseOptions, func(_ train.Config, opt options) *system {
	return &system{opt: opt, Base: kit.NewBase(Name, kit.OnCPU("prep", "sample", "extract", "train"),
		"training runs on the CPU (MariusGNN trains on a GPU); the samplers work ahead of the trainer on goroutines instead of the artifact's batch-loader threads and staleness-bounded pipeline",
		"neighbours are sampled along incoming edges only (the artifact's papers100M configurations sample incoming and outgoing neighbours), the receptive field every outcore variant uses",
		"nodes are assigned to partitions at random as the artifact's preprocessor does, but keep their original relative order inside a partition (the partitions, which decide what the buffer holds, are the same kind of random draw)",
		"validation and test accuracy come from the runner's shared evaluator on the full graph (the artifact's full_graph_evaluation), with outcore's standard sampler rather than DENSE",
	)}
})
