package helios

// §3.2: the pre-sampling epoch that ranks the nodes by accesses for the
// static cache (static_cache.go).

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"outcore/engine/graph"
	"outcore/engine/sample"
	"outcore/engine/train"
)

// presampleSalt separates the pre-sampling epoch's random choices from the
// training epochs'.
const presampleSalt = 0x4e6c1f

// presample samples one epoch (with its own seed) and counts every node's
// accesses.
func (h *helios) presample(ctx context.Context, env *train.Env, topo sample.Topology) ([]uint32, error) {
	seed := env.Config.Seed ^ presampleSalt
	proto, err := sample.New(topo, env.Config.Fanout, seed)
	if err != nil {
		return nil, err
	}
	batches := sample.EpochBatches(env.Train, env.Config.Batch, seed, 0)
	counts := make([]uint32, env.Dataset.Nodes())
	var mu sync.Mutex
	var next atomic.Int64
	workers := min(h.opt.preparers, len(batches))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		s := proto
		if w > 0 {
			s = proto.Clone()
		}
		wg.Add(1)
		go func(w int, s *sample.Sampler) {
			defer wg.Done()
			var mb graph.MiniBatch
			for {
				i := int(next.Add(1) - 1)
				if i >= len(batches) || ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				if err := s.SampleInto(&mb, 0, i, batches[i]); err != nil {
					errs[w] = err
					return
				}
				mu.Lock()
				CountAccesses(counts, mb.InputNodes)
				mu.Unlock()
			}
		}(w, s)
	}
	wg.Wait()
	return counts, errors.Join(errs...)
}
