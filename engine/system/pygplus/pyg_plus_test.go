package pygplus

import (
	"runtime"
	"slices"
	"testing"

	"outcore/engine/system/systest"
)

// TestGatherThreadTrainsTheSameModel: gathering batch i+1 while batch i
// trains (the artifact's gather thread) feeds the trainer the same batches
// in the same order with the same rows as the inline gather, so the losses
// are equal; the deviations say which one ran.
func TestGatherThreadTrainsTheSameModel(t *testing.T) {
	run := func(overlap string) systest.Result {
		return systest.Run(t, systest.Config(t, Name, map[string]string{"overlap": overlap}))
	}
	over, inline := run("true"), run("false")
	if a, b := over.Losses(), inline.Losses(); !slices.Equal(a, b) {
		t.Fatalf("losses with the gather thread %v, inline %v", a, b)
	}
	if !systest.HasDeviation(over.Start.Deviations, "gather thread overlaps") || !systest.HasDeviation(inline.Start.Deviations, "overlap=false") {
		t.Fatalf("deviations %q / %q do not name the gather's placement", over.Start.Deviations, inline.Start.Deviations)
	}
	for i, e := range over.Epochs {
		if e.ExtractS == 0 {
			t.Fatalf("epoch %d: no gather time recorded", i)
		}
	}
}

// TestSampleOnly: with stages=sample an epoch samples every batch and
// trains none, and says so (systest.CheckSampleOnly).
func TestSampleOnly(t *testing.T) { systest.CheckSampleOnly(t, Name) }

// TestIODepthEmulation: option io_depth=N (a paper host's thread count,
// DESIGN §13) gathers with N threads, one page fault in flight each, and
// delivers the same rows to the same batches (equal losses).
func TestIODepthEmulation(t *testing.T) {
	base := systest.Run(t, systest.Config(t, Name, nil))
	r := systest.Run(t, systest.Config(t, Name, map[string]string{"io_depth": "3"}))
	if got, want := r.Losses(), base.Losses(); !slices.Equal(got, want) {
		t.Fatalf("losses %v with io_depth=3, %v without", got, want)
	}
	if !systest.HasDeviation(r.Logs, ", 3 gather threads,") {
		t.Errorf("no log line of 3 gather threads: %q", r.Logs)
	}
	if !systest.HasDeviation(r.Start.Deviations, "io_depth=3: the gather copies from the mapping with 3 threads") || systest.HasDeviation(base.Start.Deviations, "io_depth=") {
		t.Errorf("deviations: %q (io_depth=3), %q (default)", r.Start.Deviations, base.Start.Deviations)
	}
	// The depth of the page faults in the I/O floor (DESIGN §11): every
	// gather thread and sampling worker can wait on one.
	for i, e := range r.Epochs {
		if e.MapFaultThreads != 3+runtime.NumCPU() {
			t.Errorf("epoch %d: map_fault_threads %d with io_depth=3 and %d samplers, want %d", i, e.MapFaultThreads, runtime.NumCPU(), 3+runtime.NumCPU())
		}
		// A thread that faults on a page another thread is reading counts a
		// major fault and no bytes, so a page read can stand for at most
		// one fault per thread that could wait on it (each waits on one at
		// a time); readahead only adds bytes.
		if e.MapFaults > 0 && e.MapFaultBytes*int64(e.MapFaultThreads) < e.MapFaults*int64(pageSize) {
			t.Errorf("epoch %d: %d page faults read %d bytes, less than a page for every %d faults (the threads that could wait on one read)", i, e.MapFaults, e.MapFaultBytes, e.MapFaultThreads)
		}
	}
	if o := (options{ioThreads: 8, ioDepth: 3}); o.gatherThreads() != 3 {
		t.Errorf("gather threads %d with io_depth=3, want 3", o.gatherThreads())
	}
	if o := (options{ioThreads: 8}); o.gatherThreads() != 8 {
		t.Errorf("gather threads %d without io_depth, want io_threads 8", o.gatherThreads())
	}
}
