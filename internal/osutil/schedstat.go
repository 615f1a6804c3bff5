package osutil

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// ParseSchedstat parses a /proc/PID/task/TID/schedstat line: the task's
// time on a CPU, its time runnable on a run queue but not running (waiting
// for a CPU), both in nanoseconds, and its timeslices.
func ParseSchedstat(b []byte) (onCPU, runQueue time.Duration, err error) {
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("schedstat %q: want at least 2 fields", b)
	}
	on, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("schedstat %q: on-CPU time: %w", b, err)
	}
	rq, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("schedstat %q: run-queue time: %w", b, err)
	}
	return time.Duration(on), time.Duration(rq), nil
}
