package helios

// §3.2: the pre-sampling epoch that ranks the nodes by accesses for the
// static cache (static_cache.go), and the read of a tier's rows into
// memory.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"outcore/engine/graph"
	"outcore/engine/sample"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
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

// loadTier reads the rows of nodes (in tier order) into memory from mem.
func (h *helios) loadTier(ctx context.Context, mem *kit.OffHeap, nodes []int64) ([]float32, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	rows, err := mem.Float32s(len(nodes) * h.dim)
	if err != nil {
		return nil, fmt.Errorf("helios: cache tier: %w", err)
	}
	// read in file order, place in tier order
	order := make([]int32, len(nodes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch {
		case nodes[a] < nodes[b]:
			return -1
		case nodes[a] > nodes[b]:
			return 1
		}
		return 0
	})
	r, err := h.feats.NewReader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	const chunk = 4096
	ids := make([]int64, 0, chunk)
	buf := make([]float32, chunk*h.dim)
	for lo := 0; lo < len(order); lo += chunk {
		hi := min(lo+chunk, len(order))
		ids = ids[:0]
		for _, i := range order[lo:hi] {
			ids = append(ids, nodes[i])
		}
		if err := r.ReadRows(ctx, ids, osutil.Bytes(buf[:len(ids)*h.dim])); err != nil {
			return nil, fmt.Errorf("helios: fill the cache: %w", err)
		}
		for k, i := range order[lo:hi] {
			copy(rows[int(i)*h.dim:(int(i)+1)*h.dim], buf[k*h.dim:(k+1)*h.dim])
		}
	}
	return rows, nil
}
