package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

const fbDim = 4

func truthRow(v int64) [fbDim]float32 {
	return [fbDim]float32{float32(v), float32(v) + 0.25, float32(-v), 7}
}

// bufferPipeline runs GNNDrive's stages over the buffer: samplers feed an
// extracting queue (bound 6), extractors load through the buffer and feed a
// training queue (bound 4), the trainer checks every row it reads against
// the truth and hands the batch to the releaser. Batches finish out of
// order. It returns an error on the first violated invariant.
type pipelineCfg struct {
	nodes      int64
	slots      int
	extractors int
	maxBatch   int // M_b the buffer is sized with
	batchMax   int // largest batch actually drawn
	batches    int
	samplers   int
	seed       uint64
}

func runBufferPipeline(t *testing.T, c pipelineCfg) (*FeatureBuffer, error) {
	t.Helper()
	buf, err := NewFeatureBuffer(FeatureBufferConfig{Nodes: c.nodes, Dim: fbDim, Slots: c.slots, Extractors: c.extractors, MaxBatch: c.maxBatch})
	if err != nil {
		return nil, err
	}
	// Invariant checks run inside the buffer's critical section.
	resident := make([]bool, c.nodes) // valid or in flight
	var violation error
	fail := func(format string, a ...any) {
		if violation == nil {
			violation = fmt.Errorf(format, a...)
		}
	}
	buf.trace = func(ev bufferEvent) {
		switch ev.kind {
		case evAssign:
			if resident[ev.node] {
				fail("node %d loaded again while valid or in flight", ev.node)
			}
			resident[ev.node] = true
		case evInvalidate:
			if r := buf.table.ref(ev.node); r != 0 {
				fail("slot %d of node %d reused while its refcount is %d", ev.slot, ev.node, r)
			}
			if !resident[ev.node] {
				fail("node %d invalidated but not resident", ev.node)
			}
			resident[ev.node] = false
		case evValid:
			if !resident[ev.node] || buf.reverse[ev.slot] != ev.node {
				fail("node %d turned valid in slot %d it does not own", ev.node, ev.slot)
			}
		case evStandby:
			if r := buf.table.ref(ev.node); r != 0 {
				fail("slot %d entered standby with refcount %d", ev.slot, r)
			}
		}
	}

	extractQ := make(chan []int64, 6)
	trainQ := make(chan *Extraction, 4)
	releaseQ := make(chan *Extraction, 64)
	var errOnce sync.Once
	var firstErr error
	setErr := func(err error) {
		errOnce.Do(func() { firstErr = err; buf.Fail(err) })
	}

	var samplers sync.WaitGroup
	per := (c.batches + c.samplers - 1) / c.samplers
	for s := 0; s < c.samplers; s++ {
		samplers.Add(1)
		go func(s int) {
			defer samplers.Done()
			r := rand.New(rand.NewPCG(c.seed, uint64(s)))
			for b := 0; b < per; b++ {
				k := 1 + r.IntN(c.batchMax)
				seen := map[int64]bool{}
				ids := make([]int64, 0, k)
				for len(ids) < k {
					var v int64
					if r.IntN(3) == 0 { // hot set: lots of sharing between batches
						v = int64(r.IntN(int(c.nodes/20) + 1))
					} else {
						v = r.Int64N(c.nodes)
					}
					if !seen[v] {
						seen[v] = true
						ids = append(ids, v)
					}
				}
				extractQ <- ids
			}
		}(s)
	}
	go func() { samplers.Wait(); close(extractQ) }()

	var extractors sync.WaitGroup
	for e := 0; e < c.extractors; e++ {
		extractors.Add(1)
		go func(e int) {
			defer extractors.Done()
			r := rand.New(rand.NewPCG(c.seed, 100+uint64(e)))
			for ids := range extractQ {
				x := &Extraction{}
				x.Reset(ids)
				if err := buf.Acquire(x); err != nil {
					setErr(err)
					continue
				}
				// Phase 1 and 2: "read" each node and mark it valid in
				// small groups, with jitter, like io_uring completions.
				var group []Load
				for _, l := range x.Loads {
					row := truthRow(l.Node)
					copy(buf.Row(l.Slot), row[:])
					group = append(group, l)
					if len(group) >= 1+r.IntN(8) {
						if r.IntN(4) == 0 {
							runtime.Gosched()
						}
						buf.MarkValid(group)
						group = group[:0]
					}
				}
				buf.MarkValid(group)
				if err := buf.Await(x); err != nil {
					setErr(err)
					continue
				}
				trainQ <- x
			}
		}(e)
	}
	go func() { extractors.Wait(); close(trainQ) }()

	trained := 0
	go func() {
		defer close(releaseQ)
		r := rand.New(rand.NewPCG(c.seed, 999))
		for x := range trainQ {
			for i, v := range x.IDs {
				got := buf.Row(x.Aliases[i])
				want := truthRow(v)
				if [fbDim]float32(got) != want {
					setErr(fmt.Errorf("trainer read %v for node %d (slot %d), want %v", got, v, x.Aliases[i], want))
				}
			}
			if r.IntN(5) == 0 {
				time.Sleep(time.Duration(r.IntN(50)) * time.Microsecond)
			}
			trained++
			releaseQ <- x
		}
	}()
	done := make(chan struct{})
	go func() {
		for x := range releaseQ {
			buf.Release(x.IDs)
		}
		close(done)
	}()

	select {
	case <-done:
	case <-time.After(60 * time.Second):
		st := buf.Stats()
		stack := make([]byte, 1<<20)
		stack = stack[:runtime.Stack(stack, true)]
		t.Fatalf("deadlock: pipeline did not finish in 60 s; stats %+v, refs %d\n%s", st, buf.References(), stack)
	}
	if firstErr != nil {
		return buf, firstErr
	}
	buf.mu.Lock()
	v := violation
	buf.mu.Unlock()
	if v != nil {
		return buf, v
	}
	if trained != per*c.samplers {
		return buf, fmt.Errorf("trained %d of %d batches", trained, per*c.samplers)
	}
	return buf, buf.CheckQuiescent()
}

func TestFeatureBufferStress(t *testing.T) {
	cases := []pipelineCfg{
		// minimal buffer: exactly the N_e × M_b reservation, batches up to M_b
		{nodes: 3000, slots: 4 * 60, extractors: 4, maxBatch: 60, batchMax: 60, batches: 400, samplers: 4, seed: 1},
		// a roomier buffer, more reuse
		{nodes: 3000, slots: 2000, extractors: 4, maxBatch: 60, batchMax: 60, batches: 400, samplers: 4, seed: 2},
		// one extractor, minimal buffer
		{nodes: 500, slots: 50, extractors: 1, maxBatch: 50, batchMax: 50, batches: 300, samplers: 2, seed: 3},
		// batches larger than the M_b the buffer was sized with: admission
		// keeps the extractions that run together within the buffer
		{nodes: 3000, slots: 4 * 30, extractors: 4, maxBatch: 30, batchMax: 110, batches: 300, samplers: 4, seed: 4},
		// many extractors contending on a small hot set
		{nodes: 400, slots: 8 * 40, extractors: 8, maxBatch: 40, batchMax: 40, batches: 500, samplers: 3, seed: 5},
	}
	if testing.Short() {
		for i := range cases {
			cases[i].batches /= 4
		}
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			buf, err := runBufferPipeline(t, c)
			if err != nil {
				t.Fatal(err)
			}
			st := buf.Stats()
			t.Logf("%+v", st)
			if st.Loads+st.Hits+st.Shared != st.Lookups {
				t.Fatalf("lookups %d != loads %d + hits %d + shared %d", st.Lookups, st.Loads, st.Hits, st.Shared)
			}
			if st.Hits == 0 {
				t.Fatal("no reuse at all: the test exercises nothing")
			}
		})
	}
}

func TestFeatureBufferReservation(t *testing.T) {
	_, err := NewFeatureBuffer(FeatureBufferConfig{Nodes: 100, Dim: 2, Slots: 4*10 - 1, Extractors: 4, MaxBatch: 10})
	if !errors.Is(err, ErrBufferTooSmall) {
		t.Fatalf("buffer below N_e × M_b: err = %v", err)
	}
	b, err := NewFeatureBuffer(FeatureBufferConfig{Nodes: 100, Dim: 2, Slots: 10, Extractors: 1, MaxBatch: 10})
	if err != nil {
		t.Fatal(err)
	}
	x := &Extraction{}
	x.Reset(make([]int64, 11))
	if err := b.Acquire(x); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("batch over the slot count: err = %v", err)
	}
	x.Reset([]int64{1, 200})
	if err := b.Acquire(x); err == nil {
		t.Fatal("node outside the graph accepted")
	}
	if b.References() != 0 {
		t.Fatalf("failed acquire left %d references", b.References())
	}
}

// TestFeatureBufferSequence walks Fig. 6's situations one by one.
func TestFeatureBufferSequence(t *testing.T) {
	b, err := NewFeatureBuffer(FeatureBufferConfig{Nodes: 10, Dim: 1, Slots: 3, Extractors: 1, MaxBatch: 3})
	if err != nil {
		t.Fatal(err)
	}
	load := func(ids ...int64) *Extraction {
		x := &Extraction{}
		x.Reset(ids)
		if err := b.Acquire(x); err != nil {
			t.Fatal(err)
		}
		for _, l := range x.Loads {
			b.Row(l.Slot)[0] = float32(l.Node)
		}
		b.MarkValid(x.Loads)
		if err := b.Await(x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	x := load(1, 2, 3)
	if len(x.Loads) != 3 || x.Hits != 0 {
		t.Fatalf("cold batch: %d loads %d hits", len(x.Loads), x.Hits)
	}
	b.Release(x.IDs)
	// 2 is still valid with refcount 0: reused, not read again.
	y := load(2, 4)
	if y.Hits != 1 || len(y.Loads) != 1 {
		t.Fatalf("second batch: %d hits %d loads", y.Hits, len(y.Loads))
	}
	// 4 took the LRU standby slot, which held node 1: node 1 is invalid now.
	if e := b.table.Get(1); e.Valid || e.Slot != -1 {
		t.Fatalf("node 1 after its slot was reused: %+v", e)
	}
	if e := b.table.Get(2); !e.Valid || e.Ref != 1 {
		t.Fatalf("node 2 pinned: %+v", e)
	}
	for i, v := range y.IDs {
		if b.Row(y.Aliases[i])[0] != float32(v) {
			t.Fatalf("alias of %d holds %v", v, b.Row(y.Aliases[i])[0])
		}
	}
	b.Release(y.IDs)
	if err := b.CheckQuiescent(); err != nil {
		t.Fatal(err)
	}
	// In-flight sharing: a second extraction of a node being loaded waits.
	x1 := &Extraction{}
	x1.Reset([]int64{7})
	if err := b.Acquire(x1); err != nil {
		t.Fatal(err)
	}
	x2 := &Extraction{}
	x2.Reset([]int64{7})
	if err := b.Acquire(x2); err != nil {
		t.Fatal(err)
	}
	if len(x2.Loads) != 0 || x2.Shared != 1 {
		t.Fatalf("second extraction of an in-flight node: %d loads, %d shared", len(x2.Loads), x2.Shared)
	}
	done := make(chan error)
	go func() { done <- b.Await(x2) }()
	select {
	case <-done:
		t.Fatal("Await returned before the node was valid")
	case <-time.After(20 * time.Millisecond):
	}
	b.Row(x1.Loads[0].Slot)[0] = 7
	b.MarkValid(x1.Loads)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if x2.Aliases[0] != x1.Aliases[0] {
		t.Fatalf("shared node aliased to %d and %d", x1.Aliases[0], x2.Aliases[0])
	}
	if err := b.Await(x1); err != nil {
		t.Fatal(err)
	}
	b.Release(x1.IDs)
	b.Release(x2.IDs)
	if err := b.CheckQuiescent(); err != nil {
		t.Fatal(err)
	}
	// Fail wakes a blocked extraction.
	x3 := &Extraction{}
	x3.Reset([]int64{8})
	if err := b.Acquire(x3); err != nil {
		t.Fatal(err)
	}
	x4 := &Extraction{}
	x4.Reset([]int64{8})
	if err := b.Acquire(x4); err != nil {
		t.Fatal(err)
	}
	go func() { done <- b.Await(x4) }()
	b.Fail(errors.New("disk on fire"))
	if err := <-done; err == nil {
		t.Fatal("Await after Fail returned nil")
	}
}
