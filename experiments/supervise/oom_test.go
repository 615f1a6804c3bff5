package supervise

import (
	"syscall"
	"testing"
)

func TestIsOOM(t *testing.T) {
	tests := []struct {
		name string
		e    Ending
		want bool
	}{
		{"finished", Ending{Summary: "done", Enforced: true}, false},
		{"finished although the group counted a kill", Ending{Summary: "done", OOMKills: 1, Enforced: true}, false},
		{"oom-kill count, no summary", Ending{OOMKills: 1, Enforced: true, Signal: syscall.SIGKILL}, true},
		{"oom-kill count with a failed summary", Ending{OOMKills: 2, Enforced: true, Summary: "failed"}, true},
		{"child reported oom", Ending{Summary: "oom"}, true},
		{"SIGKILL under a limit without a summary", Ending{Enforced: true, Signal: syscall.SIGKILL}, true},
		{"SIGKILL by the supervisor's stop", Ending{Enforced: true, Signal: syscall.SIGKILL, KilledBySupervisor: true}, false},
		{"SIGKILL without an enforced limit", Ending{Signal: syscall.SIGKILL}, false},
		{"SIGKILL after writing a failed summary", Ending{Enforced: true, Signal: syscall.SIGKILL, Summary: "failed"}, false},
		{"other signal under a limit", Ending{Enforced: true, Signal: syscall.SIGSEGV}, false},
		{"exited with an error", Ending{Enforced: true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsOOM(tc.e); got != tc.want {
				t.Fatalf("IsOOM(%+v) = %v, want %v", tc.e, got, tc.want)
			}
		})
	}
}
