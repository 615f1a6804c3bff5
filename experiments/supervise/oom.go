package supervise

import (
	"syscall"

	"outcore/engine/metrics"
)

// Ending is what is known about how a child ended, as IsOOM needs it.
type Ending struct {
	// OOMKills is the group's oom-kill count (0 without a group).
	OOMKills int64
	// Enforced: a memory cgroup held the child under a limit.
	Enforced bool
	// Signal is the signal that ended the child (0 when it exited).
	Signal syscall.Signal
	// Summary is the outcome of the child's summary record ("" when it
	// wrote none).
	Summary string
	// KilledBySupervisor: the supervisor sent SIGKILL (a stop whose grace
	// ran out), so a SIGKILL death is no evidence of the limit.
	KilledBySupervisor bool
}

// IsOOM is the one OOM rule of outcore: the run ended by its memory limit
// when
//   - the child did not finish (no summary with outcome done), and
//   - the kernel's OOM killer acted in the child's group (oom-kill count
//     > 0), or the child itself reported outcome oom, or it died of a
//     SIGKILL under an enforced limit without writing a summary and not by
//     the supervisor's hand (kernels whose v1 groups keep no oom_kill
//     count, or a kill the count missed).
func IsOOM(e Ending) bool {
	switch e.Summary {
	case metrics.OutcomeDone:
		return false
	case metrics.OutcomeOOM:
		return true
	}
	if e.OOMKills > 0 {
		return true
	}
	return e.Summary == "" && e.Enforced && e.Signal == syscall.SIGKILL && !e.KilledBySupervisor
}
