package supervise

import (
	"strings"
	"testing"
)

// TestFailureLineQuotesTheFatalError: a Go crash's goroutine traces follow
// its "fatal error:" line; the run's error quotes that line.
func TestFailureLineQuotesTheFatalError(t *testing.T) {
	crash := "starting\nfatal error: runtime: out of memory\n\nruntime stack:\nruntime.throw({0x5, 0x1})\n\t/usr/lib/go/src/runtime/panic.go:1101 +0x48\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:10 +0x20\n"
	if got := FailureLine(crash); got != "fatal error: runtime: out of memory" {
		t.Errorf("crash: %q", got)
	}
	pnc := "x\npanic: index out of range [5] with length 3\n\ngoroutine 7 [running]:\nmain.f()\n\t/src/f.go:3 +0x1\nexit status 2\n"
	if got := FailureLine(pnc); got != "panic: index out of range [5] with length 3" {
		t.Errorf("panic: %q", got)
	}
	if got := FailureLine("a\nthe real reason\n\n"); got != "the real reason" {
		t.Errorf("plain: %q", got)
	}
	tb := NewTail(64)
	tb.Write([]byte(crash))
	if got := tb.LastLine(); strings.Contains(got, "goroutine") || strings.Contains(got, "/src/main.go") {
		t.Errorf("a cut tail still quotes a trace line: %q", got)
	}
}
