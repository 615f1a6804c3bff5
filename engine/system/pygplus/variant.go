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
	ioDepth                      int // io_depth: the testbed's I/O emulation (gatherThreads)
	pcStats                      bool
	overlap                      bool // the gather thread (gather_thread.go)
	sampleOnly                   bool // stages=sample (kit/sample_only.go)
}

func (o *options) bind(b *kit.Binder) {
	b.Workers(&o.workers, "samplers", runtime.NumCPU(), "sampling workers feeding the shared queue (DataLoader workers)", kit.Shown("number of CPUs"))
	b.Workers(&o.prefetch, "prefetch", 2, "batches dispatched ahead per sampling worker (DataLoader prefetch_factor)")
	b.Workers(&o.ioThreads, "io_threads", 4*runtime.NumCPU(), "threads gathering rows from the feature mapping (page faults in flight)", kit.Shown("4 × number of CPUs"))
	b.Int(&o.ioDepth, "io_depth", 0, "0: io_threads gather threads; N: N gather threads, each with one page fault in flight: a paper host's thread count as the gather's I/O depth (DESIGN §13)", kit.Range(0, 4096))
	b.Bool(&o.overlap, "overlap", true, "gather batch i+1 in a thread while batch i trains, as the artifact's baseline does (Ginex §5.1); false gathers on the trainer's critical path")
	b.Stages(&o.sampleOnly)
	b.Bool(&o.pcStats, "pagecache_stats", true, "account each gather's rows by tier: mincore before the gather, then the rows not resident are copied one by one between readings of the thread's device reads (cpu and device tiers, rows_from_device); off: feature bytes only")
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

var newPyGPlus = kit.New(parseOptions, func(_ train.Config, opt options) *pygPlus {
	return &pygPlus{opt: opt, Base: kit.NewBase(Name, kit.OnCPU("sample", "extract", "train"), append(append(kit.SampleOnlyDeviations(opt.sampleOnly),
		overlapDeviation(opt.overlap),
		fmt.Sprintf("sampling workers are goroutines sharing one process (%d), not DataLoader sub-processes", opt.workers),
		"gather copies rows with cgo threads from the mapping (one page fault per missing 4 KiB page), as numpy memmap indexing does",
	), opt.ioDepthDeviations()...)...)}
})

// gatherThreads is the number of threads a gather copies with: io_depth
// when set, else io_threads.
func (o options) gatherThreads() int {
	if o.ioDepth > 0 {
		return o.ioDepth
	}
	return o.ioThreads
}

// ioDepthDeviations says how io_depth emulates a host's I/O threads.
// PyG+ is the page cache of a memory map: its reads are page faults of
// the gather threads, one in flight per thread, and the pages stay cached.
// Issuing them as io_uring reads would need O_DIRECT (no page cache: not
// PyG+) or buffered ring reads outside engine/storage; a thread blocked in
// a fault needs no core, so this host runs the paper's thread count as
// threads, and the I/O depth is the paper's.
func (o options) ioDepthDeviations() []string {
	if o.ioDepth == 0 {
		return nil
	}
	return []string{fmt.Sprintf("io_depth=%d: the gather copies from the mapping with %d threads, one page fault in flight each (the paper host's thread count as I/O depth); not through io_uring, which would bypass the page cache that is PyG+'s only cache", o.ioDepth, o.ioDepth)}
}
