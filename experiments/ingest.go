package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"outcore/engine/metrics"
	"outcore/gpu"
	"outcore/internal/cgroup"
	"outcore/store"
)

// maxLine caps one stdout line of a child; longer lines are cut.
const maxLine = 1 << 20

// ingester turns a child's stdout records into rows and events. Epochs are
// committed the moment they arrive (with anything pending before them, to
// keep order); samples, logs and progress are committed in one transaction
// per second.
type ingester struct {
	m    *Manager
	run  store.Run
	grp  *cgroup.Group // nil without a cgroup
	gpu  gpu.Sampler
	host metrics.HostFacts // the runner's view; the child's start record refines it

	in   chan []byte
	done chan struct{}

	// Hooks of the slurm executor (slurm_exec.go): onCommit runs inside
	// every transaction that stores records (it commits the records file's
	// offset with them); onStart runs with the start record's.
	onCommit func(tx *store.Tx) error
	onStart  func(tx *store.Tx, rec metrics.StartRecord) error

	// pending, committed by flush
	samples  []metrics.SampleRecord
	events   []*store.Event
	progress json.RawMessage
	progEv   *store.Event

	mu         sync.Mutex // guards what finish reads
	summary    *metrics.SummaryRecord
	summaryRaw json.RawMessage
	peakRSS    int64
	peakCG     int64
	epochs     int
	lastErr    string
}

func newIngester(m *Manager, r store.Run) *ingester {
	return &ingester{m: m, run: r, gpu: m.opts.GPU, in: make(chan []byte, 256), done: make(chan struct{})}
}

// start runs the loop once the child runs in grp (nil without a cgroup);
// host is the runner's view of the machine. Lines sent before wait for it.
func (g *ingester) start(grp *cgroup.Group, host metrics.HostFacts) {
	g.grp, g.host = grp, host
	go g.loop()
}

// loop consumes lines until in is closed, then flushes and closes done.
func (g *ingester) loop() {
	defer close(g.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case line, ok := <-g.in:
			if !ok {
				g.flush(nil)
				return
			}
			g.handle(line)
		case <-tick.C:
			g.flush(nil)
		}
	}
}

func (g *ingester) ctx() context.Context { return context.Background() }

func (g *ingester) event(kind, level, msg string, data json.RawMessage) *store.Event {
	return &store.Event{ExperimentID: g.run.ExperimentID, RunID: g.run.ID, Kind: kind, Level: level, Msg: msg, Data: data}
}

// handle parses one stdout line.
func (g *ingester) handle(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var head struct {
		Type string `json:"type"`
	}
	if line[0] != '{' || json.Unmarshal(line, &head) != nil || head.Type == "" {
		g.events = append(g.events, g.event(store.EventLog, "info", "stdout: "+string(line), nil))
		return
	}
	bad := func(err error) {
		g.events = append(g.events, g.event(store.EventLog, "warn",
			fmt.Sprintf("unreadable %s record: %v: %s", head.Type, err, truncate(string(line), 200)), nil))
	}
	switch head.Type {
	case metrics.TypeStart:
		var rec metrics.StartRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			bad(err)
			return
		}
		g.applyStart(rec, line)
	case metrics.TypeEpoch:
		var rec metrics.EpochRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			bad(err)
			return
		}
		g.commitEpoch(&rec, line)
	case metrics.TypeSample:
		var rec metrics.SampleRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			bad(err)
			return
		}
		g.fillSample(&rec)
		data, _ := json.Marshal(rec)
		g.samples = append(g.samples, rec)
		g.events = append(g.events, g.event(store.EventSample, "info", "", data))
	case metrics.TypeProgress:
		var rec metrics.ProgressRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			bad(err)
			return
		}
		// Progress is coalesced: only the newest one per flush is kept.
		g.progress = append(json.RawMessage(nil), line...)
		if g.progEv == nil {
			g.progEv = g.event(store.EventProgress, "info", "", nil)
			g.events = append(g.events, g.progEv)
		}
		g.progEv.Data = g.progress
	case metrics.TypeLog:
		var rec metrics.LogRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			bad(err)
			return
		}
		level := rec.Level
		if level == "" {
			level = "info"
		}
		g.events = append(g.events, g.event(store.EventLog, level, rec.Msg, append(json.RawMessage(nil), line...)))
	case metrics.TypeSummary:
		var rec metrics.SummaryRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			bad(err)
			return
		}
		g.mu.Lock()
		g.summary = &rec
		g.summaryRaw = append(json.RawMessage(nil), line...)
		g.mu.Unlock()
		g.events = append(g.events, g.event(store.EventLog, "info",
			fmt.Sprintf("summary: %s after %d epochs", rec.Outcome, rec.Epochs), g.summaryRaw))
		if len(rec.Deviations) > 0 {
			// The summary's list is complete (it adds what Prepare decided).
			evs := g.events
			g.events = nil
			g.write(func(tx *store.Tx) error {
				if err := g.writePending(tx, evs); err != nil {
					return err
				}
				return tx.SetDeviations(g.run.ID, rec.Deviations)
			})
		}
	default:
		g.events = append(g.events, g.event(store.EventLog, "info", "record of unknown type "+head.Type, append(json.RawMessage(nil), line...)))
	}
}

// fillSample adds what the runner sees and the child did not report: the
// cgroup's usage (page cache included) and the GPU, and tracks peaks.
func (g *ingester) fillSample(s *metrics.SampleRecord) {
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
	host, _ := json.Marshal(h)
	evs := append(g.events, g.event(store.EventLog, "info",
		fmt.Sprintf("started: system %s, I/O backend %s", rec.System, rec.IOBackend), append(json.RawMessage(nil), line...)))
	g.events = nil
	g.write(func(tx *store.Tx) error {
		if err := g.writePending(tx, evs); err != nil {
			return err
		}
		if err := tx.ApplyStartRecord(g.run.ID, rec, host); err != nil {
			return err
		}
		if g.onStart != nil {
			return g.onStart(tx, rec)
		}
		return nil
	})
}

// commitEpoch commits pending rows and the epoch in one transaction, now.
func (g *ingester) commitEpoch(rec *metrics.EpochRecord, line []byte) {
	evs := append(g.events, g.event(store.EventEpoch, "info",
		fmt.Sprintf("epoch %d: %.3f s", rec.Epoch, rec.EpochS), append(json.RawMessage(nil), line...)))
	g.events = nil
	g.write(func(tx *store.Tx) error {
		if err := g.writePending(tx, evs); err != nil {
			return err
		}
		return tx.InsertEpoch(g.run.ID, rec)
	})
	g.mu.Lock()
	g.epochs++
	g.mu.Unlock()
}

// flush commits pending samples, events and progress (plus extra events).
func (g *ingester) flush(extra []*store.Event) {
	evs := append(g.events, extra...)
	g.events = nil
	if len(evs) == 0 && len(g.samples) == 0 && g.progress == nil {
		return
	}
	g.write(func(tx *store.Tx) error { return g.writePending(tx, evs) })
}

// writePending writes the pending samples and progress and evs inside tx.
func (g *ingester) writePending(tx *store.Tx, evs []*store.Event) error {
	if len(g.samples) > 0 {
		if err := tx.InsertSamples(g.run.ID, g.samples); err != nil {
			return err
		}
	}
	if g.progress != nil {
		if err := tx.SetProgress(g.run.ID, g.progress); err != nil {
			return err
		}
	}
	for _, ev := range evs {
		if err := tx.AppendEvent(ev); err != nil {
			return err
		}
	}
	return nil
}

// write commits fn; pending state is cleared whether or not it succeeds
// (a failed write is logged and recorded, not retried forever).
func (g *ingester) write(fn func(*store.Tx) error) {
	err := g.m.update(g.ctx(), func(tx *store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if g.onCommit != nil {
			return g.onCommit(tx)
		}
		return nil
	})
	g.samples = g.samples[:0]
	g.progress, g.progEv = nil, nil
	if err != nil {
		g.m.opts.Logf("run %d: store: %v", g.run.ID, err)
		g.mu.Lock()
		g.lastErr = err.Error()
		g.mu.Unlock()
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
