package diskgnn

// DiskGNN §3 "Offline sampling": "we do not have to perform model
// computation immediately after finishing graph sampling for a mini-batch;
// instead, we can sample many mini-batches before model computation". By
// sampling every mini-batch ahead, DiskGNN knows which node features each
// batch will read, counts their access frequencies (the four-level store's
// placement, §4) and packs them (§5.2) before training starts.
//
// Here the samples are exactly the batches the reference pipeline trains:
// batch i of epoch e is sampled with the sampler's per-(seed, epoch, batch)
// random stream (docs/ARCHITECTURE.md "Sampling"), so any worker may sample
// any batch and the result is the same. Under sample_pool=reuse (the
// artifact's default) one epoch's batches are sampled, a pool that every
// epoch trains again, so the pre-processing is paid once and amortised;
// under sample_pool=epoch every epoch of the run is sampled, so each epoch
// trains the reference's batches. Samples go to disk through a
// sampleWriter; each node's access count is accumulated on the way.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"outcore/engine/sample"
)

// offlineStats are what offline sampling measured.
type offlineStats struct {
	Samples      int
	Accesses     int64         // input nodes over all samples (with repeats across samples)
	MaxInputs    int           // largest sample's input nodes
	MaxSeeds     int           // largest sample's seeds
	MaxBytes     int64         // largest encoded sample
	SampleBusy   time.Duration // summed over workers
	WriteBusy    time.Duration // summed over workers
	BytesWritten int64
}

// offlineSample samples every batch of the run ahead of training: batch i
// of epoch e (seeds batches(e)[i]) becomes graph sample e×perEpoch+i in w.
// workers clones of proto sample in parallel. counts (one per node) gets
// +1 for every input node of every sample. progress, when set, is called
// after each sample with the number done.
func offlineSample(ctx context.Context, proto *sample.Sampler, epochs, perEpoch int, batches func(epoch int) [][]int64, workers int, w *sampleWriter, counts []int32, progress func(done, total int)) (offlineStats, error) {
	total := epochs * perEpoch
	st := offlineStats{Samples: total}
	if total == 0 {
		return st, nil
	}
	seeds := make([][][]int64, epochs)
	for e := range seeds {
		seeds[e] = batches(e)
		if len(seeds[e]) != perEpoch {
			return st, fmt.Errorf("diskgnn: epoch %d has %d batches, want %d", e, len(seeds[e]), perEpoch)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		done     atomic.Int64
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		progMu   sync.Mutex
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	workers = max(1, min(workers, total))
	for k := 0; k < workers; k++ {
		s := proto
		if k > 0 {
			s = proto.Clone()
		}
		wg.Add(1)
		go func(s *sample.Sampler) {
			defer wg.Done()
			var local offlineStats
			defer func() {
				mu.Lock()
				st.Accesses += local.Accesses
				st.MaxInputs = max(st.MaxInputs, local.MaxInputs)
				st.MaxSeeds = max(st.MaxSeeds, local.MaxSeeds)
				st.MaxBytes = max(st.MaxBytes, local.MaxBytes)
				st.SampleBusy += local.SampleBusy
				st.WriteBusy += local.WriteBusy
				mu.Unlock()
			}()
			for {
				g := int(next.Add(1) - 1)
				if g >= total || ctx.Err() != nil {
					return
				}
				e, i := g/perEpoch, g%perEpoch
				t0 := time.Now()
				mb, err := s.Sample(e, i, seeds[e][i])
				if err != nil {
					fail(fmt.Errorf("diskgnn: offline sampling epoch %d batch %d: %w", e, i, err))
					return
				}
				for _, v := range mb.InputNodes {
					atomic.AddInt32(&counts[v], 1)
				}
				t1 := time.Now()
				local.SampleBusy += t1.Sub(t0)
				if err := w.Put(g, mb); err != nil {
					fail(err)
					return
				}
				local.WriteBusy += time.Since(t1)
				local.Accesses += int64(len(mb.InputNodes))
				local.MaxInputs = max(local.MaxInputs, len(mb.InputNodes))
				local.MaxSeeds = max(local.MaxSeeds, len(mb.Seeds))
				local.MaxBytes = max(local.MaxBytes, encodedSampleLen(mb))
				if d := int(done.Add(1)); progress != nil {
					progMu.Lock() // progress is called from one worker at a time
					progress(d, total)
					progMu.Unlock()
				}
			}
		}(s)
	}
	wg.Wait()
	if firstErr != nil {
		return st, firstErr
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	return st, nil
}
