package gids

// The dynamic storage access accumulator (GIDS §3.2, Eq. 2–3; artifact
// GIDS.py set_required_storage_access and fetch_feature).
//
// A feature-aggregation pass over the SSD has three stages: the initial
// stage T_i (start of aggregation until the first data arrives), the steady
// stage T_s (the device at its peak IOPS) and the termination stage T_t
// (last completion until the pass ends). Keeping the device at a fraction p
// of its peak needs
//
//	N_access = IOP_achieved · (T_i + T_s + T_t) · N_ssd        (Eq. 2)
//	T_s      = N_access / IOP_peak                             (Eq. 3)
//
// accesses in flight; with IOP_achieved = p · IOP_peak this solves to
//
//	N_access = p · IOP_peak · (T_i + T_t) · N_ssd / (1 − p),
//
// which is the artifact's formula (bw·1024/page_size is IOP_peak per µs,
// l_ssd + l_system is T_i + T_t). Inverting it gives the bandwidth the model
// expects with n accesses in flight (Fig. 8):
//
//	IOPS(n) = IOP_peak · N_ssd · n / (n + IOP_peak · (T_i + T_t) · N_ssd).
//
// The accumulator merges the feature aggregation of consecutive iterations
// until the merged iterations hold more than N_access accesses. Accesses
// redirected to the constant CPU buffer or the GPU software cache do not
// reach the SSD, so the threshold grows by the redirected accesses per
// iteration measured on the previous merged group (the artifact adds
// prev_cpu_access per merged iteration; the paper says "redirected to
// CPU/GPU memory", so both are counted here). T_i and T_t are measured on
// every group (first completion after the first submission; last
// completion to the end of the pass), so the threshold grows and shrinks
// with the device's measured latency.

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// StorageModel is the Eq. 2–3 model of one storage configuration.
type StorageModel struct {
	// PeakIOPS is IOP_peak: the most requests per second one SSD completes.
	PeakIOPS float64
	// Initial is T_i: from the start of aggregation to the first data
	// (device latency plus the submission software's own).
	Initial time.Duration
	// Termination is T_t: from the last completion to the end of the pass.
	Termination time.Duration
	// SSDs is N_ssd.
	SSDs int
}

// Validate reports a model that cannot be used, naming the field.
func (m StorageModel) Validate() error {
	switch {
	case !(m.PeakIOPS > 0) || math.IsInf(m.PeakIOPS, 0):
		return fmt.Errorf("gids: storage model: peak IOPS %v, want a positive number", m.PeakIOPS)
	case m.Initial < 0 || m.Termination < 0:
		return fmt.Errorf("gids: storage model: negative latency (T_i %v, T_t %v)", m.Initial, m.Termination)
	case m.Initial+m.Termination <= 0:
		return errors.New("gids: storage model: T_i + T_t must be positive")
	case m.SSDs < 1:
		return fmt.Errorf("gids: storage model: %d SSDs, want >= 1", m.SSDs)
	}
	return nil
}

// latencyS is T_i + T_t in seconds.
func (m StorageModel) latencyS() float64 { return (m.Initial + m.Termination).Seconds() }

// Required is N_access for a target fraction p (0 < p < 1) of the peak
// IOPS: p · IOP_peak · (T_i + T_t) · N_ssd / (1 − p).
func (m StorageModel) Required(p float64) float64 {
	if !(p > 0 && p < 1) {
		return math.NaN()
	}
	return p * m.PeakIOPS * m.latencyS() * float64(m.SSDs) / (1 - p)
}

// ExpectedIOPS is the IOPS the model predicts with n accesses in flight
// across all SSDs (Fig. 8's "model" line).
func (m StorageModel) ExpectedIOPS(n float64) float64 {
	if n <= 0 {
		return 0
	}
	peak := m.PeakIOPS * float64(m.SSDs)
	return peak * n / (n + peak*m.latencyS())
}

// Accumulator decides how many iterations to merge into one feature
// aggregation pass. It is not safe for concurrent use; the loader that
// forms groups owns it.
type Accumulator struct {
	model  StorageModel
	target float64
	on     bool
	// redirected is the mean number of accesses per iteration served by
	// the CPU buffer or the GPU cache in the last observed group.
	redirected float64
	groups     int64
}

// NewAccumulator returns an accumulator for target fraction p of the peak.
// With on false it merges nothing (one iteration per pass), as GIDS does
// when the accumulator is disabled.
func NewAccumulator(m StorageModel, p float64, on bool) (*Accumulator, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if !(p > 0 && p < 1) {
		return nil, fmt.Errorf("gids: accumulator target %v of the peak, want 0 < p < 1", p)
	}
	return &Accumulator{model: m, target: p, on: on}, nil
}

// Model returns the current storage model.
func (a *Accumulator) Model() StorageModel { return a.model }

// On reports whether the accumulator merges iterations.
func (a *Accumulator) On() bool { return a.on }

// Required is the Eq. 2 threshold N_access of the current model.
func (a *Accumulator) Required() float64 { return a.model.Required(a.target) }

// Threshold is the number of accesses k merged iterations must exceed:
// N_access plus the redirected accesses expected for k iterations.
func (a *Accumulator) Threshold(k int) float64 {
	return a.Required() + float64(k)*a.redirected
}

// Enough reports whether k iterations holding accesses node accesses in
// total fill one pass. Without the accumulator one iteration always does.
func (a *Accumulator) Enough(accesses int64, k int) bool {
	if k < 1 {
		return false
	}
	if !a.on {
		return true
	}
	return float64(accesses) > a.Threshold(k)
}

// Observe records a finished pass of k merged iterations: redirected
// accesses were served by the CPU buffer or the GPU cache, initial is the
// measured T_i (first submission to first completion; 0 when the pass read
// nothing from storage, which keeps the previous T_i) and termination the
// measured T_t (last completion to the end of the pass). Latencies are
// smoothed over passes (each new measure weighs one half).
func (a *Accumulator) Observe(k int, redirected int64, initial, termination time.Duration) {
	if k < 1 {
		return
	}
	a.redirected = float64(redirected) / float64(k)
	if initial > 0 {
		a.model.Initial = smooth(a.model.Initial, initial, a.groups)
		if termination >= 0 {
			a.model.Termination = smooth(a.model.Termination, termination, a.groups)
		}
		a.groups++
	}
}

// smooth moves old halfway to measured, or replaces it on the first measure.
func smooth(old, measured time.Duration, n int64) time.Duration {
	if n == 0 {
		return measured
	}
	return (old + measured) / 2
}
