package pygplus

import (
	"fmt"
	"runtime"

	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

func init() {
	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 10, InOrder: kit.InOrderAlways(), NestedStages: nestedStages}, newPyGPlus, (*options).bind, size)
}

// The trainer's wait for a batch (stall) includes the synchronous
// gather from the mapping (extract), pyg_plus.go.
var nestedStages = map[string]string{"extract_s": "stall_s"}

// options are PyG+'s settings.
type options struct {
	workers, prefetch, ioThreads int
	pcStats                      bool
	overlap                      bool // the gather thread (gather_thread.go)
	sampleOnly                   bool // stages=sample (kit/sample_only.go)
}

func (o *options) bind(b *kit.Binder) {
	b.Workers(&o.workers, "samplers", runtime.NumCPU(), "sampling workers feeding the shared queue (DataLoader workers)", kit.Shown("number of CPUs"))
	b.Workers(&o.prefetch, "prefetch", 2, "batches dispatched ahead per sampling worker (DataLoader prefetch_factor)")
	b.Workers(&o.ioThreads, "io_threads", 4*runtime.NumCPU(), "threads gathering rows from the feature mapping (page faults in flight)", kit.Shown("4 × number of CPUs"))
	b.Bool(&o.overlap, "overlap", true, "gather batch i+1 in a thread while batch i trains, as the artifact's baseline does (Ginex §5.1); false gathers on the trainer's critical path")
	b.Stages(&o.sampleOnly)
	b.Bool(&o.pcStats, "pagecache_stats", true, "account each gather's rows by tier: mincore before the gather, then the rows not resident are copied one by one between readings of the thread's device reads (cpu and device tiers, rows_from_device); off: feature bytes only")
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

var newPyGPlus = kit.New(parseOptions, func(_ train.Config, opt options) *pygPlus {
	return &pygPlus{opt: opt, Base: kit.NewBase(Name, kit.OnCPU("sample", "extract", "train"), append(kit.SampleOnlyDeviations(opt.sampleOnly),
		overlapDeviation(opt.overlap),
		fmt.Sprintf("sampling workers are goroutines sharing one process (%d), not DataLoader sub-processes", opt.workers),
		"gather copies rows with cgo threads from the mapping (one page fault per missing 4 KiB page), as numpy memmap indexing does",
	)...)}
})
