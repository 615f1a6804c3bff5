package metrics

import (
	"runtime"
	"time"

	"outcore/internal/osutil"
)

// ThreadMeter measures one goroutine, locked to its OS thread, over a span
// (StartThreadMeter ... Stop): the device reads its thread causes, its
// major page faults and its CPU time (internal/osutil ThreadIO,
// ThreadCPU).
type ThreadMeter struct {
	t0      time.Time
	read0   int64
	faults0 int64
	cpu0    time.Duration
}

// MappedReads is what a thread's page faults on memory maps read over a
// span: the device bytes and the major faults that read them. Over a span
// in which the thread only copies from maps, Bytes / Faults is what the
// kernel reads per fault (the page and any readahead), which the I/O floor
// models as one request each (DESIGN §11).
type MappedReads struct {
	Bytes, Faults int64
}

// Add adds r to m.
func (m *MappedReads) Add(r MappedReads) {
	m.Bytes += r.Bytes
	m.Faults += r.Faults
}

// StartThreadMeter locks the calling goroutine to its OS thread and starts
// measuring it; Stop unlocks it. Every device read the thread causes in
// between (a page fault included) and all of its CPU time belong to the
// goroutine: this is how a memory-mapped access is attributed to its file
// and a worker's busy time is told from its blocked time (DESIGN §5).
func StartThreadMeter() ThreadMeter { return StartThreadMeterSince(time.Now()) }

// StartThreadMeterSince is StartThreadMeter with the wall time counted
// from t0, when the work was handed to the goroutine: the time it waited to
// be scheduled is wall time too (not CPU time).
func StartThreadMeterSince(t0 time.Time) ThreadMeter {
	runtime.LockOSThread()
	read, faults := osutil.ThreadIO()
	return ThreadMeter{t0: t0, read0: read, faults0: faults, cpu0: osutil.ThreadCPU()}
}

// Stop ends the measurement and unlocks the goroutine: bytes read from the
// device by the thread, its CPU time and the wall time since the start.
func (m ThreadMeter) Stop() (readBytes int64, cpu, wall time.Duration) {
	r, cpu, wall := m.StopMapped()
	return r.Bytes, cpu, wall
}

// StopMapped is Stop with the thread's major page faults in the span
// beside its device bytes: for spans whose reads are page faults on memory
// maps (ReadAccount.AddFaults).
func (m ThreadMeter) StopMapped() (r MappedReads, cpu, wall time.Duration) {
	read, faults := osutil.ThreadIO()
	c := osutil.ThreadCPU()
	wall = time.Since(m.t0)
	runtime.UnlockOSThread()
	cpu = max(0, min(c-m.cpu0, wall))
	return MappedReads{Bytes: read - m.read0, Faults: faults - m.faults0}, cpu, wall
}
