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
// to more than the epoch's wall time).
type EpochStats struct {
	mu          sync.Mutex
	stages      map[string]time.Duration
	tiers       map[string]TierCount
	counters    map[string]int64
	batches     int
	bytesNeeded int64
	lossSum     float64
	correct     int64
	seen        int64
	first, last time.Time
}

// NewEpochStats returns an empty EpochStats.
func NewEpochStats() *EpochStats {
	return &EpochStats{stages: map[string]time.Duration{}, tiers: map[string]TierCount{}}
}

// Add adds d to stage name.
func (s *EpochStats) Add(name string, d time.Duration) {
	s.mu.Lock()
	s.stages[name] += d
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

// AddBytesNeeded counts feature bytes a batch actually used (rows × row size).
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
// bytes_needed, epoch_s, train_loss (seed-weighted mean) and train_acc. It
// leaves bytes_read, accuracies of evaluation and wall_s to the caller.
func (s *EpochStats) Fill(rec *EpochRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Type = TypeEpoch
	if !s.first.IsZero() && s.last.After(s.first) {
		rec.EpochS = s.last.Sub(s.first).Seconds()
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
	if s.seen > 0 {
		rec.TrainLoss = s.lossSum / float64(s.seen)
		rec.TrainAcc = float64(s.correct) / float64(s.seen)
	}
}

// ReadAmplification is bytesRead/bytesNeeded, 0 when nothing was needed.
func ReadAmplification(bytesRead, bytesNeeded int64) float64 {
	if bytesNeeded <= 0 {
		return 0
	}
	r := float64(bytesRead) / float64(bytesNeeded)
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return 0
	}
	return r
}
