package helios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"outcore/engine/sample"
)

// memStages is a pipeline over an in-memory graph whose "feature" of node
// v is v+1: each hop's reads run on a goroutine of their own (the
// asynchronous I/O), Complete waits for them, Train checks every row.
type memStages struct {
	t        *testing.T
	samplers []*sample.Sampler
	batches  [][]int64

	mu       sync.Mutex
	log      []string
	open     int // batches begun and not ended
	maxOpen  int
	trained  []int
	fetched  map[int]int // batch → rows fetched
	hop0     map[int]chan struct{}
	waitNext bool // Train(i) waits for batch i+1's first hop
	failAt   int  // Hop of this batch fails (-1: none)
	onTrain  func(b *Batch) error
}

type memJob struct {
	x  []int64
	wg sync.WaitGroup
}

func newMemStages(t *testing.T, preparers, nBatches int) *memStages {
	r := rand.New(rand.NewPCG(1, 2))
	n := 3000
	indptr := []int64{0}
	var idx []int64
	for v := 0; v < n; v++ {
		for k := r.IntN(12); k > 0; k-- {
			idx = append(idx, int64(r.IntN(n)))
		}
		indptr = append(indptr, int64(len(idx)))
	}
	topo := sample.Topology{Indptr: indptr, Indices: sample.MemIndices(idx)}
	s, err := sample.New(topo, []int{4, 3}, 7)
	if err != nil {
		t.Fatal(err)
	}
	m := &memStages{t: t, fetched: map[int]int{}, hop0: map[int]chan struct{}{}, failAt: -1}
	for w := 0; w < preparers; w++ {
		m.samplers = append(m.samplers, s.Clone())
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	m.batches = sample.EpochBatches(ids, 50, 7, 0)[:nBatches]
	for i := range m.batches {
		m.hop0[i] = make(chan struct{})
	}
	return m
}

func (m *memStages) event(format string, a ...any) {
	m.mu.Lock()
	m.log = append(m.log, fmt.Sprintf(format, a...))
	m.mu.Unlock()
}

func (m *memStages) Begin(b *Batch) error {
	m.mu.Lock()
	m.open++
	m.maxOpen = max(m.maxOpen, m.open)
	m.mu.Unlock()
	// the batch buffer is allocated at its largest (50 seeds, fanouts 4, 3)
	// so that later hops never move rows earlier hops are reading into
	b.Job = &memJob{x: make([]int64, 0, 50*(1+4+12))}
	m.event("begin %d", b.Index)
	return nil
}

func (m *memStages) Sample(w int, b *Batch, onHop sample.HopFunc) error {
	return m.samplers[w].SampleHops(&b.MB, 0, b.Index, m.batches[b.Index], onHop)
}

func (m *memStages) Hop(b *Batch, hop, first int, nodes []int64) error {
	if b.Index == m.failAt && hop == 1 {
		return errors.New("injected hop failure")
	}
	j := b.Job.(*memJob)
	m.event("hop %d.%d", b.Index, hop)
	if hop == 0 {
		close(m.hop0[b.Index])
	}
	need := first + len(nodes)
	if need > cap(j.x) {
		return fmt.Errorf("batch %d: %d input nodes exceed the buffer", b.Index, need)
	}
	j.x = j.x[:max(len(j.x), need)]
	ids := slices.Clone(nodes)
	dst := j.x[first:need]
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		time.Sleep(time.Millisecond)
		for i, v := range ids {
			dst[i] = v + 1
		}
		m.mu.Lock()
		m.fetched[b.Index] += len(ids)
		m.mu.Unlock()
	}()
	return nil
}

func (m *memStages) Complete(ctx context.Context, b *Batch) error {
	b.Job.(*memJob).wg.Wait()
	return nil
}

func (m *memStages) Train(b *Batch) error {
	j := b.Job.(*memJob)
	if len(j.x) != len(b.MB.InputNodes) {
		return fmt.Errorf("batch %d: %d rows for %d input nodes", b.Index, len(j.x), len(b.MB.InputNodes))
	}
	for i, v := range b.MB.InputNodes {
		if j.x[i] != v+1 {
			return fmt.Errorf("batch %d row %d: feature of %d, want %d", b.Index, i, j.x[i]-1, v)
		}
	}
	if m.waitNext && b.Index+1 < len(m.batches) {
		select {
		case <-m.hop0[b.Index+1]:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("batch %d trained without batch %d being prepared meanwhile", b.Index, b.Index+1)
		}
	}
	if m.onTrain != nil {
		if err := m.onTrain(b); err != nil {
			return err
		}
	}
	m.event("train %d", b.Index)
	m.mu.Lock()
	m.trained = append(m.trained, b.Index)
	m.mu.Unlock()
	return nil
}

func (m *memStages) End(b *Batch) {
	b.Job.(*memJob).wg.Wait()
	m.mu.Lock()
	m.open--
	m.mu.Unlock()
}

func (m *memStages) check(n int) {
	m.t.Helper()
	if len(m.trained) != n {
		m.t.Fatalf("trained %d of %d batches", len(m.trained), n)
	}
	for i, b := range m.trained {
		if b != i {
			m.t.Fatalf("trained out of order: %v", m.trained)
		}
	}
	if m.open != 0 {
		m.t.Fatalf("%d batches never ended", m.open)
	}
}

func TestDeepPipelineOverlapsBatchesAndHops(t *testing.T) {
	const n = 12
	m := newMemStages(t, 2, n)
	m.waitNext = true
	ps, err := RunPipeline(context.Background(), PipelineConfig{On: true, Preparers: 2, Depth: 3}, n, m)
	if err != nil {
		t.Fatal(err)
	}
	m.check(n)
	if m.maxOpen > 3 {
		t.Fatalf("%d batches open at once with depth 3", m.maxOpen)
	}
	if ps.Hops != 3*n || ps.EarlyHops != 2*n || ps.Ahead < 1 {
		t.Fatalf("stats %+v", ps)
	}
	// within a batch, hops are submitted in order, all before training
	for i := 0; i < n; i++ {
		pos := func(e string) int { return slices.Index(m.log, e) }
		h0, h1, h2, tr := pos(fmt.Sprintf("hop %d.0", i)), pos(fmt.Sprintf("hop %d.1", i)), pos(fmt.Sprintf("hop %d.2", i)), pos(fmt.Sprintf("train %d", i))
		if !(h0 >= 0 && h0 < h1 && h1 < h2 && h2 < tr) {
			t.Fatalf("batch %d: events at %d %d %d %d in %v", i, h0, h1, h2, tr, m.log)
		}
	}
	for i := 0; i < n; i++ {
		if got, want := m.fetched[i], len(m.batches[i]); got < want {
			t.Fatalf("batch %d fetched %d rows", i, got)
		}
	}
}

func TestPipelineOffRunsOperatorsSerially(t *testing.T) {
	const n = 6
	m := newMemStages(t, 1, n)
	ps, err := RunPipeline(context.Background(), PipelineConfig{On: false}, n, m)
	if err != nil {
		t.Fatal(err)
	}
	m.check(n)
	if m.maxOpen != 1 || ps.Hops != n || ps.EarlyHops != 0 {
		t.Fatalf("max open %d, stats %+v", m.maxOpen, ps)
	}
	// one submission per batch, after sampling; the next batch begins
	// after this one trained
	for i := 0; i+1 < n; i++ {
		if slices.Index(m.log, fmt.Sprintf("train %d", i)) > slices.Index(m.log, fmt.Sprintf("begin %d", i+1)) {
			t.Fatalf("batch %d began before batch %d trained: %v", i+1, i, m.log)
		}
	}
}

func TestPipelineFailureEndsEveryBatch(t *testing.T) {
	m := newMemStages(t, 2, 10)
	m.failAt = 4
	_, err := RunPipeline(context.Background(), PipelineConfig{On: true, Preparers: 2, Depth: 4}, 10, m)
	if err == nil || err.Error() != "injected hop failure" {
		t.Fatalf("error %v", err)
	}
	if m.open != 0 {
		t.Fatalf("%d batches left open", m.open)
	}
	if len(m.trained) > 4 {
		t.Fatalf("trained past the failed batch: %v", m.trained)
	}
	if _, err := RunPipeline(context.Background(), PipelineConfig{On: true, Preparers: 0, Depth: 1}, 1, m); err == nil {
		t.Fatal("zero preparers accepted")
	}
}

// A trained batch is not kept by the pipeline: its mini-batch can be
// collected while the epoch goes on (an epoch's batches would otherwise
// all stay in memory).
func TestPipelineDropsTrainedBatches(t *testing.T) {
	const n = 8
	m := newMemStages(t, 1, n)
	var collected atomic.Int32
	m.onTrain = func(b *Batch) error {
		runtime.SetFinalizer(b, func(*Batch) { collected.Add(1) })
		if b.Index < 5 {
			return nil
		}
		// batches 0..2 are done; nothing may hold them
		for i := 0; i < 50 && collected.Load() < 3; i++ {
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
		if c := collected.Load(); c < 3 {
			return fmt.Errorf("training batch %d: only %d earlier batches collected", b.Index, c)
		}
		return nil
	}
	if _, err := RunPipeline(context.Background(), PipelineConfig{On: true, Preparers: 1, Depth: 2}, n, m); err != nil {
		t.Fatal(err)
	}
}
