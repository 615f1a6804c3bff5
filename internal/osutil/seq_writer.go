package osutil

import (
	"fmt"
	"os"
)

// writebackChunk is how much a SeqWriter lets accumulate before starting
// write-back of it.
const writebackChunk = 32 << 20

// SeqWriter writes a file sequentially and keeps the page cache out of the
// way: every writebackChunk bytes it starts write-back of the chunk just
// written (so the disk works while the generator computes, instead of
// everything waiting for one huge fsync at the end), waits for the chunk
// before that to reach the disk, and drops it from the page cache (so
// writing a 10 GiB dataset does not evict everyone else's cache). Where the
// OS lacks these calls (non-Linux) it is a plain writer.
type SeqWriter struct {
	f       *os.File
	off     int64 // bytes written
	started int64 // write-back started for [0, started)
	dropped int64 // written back and dropped for [0, dropped)
}

// NewSeqWriter writes f from its start.
func NewSeqWriter(f *os.File) *SeqWriter { return &SeqWriter{f: f} }

// Write appends b.
func (w *SeqWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.off += int64(n)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
	if w.off-w.started >= writebackChunk {
		// Wait for the previous chunk and drop it, then start this one.
		if w.started > w.dropped {
			if err := WaitWriteback(w.f, w.dropped, w.started-w.dropped); err != nil {
				return n, fmt.Errorf("write-back %s: %w", w.f.Name(), err)
			}
			DropRange(w.f, w.dropped, w.started-w.dropped)
			w.dropped = w.started
		}
		StartWriteback(w.f, w.started, w.off-w.started)
		w.started = w.off
	}
	return n, nil
}

// Close makes what was written durable (fsync), drops the file from the
// page cache and closes it: a file written this way leaves none of its
// pages, dirty or clean, charged to the writer's memory cgroup. It returns
// the first error.
func (w *SeqWriter) Close() error {
	err := w.f.Sync()
	if err == nil {
		err = DropCache(w.f)
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", w.f.Name(), err)
	}
	return nil
}
