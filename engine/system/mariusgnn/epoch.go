package mariusgnn

// An epoch (GNNDrive §3 D2): the ordering of buffer states, the first
// state loaded on the critical path (prep_s), then every state's training
// nodes in DENSE mini-batches of the in-memory subgraph, features copied
// from the buffer, while the next state's partition is read ahead; the
// buffer is unloaded at the end.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/sample"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

// sampled is one DENSE mini-batch ready for gathering.
type sampled struct {
	mb  *graph.MiniBatch
	st  DenseStats
	err error
}

func (s *system) RunEpoch(ctx context.Context, env *train.Env, epoch int, ep *metrics.EpochStats) error {
	ep.BatchStarted()
	tPrep := time.Now()
	st0 := s.pb.Stats()
	r := rand.New(rand.NewPCG(uint64(env.Config.Seed), uint64(epoch)<<8|0x4d))
	plan, err := NewPlan(s.opt.ordering, s.trainNew, s.l.Part, s.l.TrainParts, s.l.P, s.c, r)
	if err != nil {
		return fmt.Errorf("mariusgnn: epoch %d ordering: %w", epoch, err)
	}
	var dense DenseStats
	batch := 0
	for k, state := range plan.States {
		t0 := time.Now()
		if _, err := s.pb.Load(ctx, state); err != nil {
			return fmt.Errorf("mariusgnn: epoch %d state %d: %w", epoch, k, err)
		}
		if err := s.sg.Build(s.pb); err != nil {
			return fmt.Errorf("mariusgnn: epoch %d state %d: %w", epoch, k, err)
		}
		if k == 0 {
			ep.Add("prep_s", time.Since(tPrep))
		} else {
			ep.Add("swap_s", time.Since(t0))
		}
		ep.Count("buffer_edges", s.sg.Edges)
		if s.opt.prefetch && k+1 < len(plan.States) {
			if err := s.pb.StartPrefetch(ctx, plan.States[k+1]); err != nil {
				return fmt.Errorf("mariusgnn: %w", err)
			}
		}
		seeds := plan.Train[k]
		r.Shuffle(len(seeds), func(i, j int) { seeds[i], seeds[j] = seeds[j], seeds[i] })
		for i, v := range seeds {
			local, ok := s.sg.Local(v)
			if !ok {
				return fmt.Errorf("mariusgnn: training node %d (partition %d) not resident in state %v", v, s.l.Part(v), state)
			}
			seeds[i] = local
		}
		batches := sample.Split(seeds, env.Config.Batch)
		st, err := s.trainState(ctx, env, ep, epoch, batch, batches)
		dense.Add(st)
		if err != nil {
			return err
		}
		batch += len(batches)
	}
	if err := s.pb.Release(ctx); err != nil {
		return err
	}
	// The batch input's pages go back too: evaluation runs next.
	_ = s.xMem.Drop()
	st := s.pb.Stats()
	ep.Count("buffer_states", int64(len(plan.States)))
	ep.Count("partition_loads", st.PartitionLoads-st0.PartitionLoads)
	ep.Count("partition_misses", st.PartitionLoads-st0.PartitionLoads)
	ep.Count("partition_hits", st.PartitionHits-st0.PartitionHits)
	ep.Count("prefetched_loads", st.PrefetchedLoads-st0.PrefetchedLoads)
	ep.Count("partition_bytes_read", st.FeatureBytesRead-st0.FeatureBytesRead)
	// The partitions are read as byte ranges: their rows come from the
	// device, once per load.
	ep.AddRowsFromDevice((st.FeatureBytesRead - st0.FeatureBytesRead) / s.rowBytes)
	// whole partitions, read ahead of their rows' lookups (DESIGN §5)
	ep.Count(metrics.CounterRowsFilled, (st.FeatureBytesRead-st0.FeatureBytesRead)/s.rowBytes)
	ep.Count("bucket_loads", st.BucketLoads-st0.BucketLoads)
	ep.Count("edge_bytes_read", st.EdgeBytesRead-st0.EdgeBytesRead)
	ep.Count("graph_edges", s.b.Edges())
	ep.Count("sampled_nodes", dense.Sampled)
	ep.Count("sampled_buffer_edges", dense.BufferEdges)
	ep.Count("edges_dropped", dense.DroppedEdges)
	ep.Count("isolated_nodes", dense.Isolated)
	return nil
}

// trainState trains the batches of one buffer state: samplers draw DENSE
// mini-batches ahead (at most 2 per sampler), the trainer takes them in
// order, copies their rows out of the buffer and trains.
func (s *system) trainState(ctx context.Context, env *train.Env, ep *metrics.EpochStats, epoch, base int, batches [][]int64) (DenseStats, error) {
	var total DenseStats
	n := len(batches)
	if n == 0 {
		return total, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	results := make([]chan sampled, n)
	for i := range results {
		results[i] = make(chan sampled, 1)
	}
	ahead := s.opt.ahead()
	tokens := make(chan struct{}, ahead)
	for i := 0; i < ahead; i++ {
		tokens <- struct{}{}
	}
	jobs := make(chan int)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		for i := 0; i < n; i++ {
			select {
			case <-tokens:
			case <-ctx.Done():
				return
			}
			if !kit.Send(ctx, jobs, i) {
				return
			}
		}
	}()
	for w := 0; w < s.opt.samplers; w++ {
		ds := s.ds
		if w > 0 {
			ds = s.ds.Clone()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				w := ep.StartWorker(metrics.WorkSample)
				t0 := time.Now()
				mb := &graph.MiniBatch{}
				st, err := ds.Sample(&s.sg, epoch, base+i, batches[i], mb)
				ep.Add(metrics.StageSample, time.Since(t0))
				results[i] <- sampled{mb: mb, st: st, err: err}
				w.Stop()
			}
		}()
	}
	for i := 0; i < n; i++ {
		t0 := time.Now()
		var res sampled
		select {
		case res = <-results[i]:
		case <-ctx.Done():
			return total, ctx.Err()
		}
		ep.Add(metrics.StageStall, time.Since(t0))
		tokens <- struct{}{}
		if res.err != nil {
			return total, fmt.Errorf("mariusgnn: %w", res.err)
		}
		total.Add(res.st)
		mb := res.mb
		// Gather from the buffer: every row is resident, in a partition
		// read from disk during this epoch (the buffer is released at each
		// epoch's end), so it is the disk-resident partition tier, not a
		// memory hit (DESIGN §5).
		w := ep.StartWorker(metrics.WorkExtract)
		t1 := time.Now()
		rows := len(mb.InputNodes)
		s.x.Resize(rows, s.dim)
		xb := osutil.Bytes(s.x.Data)
		for k, v := range mb.InputNodes {
			copy(xb[int64(k)*s.rowBytes:], s.pb.Row(v))
		}
		ep.Add(metrics.StageExtract, time.Since(t1))
		w.Stop()
		ep.Lookup(int64(rows), s.rowBytes, 0, metrics.TierRows{Tier: metrics.TierPartition, Rows: int64(rows)})
		// Back to original ids: labels and the records use them.
		for k, v := range mb.InputNodes {
			mb.InputNodes[k] = s.l.Old(s.sg.Partitioned(v))
		}
		mb.Seeds = mb.InputNodes[:len(batches[i])]
		if _, err := env.TrainStep(ep, mb, &s.x); err != nil {
			return total, err
		}
	}
	return total, nil
}
