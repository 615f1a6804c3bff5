package helios

import (
	"fmt"

	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

func init() {
	// batches train in the reference order
	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 70, InOrder: kit.InOrderAlways()}, newHelios, (*options).bind, Plan)
}

// options are the variant's options, parsed (gpuCache is gpuCacheAuto or
// a size, cpuCache a size or "" for the rest of the budget, kit.SizeBytes;
// device is the run's device budget for gpuCacheAuto, set again by
// Prepare; ringDepth is Config.QueueDepth or the storage default).
type options struct {
	preparers, depth, rings, profile, ringDepth int
	gpuCache, cpuCache                          string
	device                                      int64
	margin                                      float64
	pipeline                                    bool
}

func (o *options) bind(b *kit.Binder) {
	b.Bool(&o.pipeline, "pipeline", true, "deep pipeline across and within mini-batches (§3.3); false: Helios-NoPipe, every operator in turn")
	b.Workers(&o.preparers, "preparers", 2, "goroutines sampling batches hop by hop and submitting their reads")
	b.Workers(&o.depth, "depth", 3, "batches in flight (prepared or preparing, not yet trained); each holds a batch buffer in device memory")
	b.Workers(&o.rings, "rings", 4, "io_uring rings of the I/O stack, each with its own completion goroutine (§3.1)")
	b.SizeOrAuto(&o.gpuCache, "gpu_cache", "GPU tier of the static cache: auto = what the device budget (device_mem) leaves after the batch buffers; bytes or % of the feature table (0: none; over the device budget is a recorded deviation)")
	b.Size(&o.cpuCache, "cpu_cache", "", "CPU tier, bytes or % of the feature table; default: the host budget left after the topology (10% without a budget)", kit.Shown("the rest of the budget"))
	b.Float(&o.margin, "batch_margin", 1.25, "batch buffers hold the largest profiled input-node count × batch_margin rows; a larger batch spills to a heap buffer", kit.Above(0), kit.Below(1<<10))
	b.ProfileBatches(&o.profile, "to size the batch buffers and the model step")
	b.QueueDepth(&o.ringDepth)
	b.Check(func() error { o.device = b.Config().DeviceMemBytes; return nil })
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

var newHelios = kit.New(parseOptions, func(_ train.Config, o options) *helios {
	pipe := "pipeline=false: Helios-NoPipe, every operator of a batch in turn (sample, look up and submit, complete, train)"
	if o.pipeline {
		pipe = fmt.Sprintf("the deep pipeline's operators are goroutines (%d preparers, %d batches in flight) sharing the CPU cores, not GPU kernels on streams with allotted SMs under MPS", o.preparers, o.depth)
	}
	return &helios{opt: o, Base: kit.NewBase(Name, kit.OnCPU("sample", "extract", "train"),
		"no GPU: the GPU cache tier and the batch buffers in flight are GPU memory in Helios; here they are host memory held outside the host budget (the memory cgroup's limit is raised by their size), and training runs on the CPU",
		fmt.Sprintf("the GPU-initiated asynchronous I/O stack is stood in for by goroutines: the batch preparers submit one O_DIRECT read per uncached feature row (no merging, as Helios issues one NVMe command per vertex) over %d io_uring rings, and one completion goroutine per ring reaps them (the completion kernel); rings are io_uring queues, not NVMe SQ/CQ pairs", o.rings),
		"cache lookups run on the preparing goroutine (GPU warps reaching the CPU tier over UVA in Helios); sampling runs on CPU goroutines",
		"pre-sampling samples one epoch on the CPU with a seed of its own (not the training epochs' samples)",
		pipe,
	)}
})
