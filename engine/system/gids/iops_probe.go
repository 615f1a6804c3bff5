package gids

// Measuring the storage model's inputs (GIDS §3.2 and §4.2). The
// accumulator needs the device's peak IOPS and its latency; the paper
// measures them per SSD (1.5M IOPS and 11 µs for the Optane, 700K IOPS and
// 324 µs for the 980 Pro, 4 KB I/O) and the artifact takes them as
// arguments (--bw, --l_ssd, --l_system). Here a short probe at start reads
// random cache lines of features.bin with direct I/O: single reads at
// depth 1 give the latency, and many rings kept full give the IOPS. The
// same measurement at a chosen number of accesses in flight gives Fig. 8's
// "measured" line next to the model's.
//
// Stand-in: BaM's GPU threads post NVMe commands to the SSD's queues
// directly; here goroutines post io_uring reads (engine/storage, O_DIRECT),
// one ring per goroutine, so the latency measured includes a system call
// the GPU path does not make.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"outcore/engine/storage"
)

// Probe describes one measurement of random line reads.
type Probe struct {
	// Line is the size of one read (the cache line), a multiple of the
	// file's block size.
	Line int64
	// InFlight is the number of reads kept outstanding across all rings.
	InFlight int
	// Rings is the number of readers (io_uring rings), each driven by its
	// own goroutine; default min(InFlight, 4).
	Rings int
	// Reads is the number of reads to time (default 16 × InFlight, at
	// least 2048); MaxTime stops earlier (default 1 s).
	Reads   int
	MaxTime time.Duration
	// Seed chooses the offsets.
	Seed uint64
}

// ProbeResult is what one measurement saw.
type ProbeResult struct {
	InFlight int
	Reads    int64
	Elapsed  time.Duration
	// IOPS is Reads / Elapsed; BytesPerSec the same in bytes.
	IOPS        float64
	BytesPerSec float64
	// Latency is the median device latency of the reads (engine/storage's
	// histogram: issue to completion).
	Latency time.Duration
}

func (p *Probe) defaults() error {
	if p.Line <= 0 {
		return fmt.Errorf("gids: probe: line size %d, want > 0", p.Line)
	}
	if p.InFlight < 1 {
		return fmt.Errorf("gids: probe: %d reads in flight, want >= 1", p.InFlight)
	}
	if p.Rings <= 0 {
		p.Rings = min(p.InFlight, 4)
	}
	p.Rings = min(p.Rings, p.InFlight)
	if p.Reads <= 0 {
		p.Reads = max(16*p.InFlight, 2048)
	}
	if p.MaxTime <= 0 {
		p.MaxTime = time.Second
	}
	return nil
}

// MeasureIOPS keeps p.InFlight random line reads of the file at path
// outstanding until p.Reads have completed (or p.MaxTime passed) and
// reports the rate. opts are the run's storage options; the probe opens its
// own File with no merging beyond one line and rings deep enough for its
// share of the reads in flight.
func MeasureIOPS(ctx context.Context, path string, opts storage.Options, p Probe) (ProbeResult, error) {
	if err := p.defaults(); err != nil {
		return ProbeResult{}, err
	}
	perRing := (p.InFlight + p.Rings - 1) / p.Rings
	opts.RowBytes = 0
	opts.MaxMergeBytes = p.Line
	opts.QueueDepth = max(1, min(perRing, 4096))
	f, err := storage.OpenFile(path, opts)
	if err != nil {
		return ProbeResult{}, fmt.Errorf("gids: probe: %w", err)
	}
	defer f.Close()
	if p.Line%f.BlockSize() != 0 {
		return ProbeResult{}, fmt.Errorf("gids: probe: line %d B is not a multiple of the %d B block", p.Line, f.BlockSize())
	}
	lines := f.Size() / p.Line
	if lines < 1 {
		return ProbeResult{}, fmt.Errorf("gids: probe: %s is smaller than one %d B line", path, p.Line)
	}
	ctx, cancel := context.WithTimeout(ctx, p.MaxTime)
	defer cancel()
	var (
		mu    sync.Mutex
		left  = int64(p.Reads)
		done  int64
		first error
	)
	take := func(n int) int {
		mu.Lock()
		defer mu.Unlock()
		k := min(int64(n), left)
		left -= k
		return int(k)
	}
	var wg sync.WaitGroup
	t0 := time.Now()
	for ring := 0; ring < p.Rings; ring++ {
		share := p.InFlight / p.Rings
		if ring < p.InFlight%p.Rings {
			share++
		}
		wg.Add(1)
		go func(ring, share int) {
			defer wg.Done()
			n, err := probeRing(ctx, f, p.Line, lines, share, take, rand.New(rand.NewPCG(p.Seed, uint64(ring)+1)))
			mu.Lock()
			done += n
			if err != nil && first == nil && !errors.Is(err, context.DeadlineExceeded) {
				first = err
			}
			mu.Unlock()
		}(ring, share)
	}
	wg.Wait()
	elapsed := time.Since(t0)
	if first != nil {
		return ProbeResult{}, first
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return ProbeResult{}, err
	}
	st := f.Stats()
	r := ProbeResult{InFlight: p.InFlight, Reads: done, Elapsed: elapsed, Latency: st.Latency.Percentile(0.5)}
	if elapsed > 0 {
		r.IOPS = float64(done) / elapsed.Seconds()
		r.BytesPerSec = r.IOPS * float64(p.Line)
	}
	if done == 0 {
		return r, fmt.Errorf("gids: probe: no read completed within %v", p.MaxTime)
	}
	return r, nil
}

// probeRing keeps share reads outstanding on one reader until take hands
// out no more; it returns the reads completed.
func probeRing(ctx context.Context, f *storage.File, line, lines int64, share int, take func(int) int, rng *rand.Rand) (int64, error) {
	r, err := f.NewReader()
	if err != nil {
		return 0, err
	}
	bufs := make([][]byte, share)
	free := make([]int, 0, share)
	for i := range bufs {
		bufs[i] = make([]byte, line)
		free = append(free, i)
	}
	var (
		reqs  []storage.Request
		comps []storage.Completion
		done  int64
	)
	outstanding := 0
	for {
		if n := take(len(free)); n > 0 {
			reqs = reqs[:0]
			for _, b := range free[len(free)-n:] {
				reqs = append(reqs, storage.Request{Off: rng.Int64N(lines) * line, Dst: bufs[b], Tag: uint64(b)})
			}
			free = free[:len(free)-n]
			if err := r.Submit(reqs); err != nil {
				return done, errors.Join(err, r.Close())
			}
			outstanding += n
		}
		if outstanding == 0 {
			return done, r.Close()
		}
		comps, err = r.Reap(ctx, comps[:0], 1)
		for _, c := range comps {
			if c.Err != nil && err == nil {
				err = c.Err
			}
			free = append(free, int(c.Tag))
		}
		outstanding -= len(comps)
		done += int64(len(comps))
		if err != nil {
			return done, errors.Join(err, r.Close())
		}
	}
}

// MeasureLatency times n single line reads at depth 1 and returns their
// median (the device latency plus one system call).
func MeasureLatency(ctx context.Context, path string, opts storage.Options, line int64, n int, seed uint64) (time.Duration, error) {
	if line <= 0 || n < 1 {
		return 0, fmt.Errorf("gids: latency probe: line %d, reads %d", line, n)
	}
	opts.RowBytes = 0
	opts.MaxMergeBytes = line
	opts.QueueDepth = 1
	f, err := storage.OpenFile(path, opts)
	if err != nil {
		return 0, fmt.Errorf("gids: latency probe: %w", err)
	}
	defer f.Close()
	lines := f.Size() / line
	if lines < 1 {
		return 0, fmt.Errorf("gids: latency probe: %s is smaller than one %d B line", path, line)
	}
	r, err := f.NewReader()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(seed, 7))
	buf := make([]byte, line)
	lat := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := r.ReadRange(ctx, rng.Int64N(lines)*line, buf); err != nil {
			return 0, fmt.Errorf("gids: latency probe: %w", err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	return lat[len(lat)/2], nil
}

// ProbeModel measures the storage model of the file at path: the median
// latency of 64 single reads is T_i, the IOPS with inFlight reads
// outstanding over rings rings is IOP_peak (T_t starts at zero and is
// measured on the passes). ssds is N_ssd (the probe cannot tell devices
// apart).
func ProbeModel(ctx context.Context, path string, opts storage.Options, line int64, inFlight, rings, ssds int) (StorageModel, ProbeResult, error) {
	lat, err := MeasureLatency(ctx, path, opts, line, 64, 1)
	if err != nil {
		return StorageModel{}, ProbeResult{}, err
	}
	res, err := MeasureIOPS(ctx, path, opts, Probe{Line: line, InFlight: inFlight, Rings: rings, Seed: 2})
	if err != nil {
		return StorageModel{}, res, err
	}
	m := StorageModel{PeakIOPS: res.IOPS / float64(max(ssds, 1)), Initial: lat, SSDs: max(ssds, 1)}
	return m, res, m.Validate()
}
