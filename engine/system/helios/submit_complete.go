package helios

// The GPU-initiated asynchronous disk I/O stack (Helios §3.1, Fig. 2(b)):
// thread-level parallel command submission to many submission queues, and
// an IO completion path decoupled from submission, so that no submitter
// waits between posting a command and its completion (BaM's synchronous
// stack, used by GIDS, keeps each warp polling for its own command).
//
// Stand-in: the submission kernel's threads are the goroutines that call
// Submit (the pipeline's batch preparers); the SQ/CQ pairs are io_uring
// rings (engine/storage Readers, O_DIRECT, one read per feature row as
// Helios issues one NVMe command per vertex); the completion kernel is one
// goroutine per ring that reaps it. engine/storage allows exactly this: one
// goroutine submitting and one reaping on a Reader at once. The data lands
// in the requests' destinations (the batch's feature buffer) before the
// completion is handed back, as the completion kernel's warps copy from the
// temporary I/O buffer into the feature buffer.
//
// Each mini-batch is one Job: its hops add reads as they are sampled
// (pipeline.go), and the job is done when it is sealed and its reads have
// completed. Jobs complete independently: a batch's I/O never waits for
// another's.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"outcore/engine/storage"
)

// Job is the I/O of one mini-batch.
type Job struct {
	s         *IOStack
	id        uint32
	remaining atomic.Int64 // outstanding reads + 1 until sealed
	sealed    atomic.Bool
	done      chan struct{}
	errMu     sync.Mutex
	err       error
	reads     atomic.Int64
}

// Done is closed when the job is sealed and all its reads completed.
func (j *Job) Done() <-chan struct{} { return j.done }

// Err is the first read error of the job (valid after Done).
func (j *Job) Err() error {
	j.errMu.Lock()
	defer j.errMu.Unlock()
	return j.err
}

// Reads is the number of reads submitted for the job.
func (j *Job) Reads() int64 { return j.reads.Load() }

func (j *Job) fail(err error) {
	j.errMu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.errMu.Unlock()
}

// finish drops n references; the last one closes done and frees the
// job's id (every completion of the job has been handled by then).
func (j *Job) finish(n int64) {
	if j.remaining.Add(-n) == 0 {
		j.s.jobsMu.Lock()
		j.s.jobs[j.id] = nil
		j.s.freeIDs = append(j.s.freeIDs, j.id)
		j.s.jobsMu.Unlock()
		close(j.done)
	}
}

// ring is one submission/completion queue pair.
type ring struct {
	r           storage.Reader
	subMu       sync.Mutex // one submitter at a time
	outstanding atomic.Int64
	wake        chan struct{}
}

// IOStats are the stack's counters.
type IOStats struct {
	// Reads submitted and completed.
	Submitted, Completed int64
	// SubmitCalls counts Submit calls; Overlapped those that found reads
	// of other jobs still outstanding (submission not waiting for them).
	SubmitCalls, Overlapped int64
	// CompletedDuringSubmit counts reads reaped while a Submit was in
	// progress on another goroutine.
	CompletedDuringSubmit int64
	// SubmitTime is the time spent inside Submit; CompleteTime the
	// completion goroutines' time handling completions (not waiting).
	SubmitTime, CompleteTime time.Duration
}

// IOStack submits reads over several rings and completes them on separate
// goroutines.
type IOStack struct {
	rings    []*ring
	next     atomic.Uint32
	jobsMu   sync.Mutex
	jobs     []*Job
	freeIDs  []uint32
	inSubmit atomic.Int32
	// counters
	submitted, completed, calls, overlapped, duringSubmit atomic.Int64
	submitNs, completeNs                                  atomic.Int64

	started  bool
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	errMu    sync.Mutex
	reapErr  error
	broken   chan struct{} // closed when a ring fails
	closeErr error
}

// NewIOStack builds a stack over rings readers of f (each its own ring of
// f's queue depth). Submit may be called before Start; nothing completes
// until Start runs the completion path.
func NewIOStack(f *storage.File, rings int) (*IOStack, error) {
	if rings < 1 {
		return nil, fmt.Errorf("helios: I/O stack: %d rings, want >= 1", rings)
	}
	s := &IOStack{broken: make(chan struct{})}
	for i := 0; i < rings; i++ {
		r, err := f.NewReader()
		if err != nil {
			s.closeReaders()
			return nil, fmt.Errorf("helios: I/O stack: ring %d: %w", i, err)
		}
		s.rings = append(s.rings, &ring{r: r, wake: make(chan struct{}, 1)})
	}
	return s, nil
}

// Rings is the number of rings.
func (s *IOStack) Rings() int { return len(s.rings) }

// Start runs one completion goroutine per ring until Close.
func (s *IOStack) Start(ctx context.Context) {
	if s.started {
		return
	}
	s.started = true
	ctx, s.cancel = context.WithCancel(ctx)
	for _, rg := range s.rings {
		s.wg.Add(1)
		go s.complete(ctx, rg)
	}
}

// NewJob opens a job. It holds one reference until Seal.
func (s *IOStack) NewJob() *Job {
	j := &Job{s: s, done: make(chan struct{})}
	j.remaining.Store(1)
	s.jobsMu.Lock()
	if n := len(s.freeIDs); n > 0 {
		j.id = s.freeIDs[n-1]
		s.freeIDs = s.freeIDs[:n-1]
		s.jobs[j.id] = j
	} else {
		j.id = uint32(len(s.jobs))
		s.jobs = append(s.jobs, j)
	}
	s.jobsMu.Unlock()
	return j
}

// Seal says no more reads will be added to j (again: no effect).
func (s *IOStack) Seal(j *Job) {
	if j.sealed.CompareAndSwap(false, true) {
		j.finish(1)
	}
}

// Wait blocks until j is done, the stack broke or ctx ends, and returns
// the job's first read error, the stack's or ctx's.
func (s *IOStack) Wait(ctx context.Context, j *Job) error {
	select {
	case <-j.done:
		return j.Err()
	case <-s.broken:
		return s.Err()
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// job returns the job with id.
func (s *IOStack) job(id uint32) *Job {
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	return s.jobs[id]
}

// Submit posts reads for unsealed job j and returns without waiting for
// them. The requests' Tag fields are overwritten. The reads are split over
// the rings (each thread of the submission kernel binds several commands
// and sends them to several queues). Dst of every request belongs to the
// stack until j is done.
func (s *IOStack) Submit(j *Job, reqs []storage.Request) error {
	if len(reqs) == 0 {
		return nil
	}
	t0 := time.Now()
	s.inSubmit.Add(1)
	defer func() {
		s.inSubmit.Add(-1)
		s.submitNs.Add(int64(time.Since(t0)))
	}()
	s.calls.Add(1)
	if s.submitted.Load()-s.completed.Load() > j.remaining.Load()-1 {
		s.overlapped.Add(1) // reads of other jobs are in flight
	}
	for i := range reqs {
		reqs[i].Tag = uint64(j.id) << 32
	}
	n := int64(len(reqs))
	j.remaining.Add(n)
	j.reads.Add(n)
	s.submitted.Add(n)
	chunk := (len(reqs) + len(s.rings) - 1) / len(s.rings)
	for lo := 0; lo < len(reqs); lo += chunk {
		part := reqs[lo:min(lo+chunk, len(reqs))]
		rg := s.rings[int(s.next.Add(1))%len(s.rings)]
		rg.subMu.Lock()
		rg.outstanding.Add(int64(len(part)))
		err := rg.r.Submit(part)
		rg.subMu.Unlock()
		if err != nil {
			// nothing of part was submitted: settle it and what follows
			rg.outstanding.Add(-int64(len(part)))
			rest := int64(len(reqs) - lo)
			s.submitted.Add(-rest)
			j.reads.Add(-rest)
			err = fmt.Errorf("helios: submit %d reads: %w", len(part), err)
			j.fail(err)
			j.finish(rest)
			return err
		}
		select {
		case rg.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// complete is one ring's completion goroutine.
func (s *IOStack) complete(ctx context.Context, rg *ring) {
	defer s.wg.Done()
	var comps []storage.Completion
	for {
		if rg.outstanding.Load() == 0 {
			select {
			case <-rg.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		var err error
		comps, err = rg.r.Reap(ctx, comps[:0], 1)
		t0 := time.Now()
		n := int64(len(comps))
		rg.outstanding.Add(-n)
		s.completed.Add(n) // counted before any job can be seen done
		if s.inSubmit.Load() > 0 {
			s.duringSubmit.Add(n)
		}
		for _, c := range comps {
			j := s.job(uint32(c.Tag >> 32))
			if c.Err != nil {
				j.fail(c.Err)
			}
			j.finish(1)
		}
		s.completeNs.Add(int64(time.Since(t0)))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.errMu.Lock()
			if s.reapErr == nil {
				s.reapErr = fmt.Errorf("helios: reap: %w", err)
				close(s.broken)
			}
			s.errMu.Unlock()
			return
		}
	}
}

// Err is the completion path's first error.
func (s *IOStack) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.reapErr
}

// Stats returns the counters so far.
func (s *IOStack) Stats() IOStats {
	return IOStats{
		Submitted: s.submitted.Load(), Completed: s.completed.Load(),
		SubmitCalls: s.calls.Load(), Overlapped: s.overlapped.Load(),
		CompletedDuringSubmit: s.duringSubmit.Load(),
		SubmitTime:            time.Duration(s.submitNs.Load()), CompleteTime: time.Duration(s.completeNs.Load()),
	}
}

// Close stops the completion path and closes the rings (each waits for
// its reads in flight).
func (s *IOStack) Close() error {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	s.closeReaders()
	return s.closeErr
}

func (s *IOStack) closeReaders() {
	var errs []error
	for _, rg := range s.rings {
		errs = append(errs, rg.r.Close())
	}
	s.rings = nil
	s.closeErr = errors.Join(errs...)
}
