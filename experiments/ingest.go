package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"outcore/engine/metrics"
	"outcore/experiments/outcome"
	"outcore/gpu"
	"outcore/internal/cgroup"
	"outcore/internal/units"
	"outcore/store"
)

// maxQueuedWrites bounds the writes an ingester keeps while the store
// refuses them (a full disk): beyond it, writes holding only samples,
// progress and log events are dropped (epochs, start and summary never
// are; the record log on disk keeps everything it could write).
var maxQueuedWrites = 100000 // a variable for the tests

// ingester turns a child's stdout records into rows and events. Every line
// is first appended to the run's record log (runs/<db>/<id>/records.jsonl, see
// recordLog), the source of truth for what the child reported. Epochs are
// committed the moment they arrive (with anything pending before them, to
// keep order); samples, logs and progress are committed in one transaction
// per second. A write the store refuses (a full disk, an I/O error) is not
// dropped: it stays queued, with every later write behind it, and is
// retried each second until it commits, while the training goes on: the
// record log holds every line, and what the queue had to drop (samples and
// logs beyond maxQueuedWrites) is ingested from it once the store accepts
// again. Only a record that can be neither logged nor ever stored (the
// record log refuses it, or the database file is gone) stops the run
// (onFailure), which then ends as failed with the reason.
type ingester struct {
	m    *Manager
	run  store.Run
	grp  *cgroup.Group // nil without a cgroup
	gpu  gpu.Sampler
	host metrics.HostFacts // the runner's view; the child's start record refines it
	log  *recordLog
	// stop ends the final retries (the server is shutting down); what is
	// still queued then is in the record log for the next start.
	stop context.Context
	// onFailure is called once, with the reason in words, the first time
	// a record cannot be logged, or the store can never take it (ErrGone).
	onFailure func(reason string)
	failed    bool
	// refused: the store refused a write and has not accepted one since;
	// dropped: writes were dropped from the queue (their lines are in the
	// record log, ingested from it once the store accepts again).
	refused, dropped bool
	refusedWhy       string // failureReason of the first refusal

	in   chan childLine
	done chan struct{}
	// lastLine is when the child's last line arrived (unix nanoseconds;
	// the start before the first), sampled whether a sample record came:
	// the loop's stall watch reads them (stall.go).
	lastLine atomic.Int64
	sampled  atomic.Bool
	stall    stallWatch

	// pending, handed to a write by flush
	samples  []metrics.SampleRecord
	events   []*store.Event
	progress json.RawMessage
	progEv   *store.Event

	// queue holds writes not yet committed, oldest first.
	queue []queuedWrite

	// The ingester of a job whose records are files
	// (newRecordsIngester): position says how far
	// its records file has been handed over when a write is queued (that
	// offset is committed in the write's transaction); limit decides from
	// the start record whether the run's memory limit holds, and why.
	position func() (file string, off int64)
	limit    func(rec metrics.StartRecord) (enforced bool, note string)

	// check refuses the lines that are not this run's records
	// (recordcheck.go); lineNo counts the lines handled (a local child's
	// stdout lines), refusedLines those refused.
	check        *recordCheck
	lineNo       int
	refusedLines int

	// deviations are the run's deviations so far: the start record's, then
	// each one the child logs while it prepares ("deviation: ...",
	// train.Env.Deviate), stored as they come, so that a run killed before
	// its summary (an OOM kill) keeps them — the model step held outside
	// the budget and the cgroup limit it makes among them.
	deviations []string

	mu         sync.Mutex // guards what finish reads
	summary    *metrics.SummaryRecord
	summaryRaw json.RawMessage
	peakRSS    int64
	peakCG     int64
	epochs     int
	lastErr    string
	unstored   int // writes still queued when finish gave up
}

// queuedWrite is one transaction of an ingester; keep marks writes that
// are never dropped (epochs, start, summary, the run's start facts).
type queuedWrite struct {
	fn   func(*store.Tx) error
	keep bool
}

func newIngester(m *Manager, r store.Run) *ingester {
	return &ingester{m: m, run: r, gpu: m.opts.GPU, stop: context.Background(), check: newRecordCheck(r),
		log: &recordLog{path: m.recordLogPath(r.ID), fault: m.logFault},
		in:  make(chan childLine, 256), done: make(chan struct{})}
}

// newChildIngester is the ingester of a local run's child: its final
// retries end with stop, and onFailure is told (once) when a record can be
// neither logged nor ever stored.
func newChildIngester(m *Manager, r store.Run, stop context.Context, onFailure func(reason string)) *ingester {
	g := newIngester(m, r)
	g.stop, g.onFailure = stop, onFailure
	return g
}

// newRecordsIngester is the ingester of a job whose records are files
// (executors.Records.Files: a registered executor runs it elsewhere): no
// cgroup, GPU or host facts of this machine (the node's are in the
// records), and its loop is never started: the queue's loop (follow.go)
// hands it the records files' lines itself (feed), in file order.
// position and limit: see the fields.
func newRecordsIngester(m *Manager, r store.Run, position func() (string, int64),
	limit func(metrics.StartRecord) (bool, string)) *ingester {
	g := newIngester(m, r)
	g.gpu, g.position, g.limit = nil, position, limit
	// A run picked up again is read on from its committed offset: its
	// records' order goes on from what the store holds.
	if epoch, t, err := m.st.LastRecordKeys(context.Background(), r.ID); err == nil {
		g.check.resume(epoch, t)
	} else {
		m.opts.Logf("run %d: %v", r.ID, err)
	}
	return g
}

// ingestResult is what an ingester saw of a run that its outcome is made
// of, with the local runner's count of writes still queued when finish
// gave up.
type ingestResult struct {
	outcome.Ingest
	unstored int
}

// result returns what the ingester saw so far.
func (g *ingester) result() ingestResult {
	g.mu.Lock()
	defer g.mu.Unlock()
	return ingestResult{Ingest: outcome.Ingest{Summary: g.summary, SummaryRaw: g.summaryRaw, PeakRSS: g.peakRSS,
		PeakCgroup: g.peakCG, LastErr: g.lastErr}, unstored: g.unstored}
}

// summaryOutcome returns the outcome and error of the summary record seen
// ("" without one).
func (g *ingester) summaryOutcome() (outcome, errMsg string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.summary == nil {
		return "", ""
	}
	return g.summary.Outcome, g.summary.Error
}

// resumeSummary sets the summary record read before the ingester took
// over (a job's run picked up again past it); nil keeps none.
func (g *ingester) resumeSummary(sum *metrics.SummaryRecord, raw json.RawMessage) {
	g.mu.Lock()
	g.summary, g.summaryRaw = sum, raw
	g.mu.Unlock()
}

// newExecution starts reading another execution's records file of a
// job's run (position names it, at offset 0). After an execution that did
// not finish (the job was requeued: requeued true, with the event's
// message) its summary and peaks are forgotten and its epochs and samples
// discarded (Tx.ResetExecution) in the same write, queued behind what was
// read of it and retried like any.
func (g *ingester) newExecution(requeued bool, msg string) {
	if requeued {
		g.mu.Lock()
		g.summary, g.summaryRaw, g.peakRSS, g.peakCG = nil, nil, 0, 0
		g.mu.Unlock()
		g.check.restart() // its epochs and samples start again
	}
	pw := g.takePending(nil)
	g.write(true, func(tx *store.Tx) error {
		if err := pw.write(tx); err != nil || !requeued {
			return err
		}
		if err := tx.ResetExecution(g.run.ID); err != nil {
			return err
		}
		return tx.AppendEvent(g.event(store.EventLog, "warn", msg, nil))
	})
}

// jobState queues a run's job state and node with a status event
// saying so, behind the records read before.
func (g *ingester) jobState(jobID, node, state, msg string) {
	pw := g.takePending(nil)
	ev := statusEvent(g.run, store.StatusRunning, msg)
	g.write(true, func(tx *store.Tx) error {
		if err := pw.write(tx); err != nil {
			return err
		}
		if err := tx.SetJob(g.run.ID, jobID, node, state); err != nil {
			return err
		}
		return tx.AppendEvent(ev)
	})
}

// note adds a log event of the run, stored with the next write.
func (g *ingester) note(level, msg string) {
	g.events = append(g.events, g.event(store.EventLog, level, msg, nil))
}

// feed handles one line handed over by the executor itself (a job's
// records file), without a local cgroup: the job's process reports its own.
func (g *ingester) feed(line []byte) { g.handleSafe(line, 0) }

// settle stores what a job's run's ingester (whose loop never runs) still
// holds, pending or queued behind a refusal, retrying until it is stored
// or stop ends (the server is stopping); it reports whether all of it was
// stored. The second round stores the event that the store's refusal
// leaves when it ends (caughtUp).
func (g *ingester) settle(stop context.Context) bool {
	g.stop = stop
	g.countRefused()
	for range 2 {
		g.flush(nil)
		g.finish()
	}
	return len(g.queue) == 0
}

// closeAndWait ends the input of a started ingester and waits until its
// loop has stored (or, at shutdown, given up on) everything queued.
func (g *ingester) closeAndWait() {
	close(g.in)
	<-g.done
}

// childLine is one stdout line of a local child with its cgroup's usage
// when the line arrived (0: not a sample, or not known then). The loop may
// handle a line long after it arrived (in holds 256 lines, and store writes
// are slow on a loaded host): by then the child may have ended and its group
// been removed, so a sample's usage is read on arrival, not when handled.
type childLine struct {
	b           []byte
	cgroupBytes int64
}

// take queues one line of a started ingester's stream with the memory
// usage measured when it arrived (0: not measured).
func (g *ingester) take(line []byte, usage int64) {
	g.lastLine.Store(time.Now().UnixNano())
	if isSample(line) {
		g.sampled.Store(true)
	}
	g.in <- childLine{b: line, cgroupBytes: usage}
}

// start runs the loop once the child runs in grp (nil without a cgroup);
// host is the runner's view of the machine. Lines sent before wait for it.
// The loop keeps the run's record log (a job whose records are files
// has its log already: the queue's loop hands it their lines, feed).
func (g *ingester) start(grp *cgroup.Group, host metrics.HostFacts) {
	g.grp, g.host = grp, host
	g.lastLine.CompareAndSwap(0, time.Now().UnixNano())
	g.log.open() // a failure is retried with the first line
	go g.loop()
}

// loop consumes lines until in is closed, then flushes, retries what is
// still queued until it is stored (or stop ends) and closes done.
func (g *ingester) loop() {
	defer close(g.done)
	defer g.log.close()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case l, ok := <-g.in:
			if !ok {
				g.countRefused()
				g.flush(nil)
				g.finish()
				return
			}
			g.resumeFromStall(time.Now())
			if !isProgress(l.b) { // transient, and the most frequent
				if err := g.log.append(l.b); err != nil {
					g.fail(err)
				}
			}
			g.handleSafe(l.b, l.cgroupBytes)
		case now := <-tick.C:
			if err := g.log.retry(); err != nil {
				g.fail(err)
			}
			g.flush(nil)
			g.checkStall(now)
		}
	}
}

// isProgress reports whether a line is a progress record (the emitter
// writes "type" first).
func isProgress(line []byte) bool {
	return bytes.HasPrefix(bytes.TrimSpace(line), []byte(`{"type":"`+metrics.TypeProgress+`"`))
}

// isSample: the line may be a sample record (handle decides).
func isSample(line []byte) bool {
	return bytes.Contains(line, []byte(`"`+metrics.TypeSample+`"`))
}

// finish retries the queued writes and the record log's backlog, backing
// off up to 2 s, until both are empty or stop ends.
func (g *ingester) finish() {
	wait := 100 * time.Millisecond
	for {
		logErr := g.log.retry()
		if logErr != nil {
			g.fail(logErr)
		}
		if g.drain() && logErr == nil {
			return
		}
		select {
		case <-g.stop.Done():
			g.mu.Lock()
			g.unstored = len(g.queue)
			g.mu.Unlock()
			if n := len(g.queue); n > 0 {
				from := g.log.path
				if g.position != nil {
					from = "the records file from its committed offset"
				}
				g.m.opts.Logf("run %d: %d record write(s) not stored at shutdown (last error: %s); the next start ingests %s",
					g.run.ID, n, g.lastError(), from)
			}
			if n := g.log.pending(); n > 0 {
				g.m.opts.Logf("run %d: %d record line(s) could be neither stored nor logged and are lost", g.run.ID, n)
			}
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// handleSafe handles one line; a panic while reading it (a bug) is
// recorded as an event instead of killing the server.
func (g *ingester) handleSafe(line []byte, arrivedCG int64) {
	defer func() {
		if p := recover(); p != nil {
			g.m.opts.Logf("run %d: panic reading a record: %v\n%s", g.run.ID, p, debug.Stack())
			g.events = append(g.events, g.event(store.EventLog, "error",
				fmt.Sprintf("internal error reading a record (kept in the record log): %v", p), nil))
		}
	}()
	g.handle(line, arrivedCG)
}

func (g *ingester) ctx() context.Context { return context.Background() }

func (g *ingester) event(kind, level, msg string, data json.RawMessage) *store.Event {
	return &store.Event{ExperimentID: g.run.ExperimentID, RunID: g.run.ID, Kind: kind, Level: level, Msg: msg, Data: data}
}

// handle checks one line against the run (recordcheck.go) and stores
// what it holds; a line that is not the run's is refused and logged
// (refuse), stray output that is no record is kept as a log event.
// arrivedCG is the cgroup's usage when the line arrived (childLine), 0
// when not known.
func (g *ingester) handle(line []byte, arrivedCG int64) {
	g.lineNo++
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	rec, err := g.check.check(line)
	if errors.Is(err, errNotRecord) {
		g.events = append(g.events, g.event(store.EventLog, "info", "stdout: "+string(line), nil))
		return
	}
	if err != nil {
		g.refuse(err, line)
		return
	}
	switch rec.Type {
	case metrics.TypeStart:
		g.applyStart(*rec.Start, line)
	case metrics.TypeEpoch:
		g.commitEpoch(rec.Epoch, line)
	case metrics.TypeSample:
		s := rec.Sample
		g.fillSample(s, arrivedCG)
		data, _ := json.Marshal(s)
		g.samples = append(g.samples, *s)
		g.events = append(g.events, g.event(store.EventSample, "info", "", data))
	case metrics.TypeProgress:
		// Progress is coalesced: only the newest one per flush is kept.
		g.progress = append(json.RawMessage(nil), line...)
		if g.progEv == nil {
			g.progEv = g.event(store.EventProgress, "info", "", nil)
			g.events = append(g.events, g.progEv)
		}
		g.progEv.Data = g.progress
	case metrics.TypeLog:
		l := rec.Log
		level := l.Level
		if level == "" {
			level = "info"
		}
		g.events = append(g.events, g.event(store.EventLog, level, l.Msg, append(json.RawMessage(nil), line...)))
		g.noteENOSPC(l.Msg)
		if d, ok := strings.CutPrefix(l.Msg, metrics.DeviationLogPrefix); ok && !slices.Contains(g.deviations, d) {
			g.deviations = append(g.deviations, d)
			pw := g.takePending(nil)
			deviations := append([]string(nil), g.deviations...)
			g.write(true, func(tx *store.Tx) error {
				if err := pw.write(tx); err != nil {
					return err
				}
				return tx.SetDeviations(g.run.ID, deviations)
			})
		}
	case metrics.TypeSummary:
		sum := rec.Summary
		g.mu.Lock()
		g.summary = sum
		g.summaryRaw = append(json.RawMessage(nil), line...)
		g.mu.Unlock()
		g.events = append(g.events, g.event(store.EventLog, "info",
			fmt.Sprintf("summary: %s after %d epochs", sum.Outcome, sum.Epochs), g.summaryRaw))
		if len(sum.Deviations) > 0 {
			// The summary's list is complete (it adds what Prepare decided).
			pw := g.takePending(nil)
			deviations := sum.Deviations
			g.write(true, func(tx *store.Tx) error {
				if err := pw.write(tx); err != nil {
					return err
				}
				return tx.SetDeviations(g.run.ID, deviations)
			})
		}
	}
}

// where names the line being handled: a local child's stdout line by
// its number, a job's run's by its records file and the byte it ends at.
func (g *ingester) where() string {
	if g.position != nil {
		file, off := g.position()
		return fmt.Sprintf("%s, the line ending at byte %d,", file, off)
	}
	return fmt.Sprintf("stdout line %d", g.lineNo)
}

// refuse logs a line that is not the run's (with where it was and why)
// instead of storing it: the first maxRefusalEvents as events of the
// run, the rest counted (countRefused).
func (g *ingester) refuse(err error, line []byte) {
	g.refusedLines++
	if g.refusedLines > maxRefusalEvents {
		return
	}
	msg := refusalMsg(g.where(), err, line)
	g.m.opts.Logf("run %d: %s", g.run.ID, msg)
	g.events = append(g.events, g.event(store.EventLog, "warn", msg, nil))
}

// countRefused adds an event counting the refused lines that were not
// logged one by one.
func (g *ingester) countRefused() {
	if n := g.refusedLines - maxRefusalEvents; n > 0 {
		g.refusedLines = maxRefusalEvents
		g.events = append(g.events, g.event(store.EventLog, "warn",
			fmt.Sprintf("%d more lines were refused, not stored, as not this run's records (the first %d are logged one by one)", n, maxRefusalEvents), nil))
	}
}

// fillSample adds what the runner sees and the child did not report: the
// cgroup's usage (page cache included; as it was when the line arrived,
// else as it is now) and the GPU, and tracks peaks.
func (g *ingester) fillSample(s *metrics.SampleRecord, arrivedCG int64) {
	if s.CgroupBytes == 0 && arrivedCG > 0 {
		s.CgroupBytes = arrivedCG
	}
	if s.CgroupBytes == 0 && g.grp != nil {
		if v, err := g.grp.Usage(); err == nil {
			s.CgroupBytes = v
		}
	}
	if s.GPUUtil == nil && g.gpu != nil {
		if u, mem, ok := g.gpu.Sample(); ok {
			s.GPUUtil, s.GPUMemBytes = &u, &mem
		}
	}
	if s.GPUPCIeRxMBps == nil && g.gpu != nil {
		if tx, rx, ok := g.gpu.SamplePCIe(); ok {
			s.GPUPCIeTxMBps, s.GPUPCIeRxMBps = &tx, &rx
		}
	}
	g.mu.Lock()
	g.peakRSS = max(g.peakRSS, s.RSSBytes)
	g.peakCG = max(g.peakCG, s.CgroupBytes)
	g.mu.Unlock()
}

// applyStart records the child's start record: I/O backend, devices,
// deviations and its host facts merged over the runner's.
func (g *ingester) applyStart(rec metrics.StartRecord, line []byte) {
	h := g.host
	c := rec.Host
	if c.Hostname != "" {
		h.Hostname = c.Hostname
	}
	if c.Kernel != "" {
		h.Kernel = c.Kernel
	}
	if c.Cores != 0 {
		h.Cores = c.Cores
	}
	if c.MemBytes != 0 {
		h.MemBytes = c.MemBytes
	}
	if c.DiskModel != "" && h.DiskModel == "" {
		// The runner's own value names the disk of the data directory.
		h.DiskModel = c.DiskModel
	}
	if c.GPU != "" {
		h.GPU = c.GPU
	}
	if c.GoVersion != "" {
		h.GoVersion = c.GoVersion
	}
	if c.Version != "" {
		h.Version = c.Version
	}
	if c.GEMM != "" {
		h.GEMM = c.GEMM
	}
	if c.Hostname != "" {
		// The child looked at the host as it started: its finding, none
		// included, is the run's (the runner's may be older).
		h.Reclaim = c.Reclaim
	}
	if c.Storage != "" {
		// The child's names the file system of the dataset it read, the
		// runner's that of the data directory: the I/O floor's profile is
		// the dataset's.
		h.Storage = c.Storage
	}
	host, _ := json.Marshal(h)
	g.deviations = append([]string(nil), rec.Deviations...)
	pw := g.takePending([]*store.Event{g.event(store.EventLog, "info",
		fmt.Sprintf("started: system %s, I/O backend %s", rec.System, rec.IOBackend), append(json.RawMessage(nil), line...))})
	g.write(true, func(tx *store.Tx) error {
		if err := pw.write(tx); err != nil {
			return err
		}
		if err := tx.ApplyStartRecord(g.run.ID, rec, host); err != nil {
			return err
		}
		if g.limit != nil {
			enforced, note := g.limit(rec)
			return tx.SetLimit(g.run.ID, enforced, note)
		}
		return nil
	})
}

// commitEpoch commits pending rows and the epoch in one transaction, now.
func (g *ingester) commitEpoch(rec *metrics.EpochRecord, line []byte) {
	pw := g.takePending([]*store.Event{g.event(store.EventEpoch, "info",
		fmt.Sprintf("epoch %d: %.3f s", rec.Epoch, rec.EpochS), append(json.RawMessage(nil), line...))})
	g.write(true, func(tx *store.Tx) error {
		if err := pw.write(tx); err != nil {
			return err
		}
		return tx.InsertEpoch(g.run.ID, rec)
	})
	g.mu.Lock()
	g.epochs++
	g.mu.Unlock()
}

// pendingWrite is a snapshot of the rows waiting for a commit.
type pendingWrite struct {
	runID    int64
	samples  []metrics.SampleRecord
	progress json.RawMessage
	events   []*store.Event
}

// takePending hands the pending samples, progress and events (plus extra
// events) to a write and clears them.
func (g *ingester) takePending(extra []*store.Event) pendingWrite {
	pw := pendingWrite{runID: g.run.ID, samples: g.samples, progress: g.progress, events: append(g.events, extra...)}
	g.samples, g.events = nil, nil
	g.progress, g.progEv = nil, nil
	return pw
}

func (pw pendingWrite) empty() bool {
	return len(pw.samples) == 0 && pw.progress == nil && len(pw.events) == 0
}

// write stores the snapshot inside tx.
func (pw pendingWrite) write(tx *store.Tx) error {
	if len(pw.samples) > 0 {
		if err := tx.InsertSamples(pw.runID, pw.samples); err != nil {
			return err
		}
	}
	if pw.progress != nil {
		if err := tx.SetProgress(pw.runID, pw.progress); err != nil {
			return err
		}
	}
	for _, ev := range pw.events {
		if err := tx.AppendEvent(ev); err != nil {
			return err
		}
	}
	return nil
}

// flush commits pending samples, events and progress (plus extra events),
// after anything still queued.
func (g *ingester) flush(extra []*store.Event) {
	pw := g.takePending(extra)
	if pw.empty() {
		g.drain()
		return
	}
	g.write(false, pw.write)
}

// write queues fn behind the writes not yet committed and commits what it
// can, in order. keep marks a write that must never be dropped.
func (g *ingester) write(keep bool, fn func(*store.Tx) error) {
	if g.position != nil {
		inner := fn
		file, at := g.position() // as they are when the write is queued
		fn = func(tx *store.Tx) error {
			if err := inner(tx); err != nil {
				return err
			}
			return tx.SetRecordsPos(g.run.ID, file, at)
		}
	}
	g.queue = append(g.queue, queuedWrite{fn: fn, keep: keep})
	if len(g.queue) > maxQueuedWrites {
		kept := g.queue[:0]
		dropped := 0
		for _, w := range g.queue {
			if w.keep {
				kept = append(kept, w)
			} else {
				dropped++
			}
		}
		g.queue = kept
		g.dropped = g.dropped || dropped > 0
		g.m.opts.Logf("run %d: dropped %d queued sample/log writes the store refused (their lines are in %s, ingested from it once the store accepts)", g.run.ID, dropped, g.log.path)
	}
	g.drain()
}

// drain commits queued writes in order until one fails; it reports
// whether the queue is empty. A write refused because the database file
// is gone is dropped (it can never succeed; the record log keeps it).
//
// A refusal does not stop the run: the write is retried (each second, and
// with every later write), and the record log keeps the lines meanwhile.
// When the store accepts again after writes were dropped, what the log
// holds and the store lacks is ingested from it (ingestRecordLog).
func (g *ingester) drain() bool {
	for len(g.queue) > 0 {
		err := g.m.update(g.ctx(), g.queue[0].fn)
		if err == nil {
			g.queue[0] = queuedWrite{}
			g.queue = g.queue[1:]
			continue
		}
		g.mu.Lock()
		g.lastErr = err.Error()
		g.mu.Unlock()
		if errors.Is(err, store.ErrGone) {
			g.m.opts.Logf("run %d: store: %v", g.run.ID, err)
			g.fail(err)
			g.queue = nil
			return true
		}
		if !g.refused {
			g.refused, g.refusedWhy = true, failureReason(err)
			g.m.opts.Logf("run %d: store: %v; the training goes on, its records are kept in %s and stored once the store accepts again",
				g.run.ID, err, g.log.path)
		}
		return false
	}
	g.queue = nil
	g.caughtUp()
	return true
}

// caughtUp is called when every queued write has committed: after a
// refusal, what the queue dropped is ingested from the record log, and
// the refusal is recorded in the run's events.
func (g *ingester) caughtUp() {
	if g.dropped && g.log.pending() == 0 {
		if err := g.m.ingestRecordLog(g.ctx(), g.run, false); err != nil {
			g.m.opts.Logf("run %d: ingest the record log after the store refused writes: %v", g.run.ID, err)
		} else {
			g.dropped = false
		}
	}
	if !g.refused {
		return
	}
	g.refused = false
	reason := g.refusedWhy
	g.m.opts.Logf("run %d: the store accepts writes again (it refused: %s)", g.run.ID, reason)
	g.events = append(g.events, g.event(store.EventLog, "warn",
		fmt.Sprintf("the store refused this run's records for a while (%s); the training went on and they were stored from the record log", units.Clip(reason, 200)), nil))
}

// fail reports the first failure to store or log a record.
func (g *ingester) fail(err error) {
	if g.failed || g.onFailure == nil {
		return
	}
	g.failed = true
	g.onFailure(failureReason(err))
}

// failureReason says in words why a record could not be kept.
func failureReason(err error) string {
	switch {
	case store.IsDiskFull(err):
		return "no space left on device"
	case errors.Is(err, syscall.EIO):
		return "input/output error"
	case errors.Is(err, store.ErrGone):
		return "the database file was deleted"
	}
	return err.Error()
}

func (g *ingester) lastError() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lastErr
}
