package report

import (
	"sort"
	"sync"

	"outcore/engine/metrics"
	"outcore/engine/metrics/fields"
	"outcore/store"
)

// Digest is what the comparison views use of one run's epochs, computed
// once: means over the steady (non-warm-up) epochs — or over every epoch
// when all are warm-up — tier and byte counts, and the accuracy curve.
type Digest struct {
	Epochs int // epochs reported
	Steady int // epochs the means and sums are over
	// Mean holds the means of the digested fields (engine/metrics/fields:
	// those with Mean, each over the steady epochs that measured it, so a
	// field newer than every epoch has none), of the variant stages, and
	// of the variant counters (CounterPrefix + name).
	Mean   map[string]float64
	Stages []string // variant-specific stage names, sorted
	Tiers  map[string]metrics.TierCount
	// CacheHits are lookups served by a memory tier (metrics.MemoryTier:
	// not the device, not a disk-resident tier such as DiskGNN's packed
	// chunks or MariusGNN's partition buffer); Lookups are those of the
	// tier that saw them all (the largest count).
	CacheHits, Lookups     float64
	BytesRead, BytesNeeded float64
	BestVal, TestAtBest    float64 // best validation accuracy and the test accuracy at that epoch
	Curve                  []CurvePoint
	// Measured is the steady epochs recorded with metrics version 2 or
	// later (DESIGN §5); only they have the device reads by file kind,
	// rows from the device, rows shared in flight and busy/wait (the
	// fields of Since 2), whose means are in Mean only when Measured > 0.
	Measured int
	// WallMeasured is the steady epochs recorded with metrics version 3 or
	// later, which have the wall-clock stages (DESIGN §5, "Stage
	// vocabulary"); their means are in Mean only when WallMeasured > 0.
	WallMeasured int
	// BusyEpochs is the epochs measured on a busy host
	// or a disk slower than its profile (metrics.EpochBusyReasons of their
	// host_pressure and disk_service, DESIGN §5).
	BusyEpochs int
	// Warm is how many of the Steady epochs are warm: not the run's first
	// epoch, which starts cold (its dataset evicted from the page cache,
	// its caches empty). A run's means are warm when Warm == Steady, cold
	// when Warm == 0 (a single-epoch run: its one epoch counts as steady).
	Warm int
	// FeatureBytes and DeviceRowBytes sum feature_bytes_read and
	// rows_from_device × row size over those epochs that read rows from
	// the device: their ratio is the run's read amplification.
	FeatureBytes, DeviceRowBytes float64
}

// Amplification is the run's read amplification, feature bytes read per
// byte of the rows read from the device (DESIGN §5), over its steady
// epochs recorded with metrics version 2; false when there are none or no
// row came from the device.
func (d *Digest) Amplification() (float64, bool) {
	if d == nil || d.Measured == 0 || d.DeviceRowBytes == 0 {
		return 0, false
	}
	return d.FeatureBytes / d.DeviceRowBytes, true
}

// CurvePoint is one epoch on the time-to-accuracy curve.
type CurvePoint struct {
	Epoch  int
	WallS  float64
	ValAcc float64
}

// standardStages are the stage fields every epoch record has.
var standardStages = []string{"sample_s", "extract_s", "train_s", "stall_s"}

// CounterPrefix starts the key in Digest.Mean of a variant's epoch counter
// (metrics.EpochRecord.Counters: "counter_io_requests",
// "counter_partition_loads"), as the epoch CSV names its column: the mean
// per steady epoch, an epoch without it counting 0. A study may compare it
// (its metric).
const CounterPrefix = "counter_"

// DigestEpochs summarises a run's epochs; nil for none.
func DigestEpochs(eps []metrics.EpochRecord) *Digest {
	if len(eps) == 0 {
		return nil
	}
	d := &Digest{Epochs: len(eps), Mean: map[string]float64{}, Tiers: map[string]metrics.TierCount{}}
	anySteady := false
	for _, e := range eps {
		anySteady = anySteady || !e.Warmup
	}
	extra := map[string]bool{}
	// the means of the digested fields (engine/metrics/fields), each over
	// the steady epochs that measured it
	means := fields.Means()
	sums, counts := make([]float64, len(means)), make([]int, len(means))
	seenEval := false
	for _, e := range eps {
		if len(metrics.EpochBusyReasons(e)) > 0 {
			d.BusyEpochs++
		}
		if Evaluated(e) {
			if !seenEval || e.ValAcc > d.BestVal {
				d.BestVal, d.TestAtBest = e.ValAcc, e.TestAcc
			}
			seenEval = true
			d.Curve = append(d.Curve, CurvePoint{Epoch: e.Epoch, WallS: e.WallS, ValAcc: e.ValAcc})
		}
		if anySteady && e.Warmup {
			continue
		}
		d.Steady++
		if e.Epoch > 0 {
			d.Warm++
		}
		for i, f := range means {
			if v, ok := f.Value(&e); ok {
				sums[i] += v
				counts[i]++
			}
		}
		for k, v := range e.Stages {
			d.Mean[k] += v
			extra[k] = true
		}
		for k, v := range e.Counters {
			d.Mean[CounterPrefix+k] += float64(v)
		}
		var most int64
		for tier, t := range e.Tiers {
			c := d.Tiers[tier]
			c.Hits += t.Hits
			c.Lookups += t.Lookups
			d.Tiers[tier] = c
			if metrics.MemoryTier(tier) {
				d.CacheHits += float64(t.Hits)
			}
			most = max(most, t.Lookups)
		}
		d.Lookups += float64(most)
		d.BytesRead += float64(e.BytesRead)
		d.BytesNeeded += float64(e.BytesNeeded)
		if e.MetricsVersion >= metrics.WallStagesVersion {
			d.WallMeasured++
		}
		if e.MetricsVersion >= 2 {
			d.Measured++
			if e.ReadAmplification > 0 {
				// amplification = feature bytes / (rows × row size)
				d.FeatureBytes += float64(e.FeatureBytesRead)
				d.DeviceRowBytes += float64(e.FeatureBytesRead) / e.ReadAmplification
			}
		}
	}
	for k := range d.Mean { // the variant stages and counters: over every steady epoch
		d.Mean[k] /= float64(d.Steady)
	}
	for i, f := range means {
		if counts[i] > 0 {
			d.Mean[f.Key] += sums[i] / float64(counts[i]) // a variant stage of the same name adds to it, as it always did
		}
	}
	for k := range extra {
		if !contains(standardStages, k) {
			d.Stages = append(d.Stages, k)
		}
	}
	sort.Strings(d.Stages)
	return d
}

// Evaluated reports whether an epoch's accuracies are measurements: the
// record says so, or (records stored without the flag) it spent time
// evaluating or has an accuracy. Epochs skipped by eval_every have neither.
func Evaluated(e metrics.EpochRecord) bool {
	return e.Evaluated || e.EvalS > 0 || e.ValAcc != 0 || e.TestAcc != 0
}

// HitRatio is the share of lookups a memory tier served, DESIGN §5's one
// definition for every variant (false without lookups).
func (d *Digest) HitRatio() (float64, bool) {
	if d == nil || d.Lookups == 0 {
		return 0, false
	}
	return d.CacheHits / d.Lookups, true
}

// DigestCache keeps the digests of finished runs, whose epochs no longer
// change, so an experiment's charts read each finished run's epochs once.
// A nil *DigestCache caches nothing. It is safe for concurrent use.
type DigestCache struct {
	mu  sync.Mutex
	max int
	m   map[int64]cachedDigest
}

type cachedDigest struct {
	epochs int // the run's epoch count when digested: a mismatch means stale
	fills  int // the run's io_floor_fills when digested: so does a mismatch here
	d      *Digest
}

// NewDigestCache keeps up to max digests (about half are forgotten when full).
func NewDigestCache(max int) *DigestCache {
	return &DigestCache{max: max, m: map[int64]cachedDigest{}}
}

// get returns a finished run's digest if it is cached and current.
func (c *DigestCache) get(r store.Run) (*Digest, bool) {
	if c == nil || !store.Finished(r.Status) {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cd, ok := c.m[r.ID]
	if !ok || cd.epochs != r.EpochsDone || cd.fills != r.IOFloorFills {
		return nil, false
	}
	return cd.d, true
}

// put keeps a finished run's digest.
func (c *DigestCache) put(r store.Run, d *Digest) {
	if c == nil || !store.Finished(r.Status) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		n := 0
		for k := range c.m { // forget about half, in map order
			if n++; n > c.max/2 {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[r.ID] = cachedDigest{epochs: r.EpochsDone, fills: r.IOFloorFills, d: d}
}

// Epoch kinds of a run's means (Digest.EpochKind).
const (
	EpochsWarm  = "warm"
	EpochsCold  = "cold"
	EpochsMixed = "cold and warm"
)

// EpochKind says which epochs the means are over: EpochsWarm (none is the
// run's first), EpochsCold (only its first) or EpochsMixed.
func (d *Digest) EpochKind() string {
	switch {
	case d == nil || d.Warm == 0:
		return EpochsCold
	case d.Warm == d.Steady:
		return EpochsWarm
	}
	return EpochsMixed
}

// Quiet reports whether no epoch of the run was measured on a busy host.
func (d *Digest) Quiet() bool { return d != nil && d.BusyEpochs == 0 }
