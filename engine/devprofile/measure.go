package devprofile

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/storage"
	"outcore/internal/osutil"
	"outcore/internal/units"
	"outcore/internal/version"
)

// The measurement modes a profile records.
const (
	ModeShort = "short" // Ensure's, before a host's first run
	ModeFull  = "full"  // outcore bench device's
)

// Plan is what one measurement reads: random reads of each size at each
// depth, then sequential reads, each for Seconds, from a file of
// FileBytes on the storage measured.
type Plan struct {
	Mode      string
	FileBytes int64
	Seconds   float64
	Depths    []int
	Sizes     []int64 // random-read request sizes, bytes
	SeqBytes  int64   // the sequential measurement's request size
	SeqDepth  int
	// Rounds is how many times every measurement is taken, in whole
	// rounds one after another (0 and 1: once); each point keeps the
	// median of its rounds, so a disk whose rate moves from minute to
	// minute is not profiled by one slow (or fast) window.
	Rounds int
}

// MaxRounds bounds Plan.Rounds.
const MaxRounds = 9

// rounds is the plan's number of rounds, at least 1.
func (p Plan) rounds() int { return max(p.Rounds, 1) }

// The bounds Plan.Check holds a plan to.
const (
	// MinRequestBytes is the smallest request: direct I/O reads whole
	// logical blocks, and 512 B is the smallest of them.
	MinRequestBytes = 512
	// MaxRequestBytes is the largest request measured (engine/storage's
	// merged requests are at most a few hundred KiB).
	MaxRequestBytes = 64 << 20
	// MaxDepth is the most requests in flight (an io_uring queue's
	// entries; devices queue far fewer).
	MaxDepth = 4096
	// MaxInFlightBytes bounds depth × request size: the buffers the reads
	// land in.
	MaxInFlightBytes = 1 << 30
	// MaxSeconds bounds one measurement.
	MaxSeconds = 600
	// MinFileBytes is the smallest probe file.
	MinFileBytes = 1 << 20
)

// ShortPlan is Ensure's measurement, a few seconds on a host's first run:
// the request sizes the I/O floor classes (metrics.RequestClassBytes) at
// depth 64, where this kind of device reaches its most IOPS, and the
// sequential bandwidth, one second each, from a 256 MiB file.
func ShortPlan() Plan {
	return Plan{Mode: ModeShort, FileBytes: 256 << 20, Seconds: 1, Depths: []int{64},
		Sizes: []int64{512, 4096, 16384, 65536, 262144}, SeqBytes: 1 << 20, SeqDepth: 8}
}

// FullPlan is outcore bench device's default measurement.
func FullPlan() Plan {
	return Plan{Mode: ModeFull, FileBytes: 1 << 30, Seconds: 2, Depths: []int{1, 4, 8, 16, 64},
		Sizes: []int64{512, 4096, 16384, 65536, 262144, 1 << 20}, SeqBytes: 1 << 20, SeqDepth: 8, Rounds: 3}
}

// Check refuses a plan whose numbers cannot measure the device: each error
// names the setting (as bench device's flag) and what it must be.
func (p Plan) Check() error {
	var errs []string
	if p.Mode != ModeShort && p.Mode != ModeFull {
		errs = append(errs, fmt.Sprintf("mode %q, want %s or %s", p.Mode, ModeShort, ModeFull))
	}
	if !(p.Seconds > 0) || p.Seconds > MaxSeconds {
		errs = append(errs, fmt.Sprintf("--seconds %v, want more than 0 and at most %d", p.Seconds, MaxSeconds))
	}
	if len(p.Depths) == 0 {
		errs = append(errs, "--depths: none")
	}
	for _, d := range p.Depths {
		if d < 1 || d > MaxDepth {
			errs = append(errs, fmt.Sprintf("--depths: %d, want 1 to %d", d, MaxDepth))
		}
	}
	if len(p.Sizes) == 0 {
		errs = append(errs, "--sizes: none")
	}
	maxReq := p.SeqBytes
	for _, s := range p.Sizes {
		if err := checkRequest(s); err != nil {
			errs = append(errs, "--sizes: "+err.Error())
		}
		maxReq = max(maxReq, s)
		for _, d := range p.Depths {
			if int64(d)*s > MaxInFlightBytes {
				errs = append(errs, fmt.Sprintf("--sizes %d at --depths %d: %s in flight, want at most %s", s, d, units.Bytes(int64(d)*s), units.Bytes(MaxInFlightBytes)))
			}
		}
	}
	if err := checkRequest(p.SeqBytes); err != nil {
		errs = append(errs, "--seq-bytes: "+err.Error())
	}
	if p.SeqDepth < 1 || p.SeqDepth > MaxDepth {
		errs = append(errs, fmt.Sprintf("--seq-depth %d, want 1 to %d", p.SeqDepth, MaxDepth))
	} else if int64(p.SeqDepth)*p.SeqBytes > MaxInFlightBytes {
		errs = append(errs, fmt.Sprintf("--seq-bytes %d at --seq-depth %d: %s in flight, want at most %s", p.SeqBytes, p.SeqDepth, units.Bytes(int64(p.SeqDepth)*p.SeqBytes), units.Bytes(MaxInFlightBytes)))
	}
	if p.Rounds < 0 || p.Rounds > MaxRounds {
		errs = append(errs, fmt.Sprintf("--rounds %d, want 1 to %d", p.Rounds, MaxRounds))
	}
	if p.FileBytes < MinFileBytes || p.FileBytes < 4*maxReq {
		errs = append(errs, fmt.Sprintf("--size %s, want at least %s and 4 of the largest request (%s)", units.Bytes(p.FileBytes), units.Bytes(MinFileBytes), units.Bytes(maxReq)))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func checkRequest(n int64) error {
	switch {
	case n < MinRequestBytes || n > MaxRequestBytes:
		return fmt.Errorf("%d B, want %d B to %s", n, MinRequestBytes, units.Bytes(MaxRequestBytes))
	case n%MinRequestBytes != 0:
		return fmt.Errorf("%d B, want a multiple of %d B (direct I/O reads whole blocks)", n, MinRequestBytes)
	}
	return nil
}

// Steps is how many progress steps Measure reports for the plan.
func (p Plan) Steps() int { return 1 + p.rounds()*(len(p.Sizes)*len(p.Depths)+1) }

// Measure measures the storage holding dir by the plan: it writes a probe
// file there (removed afterwards), reads it with io_uring and O_DIRECT,
// and returns the profile, named by this host and dir's file system.
// progress, when not nil, hears each step and each measurement's result.
func Measure(ctx context.Context, plan Plan, dir string, progress func(Progress)) (*metrics.DeviceProfile, error) {
	f, err := os.CreateTemp(dir, ".outcore-probe-*.bin")
	if err != nil {
		return nil, fmt.Errorf("create the probe file: %w", err)
	}
	file := f.Name()
	f.Close()
	defer os.Remove(file)
	return MeasureFile(ctx, plan, file, progress)
}

// MeasureFile is Measure reading file, which it writes first (plan.FileBytes
// of random bytes) unless it has that size already.
func MeasureFile(ctx context.Context, plan Plan, file string, progress func(Progress)) (*metrics.DeviceProfile, error) {
	if err := plan.Check(); err != nil {
		return nil, err
	}
	say := func(step int, what string) {
		if progress != nil {
			progress(Progress{Step: step, Steps: plan.Steps(), What: what})
		}
	}
	say(1, fmt.Sprintf("writing the %s probe file %s", units.Bytes(plan.FileBytes), file))
	if err := EnsureFile(file, plan.FileBytes); err != nil {
		return nil, err
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	host := osutil.CollectHost(file)
	dev, _ := osutil.DeviceID(file)
	storageID, err := osutil.FileSystemID(file)
	if err != nil {
		return nil, err
	}
	p := &metrics.DeviceProfile{Hostname: host.Hostname, Device: dev, Storage: storageID, FSType: osutil.FileSystemType(file),
		DiskModel: host.DiskModel, File: file, FileBytes: fi.Size(), Mode: plan.Mode,
		MeasuredAt: time.Now().UTC().Format(time.RFC3339), Version: version.String(), Cores: host.Cores,
		SeqRequestBytes: plan.SeqBytes, SeqDepth: plan.SeqDepth}
	p.LoadAvg[0], _ = metrics.ReadLoad1()
	dur := time.Duration(plan.Seconds * float64(time.Second))
	rounds := plan.rounds()
	type window struct {
		iops, p50, p99 float64
	}
	points := make([][]window, len(plan.Sizes)*len(plan.Depths))
	var seq []float64
	step := 1
	for r := range rounds {
		round := ""
		if rounds > 1 {
			round = fmt.Sprintf(" (round %d of %d)", r+1, rounds)
		}
		for i, sz := range plan.Sizes {
			for j, d := range plan.Depths {
				step++
				say(step, fmt.Sprintf("randread %d B depth %d%s", sz, d, round))
				n, st, sec, err := Reads(ctx, file, sz, d, dur, false)
				if err != nil {
					return nil, fmt.Errorf("measure %d B reads at depth %d: %w", sz, d, err)
				}
				if n == 0 {
					return nil, fmt.Errorf("measure %d B reads at depth %d: none finished in %v", sz, d, dur)
				}
				k := i*len(plan.Depths) + j
				points[k] = append(points[k], window{iops: float64(n) / sec,
					p50: float64(st.Latency.Percentile(0.5)) / 1e3, p99: float64(st.Latency.Percentile(0.99)) / 1e3})
			}
		}
		step++
		say(step, fmt.Sprintf("read %d B depth %d (sequential)%s", plan.SeqBytes, plan.SeqDepth, round))
		n, _, sec, err := Reads(ctx, file, plan.SeqBytes, plan.SeqDepth, dur, true)
		if err != nil {
			return nil, fmt.Errorf("measure sequential reads: %w", err)
		}
		seq = append(seq, float64(n*plan.SeqBytes)/sec)
	}
	for i, sz := range plan.Sizes {
		for j, d := range plan.Depths {
			ws := points[i*len(plan.Depths)+j]
			// the median round's window, latencies included
			sort.Slice(ws, func(a, b int) bool { return ws[a].iops < ws[b].iops })
			m := ws[(len(ws)-1)/2]
			pt := metrics.IOPSPoint{Bytes: sz, Depth: d, IOPS: m.iops, P50us: m.p50, P99us: m.p99}
			if rounds > 1 {
				for _, w := range ws {
					pt.IOPSRounds = append(pt.IOPSRounds, w.iops)
				}
			}
			p.Random = append(p.Random, pt)
		}
	}
	sort.Float64s(seq)
	p.SeqBytesPerS = seq[(len(seq)-1)/2]
	if rounds > 1 {
		p.Rounds, p.SeqRounds = rounds, seq
	}
	p.LoadAvg[1], _ = metrics.ReadLoad1()
	if err := p.Check(); err != nil {
		return nil, err
	}
	return p, nil
}

// EnsureFile writes size random bytes to path unless a file of that size
// is there, makes it durable and drops it from the page cache.
func EnsureFile(path string, size int64) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() == size {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := osutil.NewSeqWriter(f)
	rng := rand.NewChaCha8([32]byte{'o', 'u', 't', 'c', 'o', 'r', 'e'})
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(buf)) {
		_, _ = rng.Read(buf)
		if _, err = w.Write(buf[:min(left, int64(len(buf)))]); err != nil {
			break
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err // each names the file
}

// Reads keeps depth reads of reqBytes in flight on file through io_uring
// with O_DIRECT for dur (random rows, or in file order when seq) and
// returns how many finished, the file's stats and the seconds.
//
// It measures the device the way fio does: one OS thread owns a ring set
// up as fio's (storage.Options.SingleIssuer), and every request is its own
// device read (SeparateReads: no two requests ever become one), resubmitted
// one per Submit as it is reaped (fio's iodepth_batch_submit=1). With the engine's
// default ring a reaper woke only once the whole queue had finished, so
// the device queue drained to empty before each refill (docs/benchmarks/
// storage.md, "completion convoys").
func Reads(ctx context.Context, file string, reqBytes int64, depth int, dur time.Duration, seq bool) (int64, storage.Stats, float64, error) {
	return ReadsWith(ctx, storage.BackendUring, file, reqBytes, depth, dur, seq)
}

// ReadsWith is Reads through backend: storage.BackendUring as Reads, or
// storage.BackendPread, where depth worker threads each block in one
// pread(2) at a time (O_DIRECT): synchronous reads from depth threads,
// the thread-per-request model GNNDrive's Appendix B sets against one
// thread's io_uring queue (outcore bench sync).
func ReadsWith(ctx context.Context, backend storage.Backend, file string, reqBytes int64, depth int, dur time.Duration, seq bool) (int64, storage.Stats, float64, error) {
	if backend != storage.BackendUring && backend != storage.BackendPread {
		return 0, storage.Stats{}, 0, fmt.Errorf("reads through %s: want %s or %s", backend, storage.BackendUring, storage.BackendPread)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f, err := storage.OpenFile(file, storage.Options{Backend: backend, RowBytes: reqBytes, QueueDepth: depth, Workers: depth,
		MaxMergeBytes: max(reqBytes, storage.DefaultMaxMergeBytes), SeparateReads: true,
		SingleIssuer: backend == storage.BackendUring, Logger: func(string) {}})
	if err != nil {
		return 0, storage.Stats{}, 0, err
	}
	defer f.Close()
	if f.Rows() == 0 {
		return 0, storage.Stats{}, 0, fmt.Errorf("%s holds no whole request of %d bytes", file, reqBytes)
	}
	r, err := f.NewReader()
	if err != nil {
		return 0, storage.Stats{}, 0, err
	}
	start := time.Now()
	deadline := start.Add(dur)
	rng := rand.New(rand.NewPCG(1, uint64(reqBytes)))
	next := func() int64 { return rng.Int64N(f.Rows()) }
	if seq {
		var i int64
		next = func() int64 { i++; return (i - 1) % f.Rows() }
	}
	n, err := StreamReads(ctx, f, r, next, depth, 1, deadline)
	sec := min(time.Since(start), dur).Seconds()
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return n, f.Stats(), sec, err
}

// StreamReads keeps depth row requests in flight until the deadline
// (rows from next) and returns how many finished before it. Each reaped
// batch is resubmitted submitBatch requests per Submit (0: all in one),
// so with 1 the first finished slot is back on the device before the
// rest of the batch is handled, as fio's default iodepth_batch_submit=1.
func StreamReads(ctx context.Context, f *storage.File, r storage.Reader, next func() int64, depth, submitBatch int, deadline time.Time) (int64, error) {
	rb := f.RowBytes()
	buf := make([]byte, int64(depth)*rb)
	reqs := make([]storage.Request, 0, depth)
	for slot := range depth {
		reqs = append(reqs, f.RowRequest(next(), buf[int64(slot)*rb:], uint64(slot)))
	}
	if err := r.Submit(reqs); err != nil {
		return 0, err
	}
	var done []storage.Completion
	var n int64
	var err error
	for {
		if done, err = r.Reap(ctx, done[:0], 1); err != nil {
			return n, err
		}
		if time.Now().After(deadline) {
			break
		}
		reqs = reqs[:0]
		for _, c := range done {
			if c.Err != nil {
				return n, c.Err
			}
			reqs = append(reqs, f.RowRequest(next(), buf[int64(c.Tag)*rb:], c.Tag))
		}
		n += int64(len(done))
		for left := reqs; len(left) > 0; {
			k := len(left)
			if submitBatch > 0 {
				k = min(k, submitBatch)
			}
			if err := r.Submit(left[:k]); err != nil {
				return n, err
			}
			left = left[k:]
		}
	}
	for r.Outstanding() > 0 {
		if done, err = r.Reap(ctx, done[:0], r.Outstanding()); err != nil {
			return n, err
		}
	}
	return n, nil
}
