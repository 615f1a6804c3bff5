package osutil

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// RunQueueWait is the time this process's live threads have spent runnable
// but not running, waiting for a CPU (the second field of
// /proc/self/task/*/schedstat, summed): how much the scheduler held the
// process back. The difference of two readings is the run-queue time of
// the span between them; a thread that exited in between takes its time
// out of the sum, so the difference can only be smaller (Go keeps its
// threads; io_uring workers come and go). A thread that exits while it
// reads is skipped.
func RunQueueWait() (time.Duration, error) {
	tasks, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no /proc/self/task/*/schedstat (kernel without CONFIG_SCHED_INFO?): %v", err)
	}
	var sum time.Duration
	read := 0
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited
		}
		_, rq, err := ParseSchedstat(b)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p, err)
		}
		sum += rq
		read++
	}
	if read == 0 {
		return 0, fmt.Errorf("read none of %d /proc/self/task/*/schedstat files", len(tasks))
	}
	return sum, nil
}
