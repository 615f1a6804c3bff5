package experiments

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"outcore/engine/metrics"
	"outcore/experiments/supervise"
	"outcore/internal/osutil"
	"outcore/internal/units"
	"outcore/store"
)

// A local run whose child writes no record while its process lives is
// stalled (DESIGN §2 "A run's lifecycle"): the engine writes a resource
// sample every metrics.SampleInterval from a goroutine of its own, so
// silence of StallSamples intervals means the process is not running
// (stopped), cannot write (a full disk), waits on a device that does not
// answer (state D), or is stuck. The ingester's loop watches the silence
// (watchStall) and, past the limit, asks the host why (stallCause); the
// stall is a status event of the run (stallEvent), which the store reads
// as the run's Stall (store.Run.State: "stalled"), and the first record
// after it is another ("running again").

// StallSamples is how many sample intervals of silence make a running
// run stalled: 10 s at the engine's 1 s samples (Options.StallAfter).
const StallSamples = 10

// stallStartFactor stretches the limit before the child's first sample
// record: it opens the dataset, builds its trainer and opens its device
// before its sampler starts (60 s at the default).
const stallStartFactor = 6

// noSpace is how a full disk reads in an error message (ENOSPC).
const noSpace = "no space left on device"

// stallFacts is what the host says of a silent child.
type stallFacts struct {
	// process is the state letter of the child's process (/proc/PID/stat),
	// threads those of its threads.
	process byte
	threads []byte
	// fullDir is a directory of the run (its run directory, the data
	// directory) whose file system has no space left, "" for none.
	fullDir string
	// enospc is what the child reported of a full disk (a line of its
	// stderr or a log record), "" for nothing.
	enospc string
}

// alive reports whether the process still runs (not a zombie).
func (f stallFacts) alive() bool {
	return f.process != 0 && f.process != 'Z' && f.process != 'X' && f.process != 'x'
}

// stallCause says why a silent child writes nothing, as far as the host
// tells: stopped (its process is in state T, SIGSTOP, or t, a tracer),
// disk full (a directory of the run has no space left, or the child said
// so), blocked on I/O (a thread in state D), else unknown. It starts with
// the cause's name.
func stallCause(f stallFacts) string {
	count := func(states ...byte) int {
		n := 0
		for _, s := range f.threads {
			if bytes.IndexByte(states, s) >= 0 {
				n++
			}
		}
		return n
	}
	switch {
	case f.process == 'T' || f.process == 't' || len(f.threads) > 0 && count('T', 't') == len(f.threads):
		return "stopped: the child's process is stopped (state T: SIGSTOP, SIGTSTP or a debugger) and writes nothing until it is continued (SIGCONT)"
	case f.fullDir != "":
		return fmt.Sprintf("disk full: the file system of %s has no space left", f.fullDir)
	case f.enospc != "":
		return fmt.Sprintf("disk full: the child reported %q", units.Clip(f.enospc, 200))
	case count('D') > 0:
		return fmt.Sprintf("blocked on I/O: %d of the child's %d threads wait in uninterruptible I/O (state D) on a device or file system that does not answer",
			count('D'), len(f.threads))
	}
	return fmt.Sprintf("no records: the child's process runs (state %c) but writes nothing; the cause is unknown", f.process)
}

// stallWatch is what an ingester knows of its child's silence.
type stallWatch struct {
	after time.Duration // the limit; 0: not watched (another executor's run)
	// facts asks the host about the child (local runs: runChild).
	facts func() stallFacts
	// enospc is the last log record of the child that said its disk is
	// full (the loop's own).
	enospc string
	cause  string    // the stall shown, "" while the run is not stalled
	since  time.Time // when the records stopped
}

// watchStall makes the loop watch the child's silence: after is the limit
// (0: Options.StallAfter's default), facts what the host says of the child.
func (g *ingester) watchStall(after time.Duration, facts func() stallFacts) {
	if after <= 0 {
		after = StallSamples * metrics.SampleInterval
	}
	g.stall.after, g.stall.facts = after, facts
}

// checkStall runs at each tick of the loop: past the limit of silence
// (longer before the first sample) it asks the host why and, while the
// process lives, shows the run stalled with the cause (again when the
// cause changes).
func (g *ingester) checkStall(now time.Time) {
	w := &g.stall
	if w.after <= 0 || w.facts == nil {
		return
	}
	limit := w.after
	if !g.sampled.Load() {
		limit *= stallStartFactor
	}
	last := time.Unix(0, g.lastLine.Load())
	silent := now.Sub(last)
	if silent < limit {
		return
	}
	f := w.facts()
	if !f.alive() {
		return // it ended: its end is on the way
	}
	if f.enospc == "" {
		f.enospc = w.enospc
	}
	cause := stallCause(f)
	if cause == w.cause {
		return
	}
	if w.cause == "" {
		w.since = last
	}
	w.cause = cause
	msg := fmt.Sprintf("stalled: no records for %s while its process lives; %s", units.Duration(silent), cause)
	g.m.opts.Logf("run %d: %s", g.run.ID, msg)
	ev := statusEvent(g.run, store.StatusStalled, msg)
	ev.Data = eventData(map[string]any{"status": store.StatusStalled, "stall": cause, "system": g.run.System,
		"mem_limit_bytes": g.run.MemLimitBytes, "repeat": g.run.Repeat, "attempt": g.run.Attempt, "seq": g.run.Seq})
	g.flush([]*store.Event{ev})
}

// resumeFromStall shows a stalled run running again: a record came.
func (g *ingester) resumeFromStall(now time.Time) {
	w := &g.stall
	if w.cause == "" {
		return
	}
	msg := fmt.Sprintf("running again: its records came back after %s (it was stalled, %s)",
		units.Duration(now.Sub(w.since)), strings.SplitN(w.cause, ":", 2)[0])
	g.m.opts.Logf("run %d: %s", g.run.ID, msg)
	g.events = append(g.events, statusEvent(g.run, store.StatusRunning, msg))
	w.cause = ""
}

// noteENOSPC keeps a log record of the child that says its disk is full.
func (g *ingester) noteENOSPC(msg string) {
	if strings.Contains(strings.ToLower(msg), noSpace) {
		g.stall.enospc = msg
	}
}

// childStallFacts reads what the host says of a local run's child: its
// process's and threads' states (/proc/PID), whether the run's directory
// or the data directory has space left, and the last line of its stderr
// that says its disk is full.
func (m *Manager) childStallFacts(pid int, runDir string, stderr *supervise.Tail) stallFacts {
	var f stallFacts
	f.process, f.threads, _ = osutil.TaskStates(fmt.Sprintf("/proc/%d", pid))
	for _, d := range []string{runDir, m.opts.DataDir} {
		if free, err := osutil.FreeDiskBytes(d); err == nil && free == 0 {
			f.fullDir = d
			break
		}
	}
	lines := strings.Split(stderr.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(strings.ToLower(lines[i]), noSpace) {
			f.enospc = strings.TrimSpace(lines[i])
			break
		}
	}
	return f
}
