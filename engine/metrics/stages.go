package metrics

import (
	"math"
	"sort"
	"sync"
	"time"
)

// Stage names with their own EpochRecord fields. Any other name passed to
// EpochStats.Add lands in EpochRecord.Stages under that name; use the
// "<stage>_s" form ("inspect_s", "switch_s", "prep_s", "forward_s", ...).
const (
	StageSample  = "sample_s"
	StageExtract = "extract_s"
	StageTrain   = "train_s"
	StageStall   = "stall_s"
	// StageForward and StageBackward split StageTrain; they go into Stages.
	StageForward  = "forward_s"
	StageBackward = "backward_s"
)

// EpochStats accumulates one epoch's measurements while a system runs it.
// All methods are safe for concurrent use, so sampling workers, extractors
// and the trainer of a pipelined variant can record into one EpochStats.
// Stage times from concurrent workers add up (they are busy time, and may sum
// to more than the epoch's wall time); the spans of the sample, extract and
// train stages also give the epoch's wall-clock breakdown (wall.go), which
// does not.
type EpochStats struct {
	mu          sync.Mutex
	origin      time.Time
	spans       [wallClasses][]span
	wallAs      map[string]string
	stages      map[string]time.Duration
	tiers       map[string]TierCount
	counters    map[string]int64
	batches     int
	bytesNeeded int64
	rowsShared  int64
	rowsDevice  int64 // rows from the device a variant reported (AddRowsFromDevice)
	unaccounted int64 // rows of Lookup calls that no tier served
	busy, wait  [2]time.Duration
	lossSum     float64
	correct     int64
	seen        int64
	first, last time.Time
}

// NewEpochStats returns an empty EpochStats.
func NewEpochStats() *EpochStats {
	return &EpochStats{stages: map[string]time.Duration{}, tiers: map[string]TierCount{}, origin: time.Now()}
}

// Add adds d to stage name, a call that ended now: for sample_s,
// extract_s and train_s, the span [now-d, now] also counts as that stage
// in progress for the wall-clock breakdown (wall.go). A total gathered
// over many calls goes through AddTotal instead.
func (s *EpochStats) Add(name string, d time.Duration) {
	now := time.Now()
	s.mu.Lock()
	s.stages[name] += d
	if c := s.wallClassOf(name); c >= 0 {
		b := int64(now.Sub(s.origin))
		s.spans[c] = addSpan(s.spans[c], b-int64(d), b)
	}
	s.mu.Unlock()
}

// AddSpan adds t1-t0 to stage name, the call from t0 to t1 (Add for a
// call timed earlier than now).
func (s *EpochStats) AddSpan(name string, t0, t1 time.Time) {
	s.mu.Lock()
	s.stages[name] += t1.Sub(t0)
	if c := s.wallClassOf(name); c >= 0 {
		s.spans[c] = addSpan(s.spans[c], int64(t0.Sub(s.origin)), int64(t1.Sub(s.origin)))
	}
	s.mu.Unlock()
}

// AddTotal adds d to stage name without a span: for totals a variant sums
// over many calls itself and reports once (their spans go through Span).
func (s *EpochStats) AddTotal(name string, d time.Duration) {
	s.mu.Lock()
	s.stages[name] += d
	s.mu.Unlock()
}

// Span marks stage name (sample_s or extract_s) as in progress from t0 to
// t1 for the wall-clock breakdown without adding time to it: for a variant
// that reports the stage's seconds as a total (AddTotal).
func (s *EpochStats) Span(name string, t0, t1 time.Time) {
	s.mu.Lock()
	c := s.wallClassOf(name)
	if c < 0 {
		s.mu.Unlock()
		return
	}
	s.spans[c] = addSpan(s.spans[c], int64(t0.Sub(s.origin)), int64(t1.Sub(s.origin)))
	s.mu.Unlock()
}

// Time starts timing stage name and returns the function that stops it:
// `defer ep.Time(metrics.StageSample)()`.
func (s *EpochStats) Time(name string) func() {
	t0 := time.Now()
	return func() { s.Add(name, time.Since(t0)) }
}

// Stage returns the time accumulated so far in stage name.
func (s *EpochStats) Stage(name string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stages[name]
}

// AddTier counts feature lookups served (hits) by a cache tier (Tier* names).
func (s *EpochStats) AddTier(tier string, lookups, hits int64) {
	s.mu.Lock()
	c := s.tiers[tier]
	c.Lookups += lookups
	c.Hits += hits
	s.tiers[tier] = c
	s.mu.Unlock()
}

// Count adds n to the variant-specific counter name (EpochRecord.Counters).
func (s *EpochStats) Count(name string, n int64) {
	s.mu.Lock()
	if s.counters == nil {
		s.counters = map[string]int64{}
	}
	s.counters[name] += n
	s.mu.Unlock()
}

// TierRows is how many of a batch's rows one tier served (Lookup).
type TierRows struct {
	Tier string // a Tier* name
	Rows int64
}

// Lookup accounts one batch's feature lookups, the same way for every
// variant (DESIGN §5): rows is the batch's input rows, each looked up once;
// tiers are the rows each memory or cache tier served, in lookup order
// (fastest first); shared is the rows another batch had in flight, which
// this batch waited for instead of reading (rows_shared_in_flight, in no
// tier's hits). Every other row is a miss everywhere: the "device" tier
// (read from the features file for this batch). A tier's lookups are the
// rows that reached it, so hits/lookups is its own hit ratio, and the
// first tier's lookups are the batch's rows. bytes_needed grows by rows ×
// rowBytes. Rows the tiers and shared over-count are recorded as the
// counter "rows_unaccounted" (a bug in the caller; tests check it is
// absent).
func (s *EpochStats) Lookup(rows, rowBytes, shared int64, tiers ...TierRows) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bytesNeeded += rows * rowBytes
	left := rows
	for _, t := range tiers {
		c := s.tiers[t.Tier]
		c.Lookups += left
		c.Hits += t.Rows
		s.tiers[t.Tier] = c
		left -= t.Rows
	}
	s.rowsShared += shared
	left -= shared
	if left < 0 {
		if s.counters == nil {
			s.counters = map[string]int64{}
		}
		s.counters["rows_unaccounted"] += -left
		left = 0
	}
	if left > 0 || len(tiers) == 0 {
		c := s.tiers[TierDevice]
		c.Lookups += left
		c.Hits += left
		s.tiers[TierDevice] = c
	}
}

// AddRowsFromDevice counts feature rows read from the device that no
// engine/storage row read or measured memory map counted: rows a variant
// reads as byte ranges of its own files (packed chunks, partitions) and
// reports itself (rows_from_device).
func (s *EpochStats) AddRowsFromDevice(n int64) {
	s.mu.Lock()
	s.rowsDevice += n
	s.mu.Unlock()
}

// Worker stages with busy and wait fields in EpochRecord.
const (
	WorkSample  = 0 // sample_busy_s, sample_wait_s
	WorkExtract = 1 // extract_busy_s, extract_wait_s
)

// Worker is one running worker of a stage, timed by StartWorker.
type Worker struct {
	s     *EpochStats
	stage int
	m     ThreadMeter
}

// StartWorker starts timing one worker of stage (WorkSample, WorkExtract)
// on the calling goroutine, which stays locked to its OS thread until
// Stop. Call it where the worker starts belonging to the stage (a pool
// worker's start, a gather's start) and Stop where it stops: the thread's
// CPU time in between is busy, the rest wait (DESIGN §5).
func (s *EpochStats) StartWorker(stage int) Worker {
	return Worker{s: s, stage: stage, m: StartThreadMeter()}
}

// StartWorkerSince is StartWorker for a goroutine that was handed its work
// at t0 (when it was started): the time it waited to run counts as wait.
func (s *EpochStats) StartWorkerSince(stage int, t0 time.Time) Worker {
	return Worker{s: s, stage: stage, m: StartThreadMeterSince(t0)}
}

// Stop ends the worker's span and adds its busy and wait time. It returns
// the bytes the thread read from the device in the span.
func (w Worker) Stop() (readBytes int64) {
	rb, cpu, wall := w.m.Stop()
	w.s.AddWorkerTime(w.stage, cpu, wall-cpu)
	return rb
}

// AddWorkerTime adds busy and wait time of a stage's workers measured
// elsewhere (e.g. threads inside a C call).
func (s *EpochStats) AddWorkerTime(stage int, busy, wait time.Duration) {
	if stage < 0 || stage > 1 {
		return
	}
	s.mu.Lock()
	s.busy[stage] += busy
	s.wait[stage] += wait
	s.mu.Unlock()
}

// AddBytesNeeded counts feature bytes a batch actually used (rows × row
// size). Lookup does it for variants that account their lookups there.
func (s *EpochStats) AddBytesNeeded(n int64) {
	s.mu.Lock()
	s.bytesNeeded += n
	s.mu.Unlock()
}

// BatchStarted marks that a batch started; the first call fixes the start of
// the epoch's wall time (epoch_s).
func (s *EpochStats) BatchStarted() {
	now := time.Now()
	s.mu.Lock()
	if s.first.IsZero() {
		s.first = now
	}
	s.mu.Unlock()
}

// BatchDone records one trained batch: its mean loss, and how many of its n
// seeds were predicted correctly. It also moves the end of the epoch's wall
// time to now.
func (s *EpochStats) BatchDone(loss float64, correct, n int) {
	now := time.Now()
	s.mu.Lock()
	if s.first.IsZero() {
		s.first = now
	}
	s.last = now
	s.batches++
	s.lossSum += loss * float64(n)
	s.correct += int64(correct)
	s.seen += int64(n)
	s.mu.Unlock()
}

// Batches is the number of batches recorded by BatchDone.
func (s *EpochStats) Batches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.batches
}

// Fill writes the accumulated values into rec: stage seconds, batches, tiers,
// bytes_needed, rows_shared_in_flight, the rows from the device a variant
// reported itself, busy and wait seconds, epoch_s, train_loss
// (seed-weighted mean) and train_acc. It leaves the device reads (the run
// loop adds the ReadAccount's), accuracies of evaluation and wall_s to the
// caller.
func (s *EpochStats) Fill(rec *EpochRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Type = TypeEpoch
	if !s.first.IsZero() && s.last.After(s.first) {
		lo, hi := int64(s.first.Sub(s.origin)), int64(s.last.Sub(s.origin))
		rec.EpochS = time.Duration(hi - lo).Seconds()
		w := wallBreakdown(s.spans, lo, hi)
		rec.WallSampleS, rec.WallLoadS, rec.WallTrainS, rec.WallStallS = w.Sample, w.Load, w.Train, w.Stall
	}
	names := make([]string, 0, len(s.stages))
	for k := range s.stages {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := s.stages[k].Seconds()
		switch k {
		case StageSample:
			rec.SampleS = v
		case StageExtract:
			rec.ExtractS = v
		case StageTrain:
			rec.TrainS = v
		case StageStall:
			rec.StallS = v
		default:
			if rec.Stages == nil {
				rec.Stages = map[string]float64{}
			}
			rec.Stages[k] = v
		}
	}
	rec.Batches = s.batches
	if len(s.tiers) > 0 {
		rec.Tiers = make(map[string]TierCount, len(s.tiers))
		for k, v := range s.tiers {
			rec.Tiers[k] = v
		}
	}
	if len(s.counters) > 0 {
		rec.Counters = make(map[string]int64, len(s.counters))
		for k, v := range s.counters {
			rec.Counters[k] = v
		}
	}
	rec.BytesNeeded = s.bytesNeeded
	rec.RowsSharedInFlight = s.rowsShared
	rec.RowsFromDevice = s.rowsDevice
	rec.SampleBusyS, rec.SampleWaitS = s.busy[WorkSample].Seconds(), s.wait[WorkSample].Seconds()
	rec.ExtractBusyS, rec.ExtractWaitS = s.busy[WorkExtract].Seconds(), s.wait[WorkExtract].Seconds()
	if s.seen > 0 {
		rec.TrainLoss = s.lossSum / float64(s.seen)
		rec.TrainAcc = float64(s.correct) / float64(s.seen)
	}
}

// ReadAmplification is featureBytesRead / (rowsFromDevice × rowBytes):
// the device bytes one feature row read from the device costs (DESIGN §5);
// 0 when no row came from the device.
func ReadAmplification(featureBytesRead, rowsFromDevice, rowBytes int64) float64 {
	return ratio(featureBytesRead, rowsFromDevice*rowBytes)
}

// BytesReadPerNeeded is bytesRead / bytesNeeded, what read_amplification
// meant in records before metrics version 2 (every file read, over every
// row looked up, cache hits included); 0 when nothing was needed.
func BytesReadPerNeeded(bytesRead, bytesNeeded int64) float64 {
	return ratio(bytesRead, bytesNeeded)
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	r := float64(a) / float64(b)
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return 0
	}
	return r
}
