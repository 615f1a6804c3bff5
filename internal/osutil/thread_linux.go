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
	b, _ := ThreadIO()
	return b
}

// ThreadIO is ThreadReadBytes and the calling OS thread's major page
// faults so far (getrusage(RUSAGE_THREAD) ru_majflt: faults that waited for
// a read, on a memory map or the binary), from one system call. Over a span
// in which the thread only copies from a memory map, readBytes / faults is
// what the kernel read per fault (the page and any readahead). ru_majflt
// can miss a read: a fault that waits for its read with the map's lock
// dropped is retried, and the retry, finding the page cached, counts as
// minor (under load, up to a third of cold faults here); the bytes are
// exact. The same locking rule as ThreadReadBytes applies.
func ThreadIO() (readBytes, majorFaults int64) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, 0
	}
	return ru.Inblock * 512, ru.Majflt
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
