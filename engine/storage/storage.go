package storage

import (
	"context"
	"errors"
	"fmt"
	"os"

	"outcore/engine/metrics"
	"outcore/engine/vocab"
)

// Backend names an I/O backend (its names are the configuration's
// vocabulary, engine/vocab).
type Backend = vocab.Backend

// The backends. BackendAuto (the empty string) lets OpenFile choose: uring
// when io_uring is available, else pread.
const (
	BackendAuto  = vocab.BackendAuto
	BackendUring = vocab.BackendUring
	BackendPread = vocab.BackendPread
	BackendMmap  = vocab.BackendMmap
)

// ParseBackend turns a command-line word into a Backend; "" and "auto" mean
// BackendAuto (vocab.ParseBackend; its error wraps ErrInvalid).
func ParseBackend(s string) (Backend, error) { return vocab.ParseBackend(s) }

// Defaults used where an Options field is zero.
const (
	DefaultQueueDepth    = 128
	DefaultWorkers       = 64
	DefaultMaxMergeBytes = 64 << 10
)

// Sentinel errors callers can branch on with errors.Is.
var (
	// ErrOutOfRange: a row id or byte range lies (partly) outside the file.
	ErrOutOfRange = errors.New("out of range")
	// ErrInvalid: a malformed argument (bad option, short destination,
	// ...); the one sentinel of engine/vocab, whose backend names share it.
	ErrInvalid = vocab.ErrInvalid
	// ErrDirectIOUnsupported: the file system refuses O_DIRECT (e.g. some
	// tmpfs); set Options.AllowBuffered to fall back to buffered reads.
	ErrDirectIOUnsupported = errors.New("O_DIRECT not supported on this file system")
	// ErrBackendUnavailable: the requested backend cannot run here (io_uring
	// disabled by the kernel or a seccomp profile).
	ErrBackendUnavailable = errors.New("I/O backend unavailable")
	// ErrBusy: the call conflicts with outstanding work (sync read while
	// asynchronous requests are outstanding, concurrent Reap, closing a File
	// with open Readers).
	ErrBusy = errors.New("busy")
	// ErrClosed: the File or Reader is closed.
	ErrClosed = errors.New("closed")
)

// Options configures OpenFile. The zero value is usable: automatic backend,
// depth 128, 64 pread workers, 64 KiB merges, detected block size, no rows.
type Options struct {
	// Backend selects the I/O backend; BackendAuto picks uring, else pread.
	Backend Backend
	// RowBytes is the size of one row for ReadRows and RowRequest; 0 leaves
	// only range reads available.
	RowBytes int64
	// QueueDepth is the most device reads a Reader keeps in flight (the ring
	// size for uring). Default DefaultQueueDepth.
	QueueDepth int
	// Workers is the number of pread goroutines a File runs for all its
	// Readers. Default DefaultWorkers. Ignored by other backends.
	Workers int
	// MaxMergeBytes caps one device request: runs of adjacent needed blocks
	// are merged up to this size (rounded down to whole blocks, at least one
	// block). Set it to the block size to merge nothing beyond blocks that
	// rows share. Default DefaultMaxMergeBytes.
	MaxMergeBytes int64
	// BlockSize overrides the detected direct-I/O alignment (a power of two):
	// the read granularity. Every wanted row or range is widened to the
	// BlockSize-aligned blocks that cover it; a larger value than the
	// device's reads what the papers' artifacts read (Ginex: 4 KiB).
	BlockSize int64
	// SeparateReads reads every wanted row or range with its own device
	// requests: its covering blocks are shared with no other row and merged
	// with none (Ginex's artifact: one pread per row). By default rows that
	// share a block are read once and adjacent blocks merged.
	SeparateReads bool
	// NoMerge keeps every wanted row or range in its own device request
	// (its covering blocks, up to MaxMergeBytes) but, unlike
	// SeparateReads, still reads a block that rows share once: the request
	// of a row that starts in the previous row's last block extends that
	// request. Adjacent rows are not merged (GNNDrive's artifact with
	// merge=false: one request per row at the sector size).
	NoMerge bool
	// AllowBuffered lets OpenFile fall back to buffered (page-cache) reads,
	// with a log line, where the file system refuses O_DIRECT. Tests on
	// tmpfs use it; measurements should not.
	AllowBuffered bool
	// FixedFile registers the file with each ring (uring only) so requests
	// skip the per-request file lookup.
	FixedFile bool
	// FixedBuffers registers each Reader's buffer arena with its ring (uring
	// only) so requests skip per-request page pinning. The arena then stays
	// resident (it counts against a memory cgroup).
	FixedBuffers bool
	// SingleIssuer sets each Reader's ring up as fio does
	// (IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN, uring only): completions
	// are posted when the reader asks for them instead of through task work
	// that, with the default ring, lets a whole queue finish before the
	// reaper wakes (docs/benchmarks/storage.md, "completion convoys"). The
	// caller must create the Reader and make every call on it from one OS
	// thread (runtime.LockOSThread); another thread gets EEXIST. Kernels
	// before 6.1 get the default ring.
	SingleIssuer bool
	// Logger receives OpenFile's one line about the backend it chose.
	// Nil writes the line to stderr.
	Logger func(line string)
	// Account, when set, receives the File's device reads (DeviceBytes,
	// DeviceRows of Stats) under Kind as Readers return: a run's per-kind
	// read counters (DESIGN §5). train.Env sets it in the run's options.
	Account *metrics.ReadAccount
	// Kind is what the file holds (metrics.FileFeatures, FileTopology,
	// FileOther); empty: Account.KindOf(path), which knows a dataset's
	// files by name.
	Kind string
}

// withDefaults fills zero fields.
func (o Options) withDefaults() (Options, error) {
	if o.QueueDepth == 0 {
		o.QueueDepth = DefaultQueueDepth
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.MaxMergeBytes == 0 {
		o.MaxMergeBytes = DefaultMaxMergeBytes
	}
	switch {
	case o.QueueDepth < 1 || o.QueueDepth > 4096:
		return o, fmt.Errorf("%w: queue depth %d (want 1..4096)", ErrInvalid, o.QueueDepth)
	case o.Workers < 1:
		return o, fmt.Errorf("%w: workers %d (want >= 1)", ErrInvalid, o.Workers)
	case o.RowBytes < 0:
		return o, fmt.Errorf("%w: row bytes %d", ErrInvalid, o.RowBytes)
	case o.MaxMergeBytes < 0 || o.MaxMergeBytes > 1<<30:
		return o, fmt.Errorf("%w: max merge bytes %d (want 0..1 GiB)", ErrInvalid, o.MaxMergeBytes)
	case o.BlockSize < 0 || o.BlockSize&(o.BlockSize-1) != 0:
		return o, fmt.Errorf("%w: block size %d is not a power of two", ErrInvalid, o.BlockSize)
	}
	if _, err := ParseBackend(string(o.Backend)); err != nil {
		return o, err
	}
	if o.Logger == nil {
		o.Logger = func(line string) { fmt.Fprintln(os.Stderr, line) }
	}
	return o, nil
}

// Request is one asynchronous read: len(Dst) bytes of the file from byte
// Off. Tag comes back in the request's Completion.
type Request struct {
	Off int64
	Dst []byte
	Tag uint64
	row bool // built by File.RowRequest: counts as one row read
}

// Completion reports that the request with Tag finished; Err is nil when
// Dst holds the requested bytes.
type Completion struct {
	Tag uint64
	Err error
}

// Reader reads rows and ranges of one File. See the package comment for
// the concurrency rules.
type Reader interface {
	// ReadRows stores row ids[i] in dst[i*RowBytes:(i+1)*RowBytes]. Ids may
	// come in any order and repeat; rows sharing a block are read once.
	ReadRows(ctx context.Context, ids []int64, dst []byte) error
	// ReadRange fills dst with the file's bytes from off (any alignment).
	ReadRange(ctx context.Context, off int64, dst []byte) error
	// Submit validates all reqs, then plans (coalescing them together) and
	// issues them without waiting. Invalid input submits nothing.
	Submit(reqs []Request) error
	// Reap appends finished requests to out and returns it, blocking until
	// at least min requests are finished or none is outstanding, or ctx is
	// done. min <= 0 only collects what is already finished.
	Reap(ctx context.Context, out []Completion, min int) ([]Completion, error)
	// Outstanding is the number of submitted requests not yet reaped.
	Outstanding() int
	// Close waits for reads in flight and releases the Reader's resources.
	Close() error
}
