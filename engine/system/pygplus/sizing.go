package pygplus

// PyG+'s memory plan. PyG+ sizes nothing from the budget (Ginex §5.1: all
// of its caching is the OS page cache, which the memory limit bounds), so
// its plan is small and pure: the batch input it reserves (virtually, off
// the Go heap) for the largest mini-batch the fanouts allow, and the least
// a budget must hold for it to run at all: what profiling saw as base, the
// model step where it is charged to the budget, one sampled mini-batch and
// its gathered input. The page cache of the mappings is what is left.

import (
	"fmt"
	"runtime"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

// options are PyG+'s settings (variant.go declares them).
type options struct {
	workers, prefetch, ioThreads int
	pcStats                      bool
	overlap                      bool // the gather thread (gather_thread.go)
	sampleOnly                   bool // stages=sample (kit/sample_only.go)
}

// parseOptions reads cfg.Options with PyG+'s defaults.
func parseOptions(cfg train.Config) (options, error) {
	o := train.Opts(cfg.Options)
	var opt options
	var err error
	if opt.workers, err = o.Int("samplers", runtime.NumCPU()); err != nil {
		return opt, err
	}
	if opt.prefetch, err = o.Int("prefetch", 2); err != nil {
		return opt, err
	}
	if opt.ioThreads, err = o.Int("io_threads", 4*runtime.NumCPU()); err != nil {
		return opt, err
	}
	if opt.pcStats, err = o.Bool("pagecache_stats", true); err != nil {
		return opt, err
	}
	if opt.overlap, err = o.Bool("overlap", true); err != nil {
		return opt, err
	}
	if opt.sampleOnly, err = kit.SampleOnly(cfg); err != nil {
		return opt, err
	}
	if opt.workers < 1 || opt.prefetch < 1 || opt.ioThreads < 1 {
		return opt, fmt.Errorf("%w: pyg+: samplers, prefetch and io_threads must be >= 1", train.ErrConfig)
	}
	return opt, nil
}

// plan is PyG+'s memory plan.
type plan struct {
	xRows int64 // rows of each reserved batch input: the most a batch can have
	// inputs is the number of batch inputs held at once: two when the
	// gather overlaps training (one trained, one gathered), else one
	inputs   int
	need     int64 // base + step charged to the budget + inputs × (a batch + its input)
	feasible bool  // need fits the budget (or there is none)
}

// size computes PyG+'s plan.
func size(budget int64, ws kit.Workspace, shape train.DatasetShape, cfg train.Config, opt options) plan {
	p := plan{xRows: min(shape.Nodes, kit.MaxInputBound(shape, cfg)), inputs: 1}
	if opt.overlap {
		p.inputs = 2
	}
	p.need = ws.BaseBytes + ws.ArenaBytes + ws.StepExtra + int64(p.inputs)*(ws.BatchBytes+int64(ws.MaxInputs)*shape.RowBytes())
	p.feasible = budget <= 0 || p.need <= budget
	return p
}

// minMemory is the smallest budget whose plan is feasible on a dataset of
// shape, with the lower-bound workspace of kit.EstimateWorkspace.
func minMemory(shape train.DatasetShape, cfg train.Config) int64 {
	opt, err := parseOptions(cfg)
	if err != nil {
		return 0 // the configuration's validation reports it
	}
	ws := kit.EstimateWorkspace(shape, cfg)
	return kit.MinBudget(func(budget int64) bool { return size(budget, ws, shape, cfg, opt).feasible })
}
