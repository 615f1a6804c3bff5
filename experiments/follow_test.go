package experiments

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outcore/experiments/executors"
	"outcore/store"
)

// playbackJob is a test executor's job: it plays a records file (a
// local run's record log) into the queue's loop a few lines per Follow,
// as a job whose records are files (executors.Records.Files), and ends
// where the case says. It reports facts only; the loop decides.
type playbackJob struct {
	r     store.Run
	file  string   // the records file's name in the run's directory
	lines [][]byte // its lines, and where each ends
	ends  []int64
	per   int // lines per Follow
	// hold: lines from this index on show up only on the second Follow
	// after the end (a summary the file system shows late); -1: none.
	hold int
	// block: the job plays no line from this index on; -1: none. A
	// cancelled job ends where it is.
	block    int
	outlives bool
	// requeueAt: after this many lines the job is requeued: a second
	// execution plays the file again from its start as playback-2.jsonl;
	// -1: none.
	requeueAt int
	requeued  bool
	// stream: the records come as a stream the queue must log (as a
	// child's stdout), not as files.
	stream bool

	next, afterEnd, cancels int
	cancelled, ended        bool
	state                   executors.State
}

func (j *playbackJob) Run() store.Run             { return j.r }
func (j *playbackJob) Records() executors.Records { return executors.Records{Files: !j.stream} }
func (j *playbackJob) Wake() <-chan struct{}      { return nil }
func (j *playbackJob) Poll() time.Duration        { return 10 * time.Millisecond }
func (j *playbackJob) Outlives() bool             { return j.outlives }
func (j *playbackJob) State() executors.State     { return j.state }
func (j *playbackJob) Cancel(context.Context) (string, error) {
	j.cancels++
	j.cancelled = true
	return "stopped the playback", nil
}

func (j *playbackJob) setState(s string) {
	id := fmt.Sprintf("play-%d", j.r.ID)
	j.state = executors.State{JobID: id, Node: "tape", State: s, Msg: fmt.Sprintf("playback job %s %s", id, s)}
}

// emit returns the lines up to index to.
func (j *playbackJob) emit(to int) []executors.Item {
	var items []executors.Item
	for ; j.next < to; j.next++ {
		items = append(items, executors.Item{Line: j.lines[j.next], File: j.file, End: j.ends[j.next]})
	}
	return items
}

func (j *playbackJob) Follow(context.Context) ([]executors.Item, bool) {
	if j.ended {
		if j.afterEnd++; j.afterEnd < 2 || j.hold < 0 {
			return nil, true
		}
		return j.emit(len(j.lines)), true
	}
	if j.state.State == "" {
		j.setState("PLAYING")
	}
	var items []executors.Item
	if j.requeueAt >= 0 && !j.requeued && j.next >= j.requeueAt {
		j.requeued, j.file, j.next = true, "playback-2.jsonl", 0
		items = append(items, executors.Item{Execution: &executors.Execution{File: j.file, Requeued: true,
			Msg: "playback requeued: execution 2 plays from the start"}})
	}
	limit := len(j.lines)
	if j.hold >= 0 {
		limit = j.hold
	}
	switch {
	case j.cancelled: // a cancelled job ends where it is
		limit = j.next
	case j.block >= 0:
		limit = min(limit, j.block)
	}
	if j.requeueAt >= 0 && !j.requeued {
		limit = min(limit, j.requeueAt)
	}
	items = append(items, j.emit(min(j.next+j.per, limit))...)
	if j.next >= limit && (j.block < 0 || j.cancelled) && (j.requeueAt < 0 || j.requeued) {
		j.ended = true
		j.setState("PLAYED")
		return items, true
	}
	return items, false
}

func (j *playbackJob) Wait(context.Context) executors.Exit {
	code := 0
	grace := 5 * time.Second // the records of a job that played to its end may show up late
	if j.cancelled {
		grace = 0
	}
	return executors.Exit{Started: j.r.StartedAt, ExitCode: &code, SummaryGrace: grace,
		NoSummary: "the playback ended without a summary record",
		Verdict: func(v executors.Verdict) (string, string) {
			switch {
			case v.Cancelled:
				return store.StatusCancelled, "cancelled while playing"
			case v.Summary == store.StatusDone:
				return store.StatusDone, ""
			}
			return store.StatusFailed, fmt.Sprintf("the playback ended with summary %q", v.Summary)
		}}
}

// TestOneLoopForEveryExecutor runs a run through the real local executor
// (a child in its cgroup, its records on stdout) and plays that run's
// record log through the same loop (Manager.follow) as another
// executor's job whose records are in a file: both end done with the same
// epochs and summary. The played job then tests the loop's own rules: a
// requeued job's second execution replaces the first, a summary that
// shows up late gets its grace, a cancelled run's job is
// cancelled once and ends cancelled, a job that outlives a stopping queue
// is left running at its committed offset.
func TestOneLoopForEveryExecutor(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	grid := `{"dataset":"tiny","system":"fake","epochs":3,"options":{"epoch_ms":"30"}}`
	h.start()
	local := h.waitRuns(h.create(grid).ID, "finished", finished)[0]
	h.stop()
	if local.Status != store.StatusDone || local.EpochsDone != 3 {
		t.Fatalf("local run: %s %s, %d epochs", local.Status, local.Error, local.EpochsDone)
	}
	log, err := os.ReadFile(h.m.recordLogPath(local.ID))
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	var ends []int64
	for off := 0; off < len(log); {
		n := bytes.IndexByte(log[off:], '\n') + 1
		lines, ends = append(lines, log[off:off+n]), append(ends, int64(off+n))
		off += n
	}
	summaryAt := len(lines) - 1
	if !bytes.Contains(lines[summaryAt], []byte(`"summary"`)) {
		t.Fatalf("the record log does not end with the summary: %s", lines[summaryAt])
	}
	epochAt := -1 // the second epoch record
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"type":"epoch"`)) {
			if epochAt == -2 {
				epochAt = i
				break
			}
			epochAt = -2
		}
	}

	// play launches a claimed run of a new experiment as a playback job
	// and follows it with the loop; stop, when set, stops the run first.
	play := func(hold, block, requeueAt int, outlives, stream bool, stop stopReason) (store.Run, *playbackJob, bool) {
		t.Helper()
		e := h.create(grid)
		runs, err := h.st.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs %v %v", runs, err)
		}
		r := runs[0]
		if err := h.st.Update(ctx, func(tx *store.Tx) error { _, err := tx.ClaimRun(r.ID); return err }); err != nil {
			t.Fatal(err)
		}
		if r, err = h.st.Run(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		dir, err := h.m.freshRunDir(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"playback.jsonl", "playback-2.jsonl"} {
			if err := os.WriteFile(filepath.Join(dir, name), log, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		per := 3
		if block >= 0 {
			per = block // all it plays, in the first Follow, before the stop is seen
		}
		job := &playbackJob{r: r, file: "playback.jsonl", lines: lines, ends: ends, per: per, hold: hold, block: block, outlives: outlives,
			requeueAt: requeueAt, stream: stream}
		ar := newActiveRun(r.ID)
		if stop != stopNone {
			ar.stop(stop)
		}
		out := h.m.follow(ctx, r, ar, job)
		h.m.record(ctx, r, out)
		got, err := h.st.Run(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got, job, out.Left
	}
	events := func(id int64) string {
		evs, err := h.st.EventsSince(ctx, 0, 100000)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, e := range evs {
			if e.RunID == id {
				b.WriteString(e.Msg + "\n")
			}
		}
		return b.String()
	}

	t.Run("played to the end as the local run", func(t *testing.T) {
		r, job, _ := play(-1, -1, -1, false, false, stopNone)
		if r.Status != store.StatusDone || r.EpochsDone != local.EpochsDone || r.Summary == nil ||
			r.BestValAcc == nil || *r.BestValAcc != *local.BestValAcc {
			t.Fatalf("played run: %s %q, %d epochs (local %d), best %v", r.Status, r.Error, r.EpochsDone, local.EpochsDone, r.BestValAcc)
		}
		if r.RecordsFile != "playback.jsonl" || r.RecordsOffset != int64(len(log)) {
			t.Errorf("committed %s at %d, want playback.jsonl at %d", r.RecordsFile, r.RecordsOffset, len(log))
		}
		if r.JobID != job.state.JobID || r.JobState != "PLAYED" || r.Node != "tape" {
			t.Errorf("job %q %q on %q: the job's last state is not mirrored", r.JobID, r.JobState, r.Node)
		}
		if ev := events(r.ID); !strings.Contains(ev, fmt.Sprintf("playback job %s PLAYING\n", r.JobID)) || !strings.Contains(ev, job.state.Msg+"\n") {
			t.Errorf("state events missing:\n%s", ev)
		}
		if r.ExitCode == nil || *r.ExitCode != 0 {
			t.Errorf("exit code %v", r.ExitCode)
		}
	})
	t.Run("played as a stream, kept in the record log", func(t *testing.T) {
		r, job, _ := play(-1, -1, -1, false, true, stopNone)
		if r.Status != store.StatusDone || r.EpochsDone != local.EpochsDone || r.Summary == nil {
			t.Fatalf("played run: %s %q, %d epochs (local %d)", r.Status, r.Error, r.EpochsDone, local.EpochsDone)
		}
		if r.RecordsFile != "" || r.RecordsOffset != 0 {
			t.Errorf("a stream's run committed %s at %d", r.RecordsFile, r.RecordsOffset)
		}
		kept, err := os.ReadFile(h.m.recordLogPath(r.ID))
		if err != nil || !bytes.Equal(kept, log) {
			t.Errorf("the record log holds %d bytes (%v), want the %d played", len(kept), err, len(log))
		}
		if r.JobID != job.state.JobID || r.JobState != "PLAYED" {
			t.Errorf("job %q %q: the job's last state is not mirrored", r.JobID, r.JobState)
		}
	})
	t.Run("a requeued job's second execution replaces the first", func(t *testing.T) {
		r, _, _ := play(-1, -1, epochAt+1, false, false, stopNone)
		if r.Status != store.StatusDone || r.EpochsDone != local.EpochsDone {
			t.Fatalf("run %s %q, %d epochs, want done with the second execution's %d", r.Status, r.Error, r.EpochsDone, local.EpochsDone)
		}
		eps, err := h.st.Epochs(ctx, r.ID)
		if err != nil || len(eps) != local.EpochsDone {
			t.Errorf("%d epochs stored (%v), want %d: the first execution's are discarded", len(eps), err, local.EpochsDone)
		}
		if r.RecordsFile != "playback-2.jsonl" || r.RecordsOffset != int64(len(log)) {
			t.Errorf("committed %s at %d, want playback-2.jsonl at %d", r.RecordsFile, r.RecordsOffset, len(log))
		}
		if ev := events(r.ID); !strings.Contains(ev, "playback requeued") {
			t.Errorf("the requeue's event is missing:\n%s", ev)
		}
	})
	t.Run("a late summary gets its grace", func(t *testing.T) {
		r, job, _ := play(summaryAt, -1, -1, false, false, stopNone)
		if r.Status != store.StatusDone || r.Summary == nil || job.afterEnd < 2 {
			t.Fatalf("run %s %q, summary %v, followed %d times after the end", r.Status, r.Error, r.Summary != nil, job.afterEnd)
		}
		if ev := events(r.ID); strings.Contains(ev, "without a summary") {
			t.Errorf("warned of a missing summary:\n%s", ev)
		}
	})
	t.Run("cancelled while playing", func(t *testing.T) {
		r, job, _ := play(-1, epochAt+1, -1, false, false, stopCancel)
		if r.Status != store.StatusCancelled || r.Error != "cancelled while playing" || job.cancels != 1 {
			t.Fatalf("run %s %q, %d cancels", r.Status, r.Error, job.cancels)
		}
		if r.EpochsDone != 2 {
			t.Errorf("%d epochs stored, want the 2 played before the cancel", r.EpochsDone)
		}
		if ev := events(r.ID); !strings.Contains(ev, "stopped the playback") {
			t.Errorf("the cancel's note is missing:\n%s", ev)
		}
	})
	t.Run("left running when the queue stops", func(t *testing.T) {
		r, job, left := play(-1, epochAt+1, -1, true, false, stopShutdown)
		if !left || r.Status != store.StatusRunning || job.cancels != 0 {
			t.Fatalf("left %v, run %s, %d cancels", left, r.Status, job.cancels)
		}
		if r.RecordsOffset != ends[job.next-1] || job.next == 0 {
			t.Errorf("committed offset %d, want %d (the end of the %d lines handed over)", r.RecordsOffset, ends[max(job.next-1, 0)], job.next)
		}
	})
}
