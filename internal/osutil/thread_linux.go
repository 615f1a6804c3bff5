package osutil

import (
	"time"

	"golang.org/x/sys/unix"
)

// ThreadReadBytes is the bytes the calling OS thread has caused to be read
// from a block device so far: getrusage(RUSAGE_THREAD) ru_inblock × 512,
// the thread's share of /proc/self/io read_bytes (page faults on memory
// maps, buffered and direct reads it submitted; counted at submission).
// A difference of two readings means something only while the goroutine
// stays locked to its thread in between (runtime.LockOSThread).
func ThreadReadBytes() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return ru.Inblock * 512
}

// ThreadCPU is the calling OS thread's CPU time (user + system,
// CLOCK_THREAD_CPUTIME_ID: exact to the nanosecond, where getrusage's
// times lag by up to a scheduler tick).
func ThreadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
