//go:build !linux

package metrics

import (
	"runtime"
	"time"
)

// ReadThreadUsage is unavailable off Linux: zero counters.
func ReadThreadUsage() ThreadUsage { return ThreadUsage{} }

// StartThreadMeter locks the goroutine to its thread; off Linux only the
// wall time is measured.
func StartThreadMeter() ThreadMeter {
	runtime.LockOSThread()
	return ThreadMeter{t0: time.Now()}
}

// Stop ends the measurement: no reads and no CPU time are known here.
func (m ThreadMeter) Stop() (readBytes int64, cpu, wall time.Duration) {
	wall = time.Since(m.t0)
	runtime.UnlockOSThread()
	return 0, 0, wall
}
