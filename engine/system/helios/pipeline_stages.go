package helios

// The operators of the deep pipeline (§3.3, pipeline.go) over Helios's
// tiers and I/O stack: a preparer samples each hop, looks the hop's new
// nodes up in the GPU and CPU tiers and submits the reads of the rest
// (submit_complete.go); the trainer waits for the batch's completions and
// trains it.

import (
	"context"
	"sync/atomic"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

// batchState is one batch's buffers and I/O.
type batchState struct {
	sw      metrics.Worker // the preparer as a sample worker
	x       []float32
	job     *Job
	reqs    []storage.Request
	gpu     int64 // rows from the GPU tier
	cpu     int64 // rows from the CPU tier
	read    int64 // rows read from storage
	spill   []float32
	oldJob  *Job // the job whose reads target x when the batch spilled
	oldRows int  // rows of x already placed when it spilled
}

// stages runs one epoch's batches through the pipeline.
type stages struct {
	h       *helios
	env     *train.Env
	ep      *metrics.EpochStats
	epoch   int
	batches [][]int64
	x       nn.Tensor
	gpu     atomic.Int64
	cpu     atomic.Int64
	read    atomic.Int64
	spills  atomic.Int64
}

func (s *stages) Begin(b *Batch) error {
	b.Job = &batchState{x: s.h.xbufs[b.Slot], job: s.h.stack.NewJob()}
	return nil
}

// Sample samples b on preparer w; the preparer is a sample worker while
// it samples and an extract worker while its hop callbacks look up and
// submit (Hop).
func (s *stages) Sample(w int, b *Batch, onHop sample.HopFunc) error {
	st := b.Job.(*batchState)
	hop := onHop
	if onHop != nil {
		hop = func(h, first int, nodes []int64) error {
			st.sw.Stop()
			err := onHop(h, first, nodes)
			st.sw = s.ep.StartWorker(metrics.WorkSample)
			return err
		}
	}
	st.sw = s.ep.StartWorker(metrics.WorkSample)
	t0 := time.Now()
	err := s.h.samplers[w].SampleHops(&b.MB, s.epoch, b.Index, s.batches[b.Index], hop)
	s.ep.Span(metrics.StageSample, t0, time.Now()) // its seconds: AddTotal in RunEpoch
	st.sw.Stop()
	return err
}

// Hop looks each new node up in the GPU and CPU tiers and submits one
// read per remaining row into the batch buffer.
func (s *stages) Hop(b *Batch, hop, first int, nodes []int64) error {
	st := b.Job.(*batchState)
	h := s.h
	w := s.ep.StartWorker(metrics.WorkExtract)
	defer w.Stop()
	t0 := time.Now()
	defer func() { s.ep.Span(metrics.StageExtract, t0, time.Now()) }()
	dim := h.dim
	if need := (first + len(nodes)) * dim; need > len(st.x) {
		s.spill(st, first, need)
	}
	st.reqs = st.reqs[:0]
	for i, v := range nodes {
		dst := st.x[(first+i)*dim : (first+i+1)*dim]
		switch tr, row := h.tiers.Lookup(v); tr {
		case GPU:
			copy(dst, h.gpuRows[row*dim:(row+1)*dim])
			st.gpu++
		case CPU:
			copy(dst, h.cpuRows[row*dim:(row+1)*dim])
			st.cpu++
		default:
			st.reqs = append(st.reqs, h.feats.RowRequest(v, osutil.Bytes(dst), 0))
			st.read++
		}
	}
	return h.stack.Submit(st.job, st.reqs)
}

// spill moves a batch that outgrew its buffer to a heap buffer: the rows
// placed so far are copied over once their reads completed (Complete).
func (s *stages) spill(st *batchState, first, need int) {
	s.spills.Add(1)
	nx := make([]float32, max(need, 2*len(st.x)))
	if st.oldJob == nil {
		st.oldJob, st.oldRows = st.job, first
		s.h.stack.Seal(st.job)
		st.job = s.h.stack.NewJob()
		st.spill = st.x
	} else {
		// spilled before: the previous heap buffer's rows are all local
		// copies or reads of the current job; wait for them here.
		s.h.stack.Seal(st.job)
		_ = s.h.stack.Wait(context.Background(), st.job)
		copy(nx, st.x[:first*s.h.dim])
		st.job = s.h.stack.NewJob()
	}
	st.x = nx
}

func (s *stages) Complete(ctx context.Context, b *Batch) error {
	st := b.Job.(*batchState)
	t0 := time.Now()
	defer func() { s.ep.Span(metrics.StageExtract, t0, time.Now()) }() // waiting for the batch's reads is loading it
	s.h.stack.Seal(st.job)
	if err := s.h.stack.Wait(ctx, st.job); err != nil {
		return err
	}
	if st.oldJob != nil {
		if err := s.h.stack.Wait(ctx, st.oldJob); err != nil {
			return err
		}
		copy(st.x, st.spill[:st.oldRows*s.h.dim])
	}
	return nil
}

func (s *stages) Train(b *Batch) error {
	st := b.Job.(*batchState)
	n := len(b.MB.InputNodes)
	s.x.Data, s.x.Rows, s.x.Cols = st.x[:n*s.h.dim], n, s.h.dim
	_, err := s.env.TrainStep(s.ep, &b.MB, &s.x)
	return err
}

// End waits until no read of the batch is in flight, so its buffer can be
// reused, and adds its tier counts.
func (s *stages) End(b *Batch) {
	st, ok := b.Job.(*batchState)
	if !ok {
		return
	}
	for _, j := range []*Job{st.job, st.oldJob} {
		if j == nil {
			continue
		}
		select {
		case <-j.Done():
		default:
			s.h.stack.Seal(j)
			_ = s.h.stack.Wait(context.Background(), j)
		}
	}
	s.gpu.Add(st.gpu)
	s.cpu.Add(st.cpu)
	s.read.Add(st.read)
	// DESIGN §5: the batch's lookups once, GPU tier first
	s.ep.Lookup(st.gpu+st.cpu+st.read, s.h.rowBytes, 0,
		metrics.TierRows{Tier: metrics.TierGPU, Rows: st.gpu},
		metrics.TierRows{Tier: metrics.TierCPU, Rows: st.cpu})
	b.Job = nil
}
