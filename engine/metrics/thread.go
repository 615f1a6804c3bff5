package metrics

import (
	"runtime"
	"time"

	"outcore/internal/osutil"
)

// ThreadMeter measures one goroutine, locked to its OS thread, over a span
// (StartThreadMeter ... Stop): the device reads its thread causes and its
// CPU time (internal/osutil ThreadReadBytes, ThreadCPU).
type ThreadMeter struct {
	t0    time.Time
	read0 int64
	cpu0  time.Duration
}

// StartThreadMeter locks the calling goroutine to its OS thread and starts
// measuring it; Stop unlocks it. Every device read the thread causes in
// between (a page fault included) and all of its CPU time belong to the
// goroutine: this is how a memory-mapped access is attributed to its file
// and a worker's busy time is told from its blocked time (DESIGN §5).
func StartThreadMeter() ThreadMeter { return StartThreadMeterSince(time.Now()) }

// StartThreadMeterSince is StartThreadMeter with the wall time counted
// from t0, when the work was handed to the goroutine: the time it waited to
// be scheduled is wall time too (not CPU time).
func StartThreadMeterSince(t0 time.Time) ThreadMeter {
	runtime.LockOSThread()
	return ThreadMeter{t0: t0, read0: osutil.ThreadReadBytes(), cpu0: osutil.ThreadCPU()}
}

// Stop ends the measurement and unlocks the goroutine: bytes read from the
// device by the thread, its CPU time and the wall time since the start.
func (m ThreadMeter) Stop() (readBytes int64, cpu, wall time.Duration) {
	read, c := osutil.ThreadReadBytes(), osutil.ThreadCPU()
	wall = time.Since(m.t0)
	runtime.UnlockOSThread()
	cpu = max(0, min(c-m.cpu0, wall))
	return read - m.read0, cpu, wall
}
