//go:build !linux

package metrics

import (
	"runtime"
	"time"
)

// ReadThreadUsage is unavailable off Linux: zero counters.
func ReadThreadUsage() ThreadUsage { return ThreadUsage{} }

// ThreadReadBytes is unavailable off Linux: 0.
func ThreadReadBytes() int64 { return 0 }

// StartThreadMeter locks the goroutine to its thread; off Linux only the
// wall time is measured.
func StartThreadMeter() ThreadMeter { return StartThreadMeterSince(time.Now()) }

// StartThreadMeterSince is StartThreadMeter with the wall time counted
// from t0.
func StartThreadMeterSince(t0 time.Time) ThreadMeter {
	runtime.LockOSThread()
	return ThreadMeter{t0: t0}
}

// Stop ends the measurement: no reads and no CPU time are known here.
func (m ThreadMeter) Stop() (readBytes int64, cpu, wall time.Duration) {
	wall = time.Since(m.t0)
	runtime.UnlockOSThread()
	return 0, 0, wall
}
