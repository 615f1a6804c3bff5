package slurm

import (
	"strings"
	"testing"

	"outcore/store"
)

func TestJobOutcomeTable(t *testing.T) {
	job := func(state, node, exit string) JobInfo {
		return JobInfo{ID: "42", State: state, Node: node, ExitCode: exit, Restarts: 0, Known: true}
	}
	cases := []struct {
		name       string
		job        JobInfo
		summary    string
		summaryErr string
		cancel     bool
		phase      JobPhase
		outcome    string
		reason     string // substring of the reason; "" = reason must be empty
		requeued   bool
	}{
		{"pending", job("PENDING", "", ""), "", "", false, PhasePending, "", "", false},
		{"pending with cancel asked", job("PENDING", "", ""), "", "", true, PhasePending, "", "", false},
		{"requeued", job("REQUEUED", "", ""), "", "", false, PhasePending, "", "requeued by Slurm (REQUEUED)", true},
		{"requeue hold", job("REQUEUE_HOLD", "", ""), "", "", false, PhasePending, "", "REQUEUE_HOLD", true},
		{"configuring", job("CONFIGURING", "n1", ""), "", "", false, PhaseRunning, "", "", false},
		{"running", job("RUNNING", "n1", ""), "", "", false, PhaseRunning, "", "", false},
		{"running lower case", job("running", "n1", ""), "", "", false, PhaseRunning, "", "", false},
		{"completing", job("COMPLETING", "n1", "0:0"), store.StatusDone, "", false, PhaseRunning, "", "", false},
		{"suspended", job("SUSPENDED", "n1", ""), "", "", false, PhaseRunning, "", "", false},
		{"completed", job("COMPLETED", "n1", "0:0"), store.StatusDone, "", false, PhaseEnded, store.StatusDone, "", false},
		{"completed, sacct suffix", job("COMPLETED+", "n1", "0:0"), store.StatusDone, "", false, PhaseEnded, store.StatusDone, "", false},
		{"completed without summary", job("COMPLETED", "n1", "0:0"), "", "", false, PhaseEnded, store.StatusDone, "", false},
		{"completed after a late cancel", job("COMPLETED", "n1", "0:0"), store.StatusDone, "", true, PhaseEnded, store.StatusDone, "", false},
		{"completed but summary failed", job("COMPLETED", "n1", "0:0"), store.StatusFailed, "nan loss", false, PhaseEnded, store.StatusFailed, "completed but the run failed: nan loss", false},
		{"own cgroup oom, job failed", job("FAILED", "n1", "1:0"), store.StatusOOM, "killed by the memory limit", false, PhaseEnded, store.StatusOOM, "the run's memory cgroup ran out of memory (Slurm state FAILED, Slurm exit code 1:0: exit status 1): killed by the memory limit", false},
		{"own cgroup oom, job completed", job("COMPLETED", "n1", "0:0"), store.StatusOOM, "", false, PhaseEnded, store.StatusOOM, "ran out of memory", false},
		{"slurm oom", job("OUT_OF_MEMORY", "n1", "0:125"), "", "", false, PhaseEnded, store.StatusOOM, "exceeded its Slurm memory request (Slurm state OUT_OF_MEMORY, Slurm exit code 0:125: signal 125", false},
		{"cancelled by outcore", job("CANCELLED", "n1", "0:15"), "", "", true, PhaseEnded, store.StatusCancelled, "Slurm job 42 cancelled with scancel", false},
		{"cancelled by outcore while pending", job("CANCELLED", "", "0:0"), "", "", true, PhaseEnded, store.StatusCancelled, "cancelled", false},
		{"sacct cancelled by uid", job("CANCELLED by 0", "n1", "0:15"), "", "", true, PhaseEnded, store.StatusCancelled, "cancelled", false},
		{"scancel --signal=KILL behind outcore's back", job("CANCELLED", "n1", "0:9"), "", "", false, PhaseEnded, store.StatusFailed, "cancelled in Slurm outside outcore (scancel by a user or an administrator, Slurm exit code 0:9: signal 9 (SIGKILL))", false},
		{"scancel behind outcore's back", job("CANCELLED", "n1", "0:15"), "", "", false, PhaseEnded, store.StatusFailed, "signal 15 (SIGTERM)", false},
		{"failed with exit status", job("FAILED", "n1", "3:0"), "", "", false, PhaseEnded, store.StatusFailed, "Slurm job 42 on n1 failed, Slurm exit code 3:0: exit status 3", false},
		{"failed with summary error", job("FAILED", "n1", "1:0"), store.StatusFailed, "dataset digest mismatch", false, PhaseEnded, store.StatusFailed, "failed, Slurm exit code 1:0: exit status 1: dataset digest mismatch", false},
		{"killed by signal", job("FAILED", "n1", "0:9"), "", "", false, PhaseEnded, store.StatusFailed, "Slurm exit code 0:9: signal 9 (SIGKILL)", false},
		{"timeout", job("TIMEOUT", "n1", "0:15"), "", "", false, PhaseEnded, store.StatusFailed, "time limit (TIMEOUT)", false},
		{"deadline", job("DEADLINE", "", ""), "", "", false, PhaseEnded, store.StatusFailed, "deadline", false},
		{"node failure", JobInfo{ID: "42", State: "NODE_FAIL", Node: "n7", Reason: "Not responding", Known: true}, "", "", false, PhaseEnded, store.StatusFailed, "node n7 failed (NODE_FAIL: Not responding)", false},
		{"node failure, cancel asked", job("NODE_FAIL", "n7", ""), "", "", true, PhaseEnded, store.StatusFailed, "node n7 failed (NODE_FAIL)", false},
		{"boot failure", job("BOOT_FAIL", "n7", ""), "", "", false, PhaseEnded, store.StatusFailed, "failed to boot", false},
		{"preempted", job("PREEMPTED", "n1", ""), "", "", false, PhaseEnded, store.StatusFailed, "preempted", false},
		{"special exit", job("SPECIAL_EXIT", "n1", "3:0"), "", "", false, PhaseEnded, store.StatusFailed, "SPECIAL_EXIT, Slurm exit code 3:0: exit status 3", false},
		{"revoked", job("REVOKED", "", ""), "", "", false, PhaseEnded, store.StatusFailed, "revoked", false},
		{"unknown state", job("WARPING", "n1", ""), "", "", false, PhaseRunning, "", `state "WARPING", unknown to outcore`, false},
		{"purged after a summary", JobInfo{ID: "42"}, store.StatusDone, "", false, PhaseEnded, store.StatusDone, "", false},
		{"purged after an oom", JobInfo{ID: "42"}, store.StatusOOM, "killed by the memory limit", false, PhaseEnded, store.StatusOOM, "ran out of memory: killed by the memory limit", false},
		{"purged after a failure", JobInfo{ID: "42"}, store.StatusFailed, "boom", false, PhaseEnded, store.StatusFailed, "ended (failed): boom", false},
		{"purged without a summary", JobInfo{ID: "42"}, "", "", false, PhaseEnded, store.StatusFailed, "no longer known to squeue, scontrol or sacct", false},
	}
	for _, c := range cases {
		m := JobOutcome(c.job, c.summary, c.summaryErr, c.cancel)
		if m.Phase != c.phase || m.Outcome != c.outcome || m.Requeued != c.requeued {
			t.Errorf("%s: got phase %s outcome %q requeued %v, want %s %q %v", c.name, m.Phase, m.Outcome, m.Requeued, c.phase, c.outcome, c.requeued)
		}
		if c.reason == "" && m.Reason != "" {
			t.Errorf("%s: reason %q, want none", c.name, m.Reason)
		}
		if c.reason != "" && !strings.Contains(m.Reason, c.reason) {
			t.Errorf("%s: reason %q, want it to contain %q", c.name, m.Reason, c.reason)
		}
		if m.Phase == PhaseEnded && !store.Finished(m.Outcome) {
			t.Errorf("%s: ended with %q, not a store outcome", c.name, m.Outcome)
		}
	}
}

func TestParseExitCode(t *testing.T) {
	for _, c := range []struct {
		in      string
		st, sig int
		ok      bool
	}{{"0:0", 0, 0, true}, {"1:0", 1, 0, true}, {"0:9", 0, 9, true}, {" 2:15 ", 2, 15, true},
		{"", 0, 0, false}, {"1", 0, 0, false}, {"a:b", 0, 0, false}, {"-1:0", 0, 0, false}} {
		st, sig, ok := ParseExitCode(c.in)
		if st != c.st || sig != c.sig || ok != c.ok {
			t.Errorf("ParseExitCode(%q) = %d, %d, %v; want %d, %d, %v", c.in, st, sig, ok, c.st, c.sig, c.ok)
		}
	}
}
