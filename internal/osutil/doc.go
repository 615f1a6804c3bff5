// Package osutil holds outcore's operating-system helpers in one place, so
// that the engine, the experiment runner and the CLI share one copy of
// each (docs/ARCHITECTURE.md, "OS helpers"):
//
//   - memory maps: read-only file maps with readahead off (MapFile, MapFD),
//     anonymous maps outside the Go heap (AnonMap), returning their pages
//     (Release) and page-cache residency (Mincore);
//   - page-cache eviction: posix_fadvise DONTNEED of a file, a range or a
//     whole directory (DropCache, DropRange, DropFileCache, EvictDir), one
//     scan of a file that drops what it has read (SeqReader), and the
//     machine-wide drop_caches (DropAllCaches, root only);
//   - /proc readers: this process's disk reads (/proc/self/io), RSS, peak
//     RSS and anonymous RSS (/proc/self/status), CPU time, the machine's
//     iowait and memory size;
//   - the calling thread's disk reads, major page faults and CPU time
//     (ThreadReadBytes, ThreadIO, ThreadCPU), behind metrics.ThreadMeter;
//   - byte views of number slices (Bytes, View, Aligned), host byte order;
//   - file-system facts and hints: free space (FreeDiskBytes), sequential
//     readahead (AdviseSequential), an exclusive advisory lock (TryLock,
//     Unlock);
//   - the host facts of run records (CollectHost, DiskModel,
//     ProactiveReclaim);
//   - a block device's read counters (BlockStatFile, ReadBlockCounters).
//
// The Linux implementations live in _linux.go files; elsewhere the same
// functions exist and report ErrUnsupported (or an empty fact).
package osutil

import "errors"

// ErrUnsupported is returned off Linux by helpers that need Linux.
var ErrUnsupported = errors.New("not supported on this operating system")
