package osutil

import (
	"bytes"
	"fmt"
	"strconv"
)

// BlockCounters are a block device's cumulative read counters, from its
// sysfs stat file (Documentation/block/stat.rst): reads completed,
// sectors read (of 512 B, whatever the device's block size), the
// milliseconds read requests spent in the device and its queue, summed
// over the requests, and the milliseconds the device had any request in
// flight (so the growth of the read ticks over that of the I/O ticks is
// the mean number of reads in flight while the device was busy).
type BlockCounters struct {
	Reads       int64
	SectorsRead int64
	ReadTicksMs int64
	IOTicksMs   int64
}

// ParseBlockStat reads a block device's stat file: at least the 11 fields
// of every kernel since 2.6, of which it keeps the reads' and the I/O
// ticks.
func ParseBlockStat(b []byte) (BlockCounters, error) {
	f := bytes.Fields(b)
	if len(f) < 11 {
		return BlockCounters{}, fmt.Errorf("block stat: %d fields, want at least 11: %q", len(f), trimForError(b))
	}
	var v [10]int64
	for i := range v {
		n, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil || n < 0 {
			return BlockCounters{}, fmt.Errorf("block stat: field %d is %q, want a count", i+1, f[i])
		}
		v[i] = n
	}
	return BlockCounters{Reads: v[0], SectorsRead: v[2], ReadTicksMs: v[3], IOTicksMs: v[9]}, nil
}
