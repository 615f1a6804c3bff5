package kit

// A pool of sampling workers feeding a queue: PyG+'s DataLoader workers
// (Ginex §2.2, Fig. 3) and GNNDrive's samplers (GNNDrive §4.1 ①–②). Each
// worker owns a sampler (sample.Sampler.Clone shares the topology) and
// samples whole mini-batches; batches come out in completion order. With
// ahead > 0, at most ahead batches are dispatched and not yet consumed, and
// batches are dispatched in index order (PyTorch's prefetch window), so a
// consumer that wants them in order never waits for one not dispatched.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/sample"
)

// SamplerPool is a running pool of sampling workers.
type SamplerPool struct {
	// Out carries the sampled mini-batches in completion order; it closes
	// when every batch was sampled or the pool stopped.
	Out    chan *graph.MiniBatch
	tokens chan struct{}
	errMu  sync.Mutex
	err    error
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// StartSamplers samples batches[i] as MiniBatch index base+i of epoch with
// workers clones of proto. Out has capacity queue. ahead > 0 bounds the
// batches dispatched and not yet released (the consumer calls Release once
// per batch taken). The time workers spend in Sample goes to ep's
// sample_s; each worker is a sample worker of ep from its start to its end
// (metrics.EpochStats.StartWorker): its CPU time is sample_busy_s, the rest
// — waiting for a dispatch token or for room in Out, blocked on topology
// reads, waiting for a core — sample_wait_s.
func StartSamplers(ctx context.Context, proto *sample.Sampler, epoch int, batches [][]int64, base, workers, queue, ahead int, ep *metrics.EpochStats) *SamplerPool {
	ctx, cancel := context.WithCancel(ctx)
	p := &SamplerPool{Out: make(chan *graph.MiniBatch, queue), cancel: cancel}
	if ahead > 0 {
		p.tokens = make(chan struct{}, ahead)
		for i := 0; i < ahead; i++ {
			p.tokens <- struct{}{}
		}
	}
	var next int
	var nextMu sync.Mutex
	take := func() (int, bool) {
		if p.tokens != nil {
			select {
			case <-p.tokens:
			case <-ctx.Done():
				return 0, false
			}
		}
		nextMu.Lock()
		defer nextMu.Unlock()
		if next >= len(batches) {
			return 0, false
		}
		i := next
		next++
		return i, true
	}
	workers = max(1, workers)
	t0 := time.Now()
	for w := 0; w < workers; w++ {
		s := proto
		if w > 0 {
			s = proto.Clone()
		}
		p.wg.Add(1)
		go func(s *sample.Sampler) {
			defer p.wg.Done()
			w := ep.StartWorkerSince(metrics.WorkSample, t0)
			defer w.Stop()
			for {
				i, ok := take()
				if !ok {
					return
				}
				t0 := time.Now()
				mb, err := s.Sample(epoch, base+i, batches[i])
				ep.Add(metrics.StageSample, time.Since(t0))
				if err != nil {
					p.fail(err)
					return
				}
				if !Send(ctx, p.Out, mb) {
					return
				}
			}
		}(s)
	}
	go func() {
		p.wg.Wait()
		close(p.Out)
	}()
	return p
}

func (p *SamplerPool) fail(err error) {
	p.errMu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.errMu.Unlock()
	p.cancel()
}

// Release returns one dispatch token (a batch was consumed).
func (p *SamplerPool) Release() {
	if p.tokens != nil {
		p.tokens <- struct{}{}
	}
}

// InOrder returns the pool's batches in index order, as a DataLoader
// hands them out: next(i) takes batch i (MiniBatch.Index i) from Out,
// keeping the batches that arrive early. The caller releases each batch's
// dispatch token (Release) when it is done with it. Out closing before
// batch i is the first sampling error, else the end of ctx, else an error
// naming the batch.
func (p *SamplerPool) InOrder(ctx context.Context) func(i int) (*graph.MiniBatch, error) {
	pending := map[int]*graph.MiniBatch{}
	return func(i int) (*graph.MiniBatch, error) {
		for pending[i] == nil {
			mb, ok := <-p.Out
			if !ok {
				if err := p.Err(); err != nil {
					return nil, err
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("the sampling workers stopped before batch %d", i)
			}
			pending[mb.Index] = mb
		}
		mb := pending[i]
		delete(pending, i)
		return mb, nil
	}
}

// Stop cancels the workers, waits for them and returns the first sampling
// error.
func (p *SamplerPool) Stop() error {
	p.cancel()
	for range p.Out {
	}
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}

// Err returns the first sampling error so far.
func (p *SamplerPool) Err() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}
