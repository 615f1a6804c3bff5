package metrics

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// ReadThreadUsage returns what the calling OS thread has done so far: the
// bytes it caused to be read from a block device (getrusage(RUSAGE_THREAD)
// ru_inblock × 512, the thread's share of /proc/self/io read_bytes: page
// faults on memory-mapped files, buffered and direct reads it submitted;
// counted when submitted) and its CPU time (user + system,
// CLOCK_THREAD_CPUTIME_ID: exact to the nanosecond, where getrusage's times
// lag by up to a scheduler tick). A difference of two readings means
// something only while the goroutine is locked to its thread in between
// (ThreadMeter does that).
func ReadThreadUsage() ThreadUsage {
	return ThreadUsage{ReadBytes: ThreadReadBytes(), CPU: threadCPU()}
}

// ThreadReadBytes is ReadThreadUsage's ReadBytes alone (one system call).
func ThreadReadBytes() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return ru.Inblock * 512
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
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
	return ThreadMeter{t0: t0, u0: ReadThreadUsage()}
}

// Stop ends the measurement and unlocks the goroutine: bytes read from the
// device by the thread, its CPU time and the wall time since the start.
func (m ThreadMeter) Stop() (readBytes int64, cpu, wall time.Duration) {
	u := ReadThreadUsage()
	wall = time.Since(m.t0)
	runtime.UnlockOSThread()
	cpu = min(u.CPU-m.u0.CPU, wall)
	return u.ReadBytes - m.u0.ReadBytes, max(cpu, 0), wall
}
