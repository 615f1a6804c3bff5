package gnndrive

// GNNDrive §4.2 "Asynchronous Extracting" and Algorithm 1: one extractor.
// It dequeues a sampled mini-batch from the extracting queue (③), looks its
// nodes up in the shared feature buffer (reuse valid data, share data other
// extractors are loading through the wait list, allocate LRU standby slots
// for the rest), issues every load of the mini-batch at once through its own
// io_uring ring with direct I/O (④, first phase), and as completions arrive
// the rows land in their buffer slots (⑤, second phase) and the nodes turn
// valid. In the CPU variant (§4.4) loads land in the host feature buffer
// directly (the ring's aligned buffers are the only staging); with
// feature_buffer=device (§4.2's GPU layout) every load lands in the
// extractor's part of the host staging buffer (M_b rows) and is then
// copied to its buffer slot, the stand-in for the host-to-device transfer
// (staging_buffer.go). After waiting for the
// wait-list nodes it enqueues the node alias list into the training queue
// (⑥). Extractors finish in any order, so mini-batches train out of order
// (§4.3).

import (
	"context"
	"fmt"
	"slices"
	"time"

	"outcore/engine/cache"
	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/storage"
	"outcore/internal/osutil"
)

// extracted is a mini-batch whose features are in the feature buffer: the
// node alias list of Algorithm 1 (x.Aliases), in the training queue.
type extracted struct {
	mb *graph.MiniBatch
	x  *cache.Extraction
}

// extractor owns one storage Reader (one io_uring ring).
type extractor struct {
	id    int
	r     storage.Reader
	feats *storage.File
	buf   *cache.FeatureBuffer
	reqs  []storage.Request
	comps []storage.Completion
	group []cache.Load
	order []int32 // load indices sorted by node (file offset)
	// stage is the extractor's part of the host staging buffer (device
	// layout), nil when loads land in the feature buffer directly
	stage *stagingArea
}

// extract runs Algorithm 1 for mb and returns the extraction (aliases set).
func (e *extractor) extract(ctx context.Context, mb *graph.MiniBatch, x *cache.Extraction, ep *metrics.EpochStats) error {
	x.Reset(mb.InputNodes)
	if err := e.buf.Acquire(x); err != nil { // lines 1–30 (allocation)
		return fmt.Errorf("gnndrive extractor %d, batch %d: %w", e.id, mb.Index, err)
	}
	// Valid rows are feature-buffer hits; rows another extractor is
	// loading are shared in flight (not hits); the loads are the device
	// tier (DESIGN §5).
	ep.Lookup(int64(len(mb.InputNodes)), e.feats.RowBytes(), int64(x.Shared),
		metrics.TierRows{Tier: metrics.TierCPU, Rows: int64(x.Hits)})
	if len(x.Loads) > 0 {
		// Phase 1: one asynchronous read per node, all submitted before
		// waiting; requests are issued in file order so rows sharing a
		// block are read once.
		e.order = e.order[:0]
		for i := range x.Loads {
			e.order = append(e.order, int32(i))
		}
		slices.SortFunc(e.order, func(a, b int32) int {
			va, vb := x.Loads[a].Node, x.Loads[b].Node
			switch {
			case va < vb:
				return -1
			case va > vb:
				return 1
			}
			return 0
		})
		// Requests go to the ring in windows of submitAhead so that the
		// reader's per-request bookkeeping stays small; the next window is
		// submitted as soon as the previous one is issued, so the ring is
		// never idle while loads remain.
		submitted := 0
		submit := func() error {
			if submitted == len(e.order) || e.r.Outstanding() > submitAhead/2 {
				return nil
			}
			hi := min(submitted+submitAhead, len(e.order))
			if e.stage != nil {
				// as many loads as staging rows are free
				hi = min(hi, submitted+e.stage.free())
				if hi == submitted {
					return nil
				}
			}
			e.reqs = e.reqs[:0]
			for _, i := range e.order[submitted:hi] {
				l := x.Loads[i]
				dst := e.buf.Row(l.Slot)
				if e.stage != nil {
					dst = e.stage.take(i)
				}
				e.reqs = append(e.reqs, e.feats.RowRequest(l.Node, osutil.Bytes(dst), uint64(i)))
			}
			if err := e.r.Submit(e.reqs); err != nil {
				return fmt.Errorf("gnndrive extractor %d, batch %d: submit %d reads: %w", e.id, mb.Index, len(e.reqs), err)
			}
			submitted = hi
			return nil
		}
		if err := submit(); err != nil {
			return err
		}
		// Phase 2: as reads complete, their rows are in the buffer slots
		// (the Reader copies out of its aligned staging buffers); mark them
		// valid so other extractors waiting on them proceed.
		done := 0
		for done < len(x.Loads) {
			if err := submit(); err != nil {
				return err
			}
			var err error
			e.comps, err = e.r.Reap(ctx, e.comps[:0], 1)
			if err != nil {
				return fmt.Errorf("gnndrive extractor %d, batch %d: reap: %w", e.id, mb.Index, err)
			}
			e.group = e.group[:0]
			for _, c := range e.comps {
				if c.Err != nil {
					return fmt.Errorf("gnndrive extractor %d, batch %d: read node %d: %w", e.id, mb.Index, x.Loads[c.Tag].Node, c.Err)
				}
				l := x.Loads[c.Tag]
				if e.stage != nil {
					// ⑤: staging → feature buffer
					e.stage.transfer(int32(c.Tag), e.buf.Row(l.Slot))
				}
				e.group = append(e.group, l)
			}
			done += len(e.comps)
			e.buf.MarkValid(e.group) // line 36
		}
	}
	if err := e.buf.Await(x); err != nil { // line 37
		return fmt.Errorf("gnndrive extractor %d, batch %d: wait list: %w", e.id, mb.Index, err)
	}
	return nil
}

// submitAhead is the most loads an extractor has submitted and not reaped.
const submitAhead = 4096

// runExtractors starts the extractor goroutines: they take mini-batches from
// in until it closes, and put extracted ones into out. fail is called with
// the first error (it poisons the buffer and cancels the epoch).
func runExtractors(ctx context.Context, exs []*extractor, in <-chan *graph.MiniBatch, out chan<- extracted, ep *metrics.EpochStats, fail func(error)) (wait func()) {
	done := make(chan struct{}, len(exs))
	t0 := time.Now()
	for _, e := range exs {
		go func(e *extractor) {
			defer func() { done <- struct{}{} }()
			// An extract worker for its whole life (DESIGN §5): CPU time
			// busy; waiting for a sampled batch, for completions, for
			// slots or rows in flight, for room in the training queue
			// wait.
			w := ep.StartWorkerSince(metrics.WorkExtract, t0)
			defer w.Stop()
			for mb := range in {
				t0 := time.Now()
				x := &cache.Extraction{}
				err := e.extract(ctx, mb, x, ep)
				ep.Add(metrics.StageExtract, time.Since(t0))
				if err != nil {
					fail(err)
					return
				}
				select {
				case out <- extracted{mb: mb, x: x}:
				case <-ctx.Done():
					// Nobody will train or release it.
					return
				}
			}
		}(e)
	}
	return func() {
		for range exs {
			<-done
		}
	}
}
