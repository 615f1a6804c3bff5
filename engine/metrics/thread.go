package metrics

import "time"

// ThreadUsage is one reading of an OS thread's counters (ReadThreadUsage).
type ThreadUsage struct {
	ReadBytes int64         // bytes the thread caused to be read from a block device
	CPU       time.Duration // user + system CPU time
}

// ThreadMeter measures one goroutine, locked to its OS thread, over a span
// (StartThreadMeter ... Stop).
type ThreadMeter struct {
	t0 time.Time
	u0 ThreadUsage
}
