package gnndrive

import (
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

func init() {
	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 40, InOrder: inOrder}, newGNNDrive, (*options).bind, size)
}

// one sampler and one extractor deliver the batches in order
var inOrder = map[string]string{"samplers": "1", "extractors": "1"}

// options are GNNDrive's settings, with the paper's defaults.
type options struct {
	samplers, extractors, extractQ, trainQ, profile int
	bufferFactor, margin                            float64
	bufferAt, batchInput, release                   string
	readBlock                                       int64
	merge, sampleOnly                               bool
}

func (o *options) bind(b *kit.Binder) {
	b.Workers(&o.samplers, "samplers", 4, "sampling workers (§4.1 ①–②)")
	b.Workers(&o.extractors, "extractors", 4, "extractors N_e, each with its own io_uring ring (reduced when the budget cannot hold N_e × M_b slots)")
	b.Workers(&o.extractQ, "extracting_queue", 6, "bound of the extracting queue (sampled mini-batches)")
	b.Workers(&o.trainQ, "training_queue", 4, "bound of the training queue (extracted mini-batches)")
	b.ProfileBatches(&o.profile, "to measure M_b and the model step")
	b.Float(&o.bufferFactor, "buffer_factor", 1, "feature buffer slots = (training queue + 1) × M_b × buffer_factor, capped by the budget", kit.Above(0), kit.Below(1<<20))
	b.Float(&o.margin, "batch_margin", 1.1, "M_b = largest profiled input-node count × batch_margin", kit.Range(1, 1<<10))
	b.Enum(&o.bufferAt, "feature_buffer", "host", []string{"host", "device"},
		"host: CPU-based GNNDrive (§4.4), the buffer in the host budget; device: the GPU-based layout of §4.2, buffer and batch input held outside the host budget")
	b.ReadBlock(&o.readBlock, artifactReadBlock, "the artifact: one request per row at the 512-byte sector, rows sharing a sector read once (§4.4)")
	b.Bool(&o.merge, "merge", false, "false (the artifact): one request per row, covering its sectors; a sector that rows share is read once (the next row's request extends the previous one's there); true: adjacent rows' sector reads merged into requests of up to 64 KiB (a recorded deviation)")
	b.Stages(&o.sampleOnly)
	b.Enum(&o.release, "release", "auto", []string{"auto", "after_step", "after_input"},
		"when the trainer releases a batch's nodes: after_step (the paper, §4.1 ⑧), after_input (as soon as its rows were read out of the buffer), auto (after_input when the batch input is aliased)")
	b.Enum(&o.batchInput, "batch_input", "auto", []string{"auto", "gather", "alias"},
		"gather: the trainer copies x = buffer[aliases] as the artifact does; alias: the first layer reads the rows through the alias list (no copy); auto: alias only when the budget cannot hold the copy next to the paper's pipeline")
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

var newGNNDrive = kit.New(parseOptions, func(_ train.Config, opt options) *gnnDrive {
	first := "CPU-based GNNDrive (§4.4): the feature buffer is in host memory and training runs on the CPU; the paper's headline numbers are GPU-based"
	if opt.bufferAt == "device" {
		first = "GPU-based GNNDrive's memory layout (§4.2) emulated on the CPU: the feature buffer and the indexed batch input are accounted as device memory outside the host budget, but live in host memory and training runs on the CPU (no host-to-device transfer is timed)"
	}
	return &gnnDrive{opt: opt, Base: kit.NewBase(Name, kit.OnCPU("sample", "extract", "train"), append(kit.SampleOnlyDeviations(opt.sampleOnly),
		first,
		"samplers, extractors, trainer and releaser are goroutines of one process (the paper uses Python threads)",
		"M_b is the largest input-node count of profiled mini-batches times batch_margin, not batch × Π fanouts (which exceeds the whole graph at this scale); admission control in the feature buffer keeps a larger batch deadlock-free",
	)...)}
})
