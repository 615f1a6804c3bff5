package gids

import (
	"fmt"

	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

func init() {
	// the DGL dataloader's order: every batch as the reference trains it
	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 60, InOrder: kit.InOrderAlways()}, newGIDS, (*options).bind, Plan)
}

// options are the variant's options, parsed (cpuBuffer and gpuCache are
// sizes, kit.SizeBytes; depth is the rings' depth, Config.QueueDepth or
// the storage default).
type options struct {
	window, rings, ssds, maxMerge, samplers, profile, pagerankIters, depth int
	peakPercent, iops, latencyUS, margin                                   float64
	cpuBuffer, cpuSelect, gpuCache                                         string
	line                                                                   int64
	accumulator                                                            bool
}

func (o *options) bind(b *kit.Binder) {
	var line int
	b.Int(&o.window, "window", 8, "window buffering depth: iterations sampled ahead whose cache lines are unevictable (§3.4); 0 turns it off", kit.Range(0, kit.MaxWorkers))
	b.Bool(&o.accumulator, "accumulator", true, "merge iterations until N_access accesses of Eq. 2 are in flight (§3.2)")
	b.Float(&o.peakPercent, "peak_percent", 0.95, "fraction p of the peak IOPS the accumulator aims at (artifact peak_percent)", kit.Above(0), kit.Below(1))
	b.Workers(&o.maxMerge, "max_merge", 8, "most iterations one pass merges (batch buffers held in device memory)")
	b.Size(&o.cpuBuffer, "cpu_buffer", "10%", "constant CPU buffer (§3.3), bytes or % of the feature table; cut by the host budget")
	b.Enum(&o.cpuSelect, "cpu_buffer_select", "pagerank", []string{"pagerank", "first"}, "nodes pinned in the CPU buffer: highest weighted reverse PageRank, or the first node ids (no ranking, Fig. 10's baseline)")
	b.Int(&o.pagerankIters, "pagerank_iters", 20, "power iterations of the reverse PageRank (artifact K)", kit.Range(1, 10000))
	b.SizeOrAuto(&o.gpuCache, "gpu_cache", "software cache in device memory: auto = what the device budget (device_mem) leaves after the batch buffers and the window; bytes or % of the feature table (0: none; over the device budget is a recorded deviation)")
	b.Int(&line, "line", 0, "cache line and read size in bytes, a multiple of 512; 0: one feature row rounded up to 512 (the artifact's page size)", kit.Range(0, 1<<20), kit.MultipleOf(512))
	b.Workers(&o.rings, "rings", 4, "I/O goroutines, each with its own io_uring ring (stand-in for the GPU threads issuing BaM reads)")
	b.Float(&o.iops, "iops", 0, "IOP_peak per SSD for Eq. 2; 0 measures it at start", kit.Range(0, 1e12))
	b.Float(&o.latencyUS, "latency_us", 0, "initial latency T_i in µs for Eq. 2; 0 measures it at start", kit.Range(0, 1e9))
	b.Int(&o.ssds, "ssds", 1, "N_ssd of Eq. 2", kit.Range(1, 1024))
	b.Workers(&o.samplers, "samplers", 2, "sampling goroutines feeding the window buffer (stand-in for GPU sampling)")
	b.Float(&o.margin, "batch_margin", 1.25, "batch buffers hold the largest profiled input-node count × batch_margin rows; a larger batch uses a heap buffer", kit.Above(0), kit.Below(1<<10))
	b.ProfileBatches(&o.profile, "to size the batch buffers and the model step")
	b.QueueDepth(&o.depth)
	b.Check(func() error { o.line = int64(line); return nil })
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

var newGIDS = kit.New(parseOptions, func(cfg train.Config, o options) *gids {
	return &gids{cfg: cfg, opt: o, Base: kit.NewBase(Name, kit.OnCPU("sample", "extract", "train"),
		"no GPU: the software cache, its metadata, the batch buffers of merged iterations and the window buffer's sampled mini-batches are GPU memory in GIDS; here they are host memory held outside the host budget (the memory cgroup's limit is raised by their size), and training runs on the CPU",
		fmt.Sprintf("BaM's GPU-initiated NVMe reads are stood in for by %d goroutines, each with its own io_uring ring (O_DIRECT), each submitting and reaping its own reads (BaM's synchronous stack); cache lookups are serialised by one lock instead of running in parallel warps", o.rings),
		"graph sampling runs on CPU goroutines ahead of the loader (GIDS samples on the GPU over UVA); batches are sampled and trained in the reference order",
		fmt.Sprintf("the accumulator merges at most %d iterations per pass (max_merge: their batch buffers are device memory); the artifact merges without a cap", o.maxMerge),
		"an access whose line finds every cache slot pinned by the window or loading is read around the cache into a scratch line (counter gpu_cache_bypass); BaM's threads would wait for a slot",
	)}
})
