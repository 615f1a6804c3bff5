package alipg

import (
	"fmt"
	"runtime"
	"strconv"

	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

// Name is the registered name of the Ali+PG variant, the paper's label
// lowercased; paper and summary are its lines in the registry.
const (
	Name    = "ali+pg"
	paper   = "Ali+PG, the baseline of Ginex (VLDB'22) §5.1: PyG+ with an AliGraph-style neighbour cache and a PaGraph-style feature cache"
	summary = "PyG+'s memory-mapped pipeline behind a static neighbour cache and a static feature cache of the highest out-degree nodes"
)

func init() {
	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 12, InOrder: kit.InOrderAlways()}, newAliPG, (*options).bind, size)
}

// splits are the paper's five neighbour-cache shares of the available
// memory (Ginex §5.1: "0:100, 25:75, 50:50, 75:25, and 100:0").
var splits = []string{"0", "25", "50", "75", "100"}

// options are Ali+PG's settings.
type options struct {
	workers, prefetch, ioThreads int
	ncShare                      string // percent of the available memory for the neighbour cache, one of splits
	profile                      int
	sampleOnly                   bool
}

func (o *options) bind(b *kit.Binder) {
	b.Workers(&o.workers, "samplers", runtime.NumCPU(), "sampling workers feeding the shared queue (PyG+'s DataLoader workers)", kit.Shown("number of CPUs"))
	b.Workers(&o.prefetch, "prefetch", 2, "batches dispatched ahead per sampling worker (DataLoader prefetch_factor)")
	b.Workers(&o.ioThreads, "io_threads", 4*runtime.NumCPU(), "threads gathering the cache's misses from the feature mapping (page faults in flight)", kit.Shown("4 × number of CPUs"))
	b.Enum(&o.ncShare, "nc_share", "25", splits, "percent of the available memory given to the neighbour cache, the rest to the feature cache: one of Ginex §5.1's splits (the paper reports the best of the five)")
	b.ProfileBatches(&o.profile, "to size the caches")
	b.Stages(&o.sampleOnly)
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

// ncPercent is nc_share as a number (the Enum admits only splits).
func (o options) ncPercent() int64 {
	n, _ := strconv.ParseInt(o.ncShare, 10, 64)
	return n
}

// deviations are the guesses where Ginex §5.1 is silent (doc.go).
func deviations(opt options) []string {
	return append(kit.SampleOnlyDeviations(opt.sampleOnly),
		"training runs on the CPU (the paper's Ali+PG trains on a GPU): the gather thread overlaps batch i+1's gather with batch i's training, but both compete for the same cores",
		fmt.Sprintf("nc_share=%d: one split of the available memory (%d:%d neighbour:feature cache); the paper reports the best of its five splits for each point", opt.ncPercent(), opt.ncPercent(), 100-opt.ncPercent()),
		"the neighbour cache ranks nodes by the ratio of direct out- to in-neighbours and caches direct in-neighbour lists (Ginex §3.2's adaptation); AliGraph uses k-hop counts (k ≥ 2), which the paper does not say Ali+PG kept",
		"the available memory the caches split is the budget less PyG+'s own needs, the reserve and as much again kept as page cache for the mappings; the paper does not define it",
		fmt.Sprintf("sampling workers are goroutines sharing one process (%d), not DataLoader sub-processes", opt.workers),
	)
}

func newAliPG(cfg train.Config) (*aliPG, error) {
	opt, err := parseOptions(cfg)
	if err != nil {
		return nil, err
	}
	return &aliPG{opt: opt, Base: kit.NewBase(Name, kit.OnCPU("sample", "extract", "train"), deviations(opt)...)}, nil
}
