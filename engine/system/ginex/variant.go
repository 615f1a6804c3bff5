package ginex

import (
	"fmt"
	"runtime"

	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

func init() {
	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 20, InOrder: kit.InOrderAlways(), NestedStages: nestedStages, WallStages: wallStages}, newGinex, (*options).bind, size)
}

// The inspector (inspect) samples the superbatch, loads the
// neighbour cache and precomputes changesets (ginex.go, §3.1).
var nestedStages = map[string]string{"sample_s": "inspect_s", "changeset_s": "inspect_s", "neighbor_cache_load_s": "inspect_s"}

// The superbatch's sampling pass and reading its stored samples
// back are sampling; the switch and the cache updates load features.
var wallStages = map[string]string{"inspect_s": "sample_s", "runfile_io_s": "sample_s", "switch_s": "extract_s", "cache_update_s": "extract_s"}

// options are Ginex's settings, with the artifact's defaults (ncBytes
// and fcBytes -1 and xBuffers 0: from the budget; policy is policy.go's).
type options struct {
	superbatch, samplers, ioThreads, profile, xBuffers int
	ioDepth                                            int // io_depth: the testbed's I/O emulation (ginex.go)
	runfileBudget, ncBytes, fcBytes, readBlock         int64
	keepRunFiles                                       bool
	policy                                             string
}

func (o *options) bind(b *kit.Binder) {
	b.Int(&o.superbatch, "superbatch", 1000, "iterations per superbatch (capped at an epoch and by runfile_budget)", kit.Range(1, 1<<20))
	b.Workers(&o.samplers, "samplers", 2*runtime.NumCPU(), "sampling workers of the superbatch sample stage", kit.Shown("2 × number of CPUs"))
	b.Workers(&o.ioThreads, "io_threads", 8*runtime.NumCPU(), "threads issuing O_DIRECT preads for topology and features", kit.Shown("8 × number of CPUs"))
	b.Int(&o.ioDepth, "io_depth", 0, "0: features read by io_threads preads; N: the feature gathers go through one io_uring reader with N reads in flight and the index reads through N pread threads (a paper host's thread count emulated, DESIGN §13)", kit.Range(0, 4096))
	b.ProfileBatches(&o.profile, "by the offline profiling (§3.5)")
	b.Int(&o.xBuffers, "x_buffers", 0, "batch inputs of the main loop: 2 gathers the next iteration while one trains, 1 alternates, 0 picks 2 when the budget holds it", kit.Range(0, 2))
	b.Bytes(&o.runfileBudget, "runfile_budget", 100<<30, "disk space for runtime files; caps the superbatch", kit.Shown("100GiB"), kit.AtLeast(0))
	b.Bytes(&o.ncBytes, "neighbor_cache", -1, "neighbour cache size (default: budget − sample-stage peak)", kit.Shown("from the budget"))
	b.Bytes(&o.fcBytes, "feature_cache", -1, "feature cache size (default: budget − main-loop peak)", kit.Shown("from the budget"))
	b.ReadBlock(&o.readBlock, artifactReadBlock, "the artifact: one pread of the aligned 4 KiB block per missing row, 8 KiB when it straddles two")
	b.Bool(&o.keepRunFiles, "keep_runfiles", false, "keep the runtime files of each superbatch after it trained")
	b.Enum(&o.policy, "policy", policyBelady, []string{policyBelady, policyStatic}, "feature-cache policy: belady (the changesets of §3.3) or static (PaGraph: the highest out-degree nodes, never updated; Fig. 15's baseline)")
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

var newGinex = kit.New(parseOptions, func(_ train.Config, opt options) *ginex {
	return &ginex{opt: opt, Base: kit.NewBase(Name, kit.OnCPU("sample", "changeset", "extract", "train"), append([]string{
		"training runs on the CPU (the paper trains on a GPU); the gather of the next iteration overlaps the current iteration's CPU training",
		"the changeset precomputation runs on the CPU with a heap over the cache state (O(|ids| log C) per iteration) instead of the paper's GPU top-k over all candidates; the cache states are the same Belady states",
		"nodes that are not accessed again in the superbatch are not inserted into the feature cache (they would be evicted unused; misses are unchanged)",
		"uncached neighbour lists: the read_block blocks holding the sampled entries are read, each once per sampling call; the artifact reads each uncached list whole from its aligned start, at least 8 KiB (load_neighbors_into_buffer)",
	}, append(opt.policyDeviations(), opt.ioDepthDeviations()...)...)...)}
})

// ioDepthDeviations says how io_depth emulates the artifact's threads.
func (o options) ioDepthDeviations() []string {
	if o.ioDepth == 0 {
		return nil
	}
	return []string{fmt.Sprintf("io_depth=%d: the artifact's one blocking pread per I/O thread is emulated: feature gathers are issued through one io_uring reader (O_DIRECT, the same %d-byte blocks per row) with at most %d reads in flight, the I/O concurrency of %d threads; index reads use %d pread threads", o.ioDepth, o.readBlock, o.ioDepth, o.ioDepth, o.ioDepth)}
}
