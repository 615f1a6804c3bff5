package slurm

// The life cycle of a Slurm run, mapped both ways (docs/ARCHITECTURE.md
// "Executors"): Slurm's job states (squeue %T, scontrol JobState, sacct
// State) become a phase of the run while it lasts and an outcome of the
// store when it ends. JobOutcome is a pure function of what Slurm says,
// what the run's own records said (the summary's outcome) and whether
// outcore asked for the cancel; slurm_state_test.go is its table.

import (
	"fmt"
	"strconv"
	"strings"

	"outcore/store"
)

// JobInfo is what Slurm reports about one job.
type JobInfo struct {
	ID    string
	Name  string
	State string // normalised: upper case, first word ("CANCELLED by 0" -> "CANCELLED")
	// Node is the node list the job runs or ran on ("" while pending).
	Node string
	// Reason is Slurm's reason for the state (pending reason, or the
	// failure's), "" or "None" when there is none.
	Reason string
	// ExitCode is Slurm's "status:signal" pair ("0:0", "1:0", "0:9");
	// "" when the source does not report it (squeue).
	ExitCode string
	// Restarts counts requeues (scontrol Restarts); -1 when unknown.
	Restarts int
	// Known is false when neither squeue, scontrol nor sacct knows the job
	// any more (purged from the controller, no accounting).
	Known bool
}

// JobPhase is where a run's Slurm job is.
type JobPhase int

const (
	// PhasePending: the job waits for resources (or was requeued and
	// waits again). The run's status stays running (it left outcore's
	// queue); the run page shows the Slurm state.
	PhasePending JobPhase = iota
	// PhaseRunning: the job runs (or completes, or is suspended).
	PhaseRunning
	// PhaseEnded: the job has a final state; Outcome says how the run ended.
	PhaseEnded
)

func (p JobPhase) String() string {
	switch p {
	case PhasePending:
		return "pending"
	case PhaseRunning:
		return "running"
	case PhaseEnded:
		return "ended"
	}
	return fmt.Sprintf("JobPhase(%d)", int(p))
}

// JobMapping is JobOutcome's answer.
type JobMapping struct {
	Phase JobPhase
	// Outcome is a store outcome when Phase is PhaseEnded.
	Outcome string
	// Reason explains a failed, oom or cancelled outcome, or a requeue.
	Reason string
	// Requeued is set for the states of a job Slurm put back in its queue.
	Requeued bool
}

// pendingStates and runningStates are Slurm's non-final job states
// (squeue(1) "JOB STATE CODES").
var (
	pendingStates = map[string]bool{"PENDING": true, "REQUEUED": true, "REQUEUE_FED": true, "REQUEUE_HOLD": true,
		"RESV_DEL_HOLD": true}
	runningStates = map[string]bool{"CONFIGURING": true, "RUNNING": true, "COMPLETING": true, "SUSPENDED": true,
		"STOPPED": true, "SIGNALING": true, "STAGE_OUT": true, "RESIZING": true}
)

// NormalizeJobState turns a state as squeue, scontrol or sacct write it
// into the bare upper-case name: "CANCELLED by 1000" -> "CANCELLED",
// "completed+" -> "COMPLETED".
func NormalizeJobState(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		s = s[:i]
	}
	return strings.ToUpper(strings.TrimRight(s, "+*"))
}

// ParseExitCode splits Slurm's "status:signal" exit code. ok is false for
// anything else ("" included).
func ParseExitCode(s string) (status, signal int, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(s), ":")
	if !found {
		return 0, 0, false
	}
	st, err1 := strconv.Atoi(a)
	sg, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || st < 0 || sg < 0 {
		return 0, 0, false
	}
	return st, sg, true
}

// JobOutcome maps a job's Slurm state to the run's phase and, once the job
// has ended, its outcome. summary is the outcome of the run's summary
// record ("" without one) and summaryErr its error; cancelRequested says
// that outcore (the dashboard's or the CLI's cancel) asked Slurm to cancel
// the job. Rules, in order:
//   - an unknown job (purged, no accounting) has ended as its summary says,
//     failed without one;
//   - pending and running states keep the run running;
//   - COMPLETED is done, unless the summary says oom or failed;
//   - OUT_OF_MEMORY (Slurm's own memory enforcement) is oom, and so is any
//     final state whose summary says oom (the run's own cgroup);
//   - CANCELLED is cancelled when outcore asked for it, else failed: a job
//     cancelled behind outcore's back (scancel, an administrator,
//     `scancel --signal=KILL`) did not finish its run;
//   - FAILED, TIMEOUT, DEADLINE, NODE_FAIL, BOOT_FAIL, PREEMPTED,
//     SPECIAL_EXIT, REVOKED are failed, with the reason named.
//
// An unrecognised state keeps the run running: a newer Slurm's state is
// shown, not guessed at.
func JobOutcome(j JobInfo, summary, summaryErr string, cancelRequested bool) JobMapping {
	state := NormalizeJobState(j.State)
	where := ""
	if j.Node != "" {
		where = " on " + j.Node
	}
	job := fmt.Sprintf("Slurm job %s", j.ID)
	exit := exitText(j.ExitCode)
	why := func(m string) string {
		if summaryErr != "" {
			return m + ": " + summaryErr
		}
		return m
	}
	if !j.Known {
		switch summary {
		case store.StatusDone:
			return JobMapping{Phase: PhaseEnded, Outcome: store.StatusDone}
		case store.StatusOOM:
			return JobMapping{Phase: PhaseEnded, Outcome: store.StatusOOM, Reason: why(job + " ran out of memory")}
		case "":
			return JobMapping{Phase: PhaseEnded, Outcome: store.StatusFailed,
				Reason: job + " is no longer known to squeue, scontrol or sacct, and the run wrote no summary record"}
		}
		return JobMapping{Phase: PhaseEnded, Outcome: store.StatusFailed, Reason: why(fmt.Sprintf("%s ended (%s)", job, summary))}
	}
	switch {
	case pendingStates[state]:
		m := JobMapping{Phase: PhasePending}
		if state != "PENDING" {
			m.Requeued, m.Reason = true, fmt.Sprintf("%s was requeued by Slurm (%s)", job, state)
		}
		return m
	case runningStates[state]:
		return JobMapping{Phase: PhaseRunning}
	}
	end := func(outcome, reason string) JobMapping {
		return JobMapping{Phase: PhaseEnded, Outcome: outcome, Reason: reason}
	}
	if summary == store.StatusOOM && state != "CANCELLED" {
		return end(store.StatusOOM, why(fmt.Sprintf("%s%s: the run's memory cgroup ran out of memory (Slurm state %s%s)", job, where, state, exit)))
	}
	switch state {
	case "COMPLETED":
		if summary == store.StatusFailed {
			return end(store.StatusFailed, why(fmt.Sprintf("%s%s completed but the run failed", job, where)))
		}
		return end(store.StatusDone, "")
	case "OUT_OF_MEMORY":
		return end(store.StatusOOM, fmt.Sprintf("%s%s exceeded its Slurm memory request (Slurm state OUT_OF_MEMORY%s)", job, where, exit))
	case "CANCELLED":
		if cancelRequested {
			return end(store.StatusCancelled, fmt.Sprintf("cancelled while running (%s cancelled with scancel)", job))
		}
		return end(store.StatusFailed, fmt.Sprintf("%s%s was cancelled in Slurm outside outcore (scancel by a user or an administrator%s)", job, where, exit))
	case "FAILED":
		return end(store.StatusFailed, why(fmt.Sprintf("%s%s failed%s", job, where, exit)))
	case "TIMEOUT":
		return end(store.StatusFailed, fmt.Sprintf("%s%s reached its Slurm time limit (TIMEOUT)", job, where))
	case "DEADLINE":
		return end(store.StatusFailed, fmt.Sprintf("%s%s reached its deadline (DEADLINE)", job, where))
	case "NODE_FAIL":
		return end(store.StatusFailed, fmt.Sprintf("%s: node%s failed (NODE_FAIL%s)", job, orNone(j.Node), reasonText(j.Reason)))
	case "BOOT_FAIL":
		return end(store.StatusFailed, fmt.Sprintf("%s: node%s failed to boot (BOOT_FAIL%s)", job, orNone(j.Node), reasonText(j.Reason)))
	case "PREEMPTED":
		return end(store.StatusFailed, fmt.Sprintf("%s%s was preempted and not requeued (PREEMPTED)", job, where))
	case "SPECIAL_EXIT":
		return end(store.StatusFailed, why(fmt.Sprintf("%s%s ended in SPECIAL_EXIT%s", job, where, exit)))
	case "REVOKED":
		return end(store.StatusFailed, fmt.Sprintf("%s was revoked (it ran on another cluster of a federation)", job))
	}
	return JobMapping{Phase: PhaseRunning, Reason: fmt.Sprintf("%s is in state %q, unknown to outcore", job, state)}
}

// exitText describes an exit code for a reason: "" for 0:0.
func exitText(code string) string {
	st, sig, ok := ParseExitCode(code)
	switch {
	case !ok || (st == 0 && sig == 0):
		return ""
	case sig != 0:
		return fmt.Sprintf(", Slurm exit code %d:%d: signal %d (%s)", st, sig, sig, SignalNameNum(sig))
	}
	return fmt.Sprintf(", Slurm exit code %d:%d: exit status %d", st, sig, st)
}

func reasonText(r string) string {
	if r == "" || r == "None" {
		return ""
	}
	return ": " + r
}

func orNone(node string) string {
	if node == "" {
		return ""
	}
	return " " + node
}

// SignalNameNum names a signal number as Linux numbers it.
func SignalNameNum(n int) string {
	names := map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
		9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}
	if s, ok := names[n]; ok {
		return s
	}
	return "signal " + strconv.Itoa(n)
}
