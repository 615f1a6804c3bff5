package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"outcore/internal/osutil"
)

// File is one open file read through one backend. It is safe for
// concurrent use; each goroutine that reads takes its own Reader.
type File struct {
	path      string
	opts      Options
	backend   Backend
	fd        int
	direct    bool
	size      int64
	blockSize int64
	memAlign  int64
	alignSrc  string
	mapping   []byte     // mmap backend
	pool      *preadPool // pread backend
	counters  counters

	mu      sync.Mutex
	readers int
	closed  bool
}

// openFile is open(2); tests replace it to emulate a file system that
// refuses O_DIRECT (every file system this project runs on accepts it).
var openFile = unix.Open

// OpenFile opens path for reading with opts. With BackendAuto it uses uring
// when io_uring works here, else pread; either way it logs one line through
// opts.Logger naming the backend and why. A file system without O_DIRECT
// gives ErrDirectIOUnsupported unless opts.AllowBuffered is set.
func OpenFile(path string, opts Options) (*File, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f := &File{path: path, opts: opts, fd: -1}
	if f.opts.Kind == "" {
		f.opts.Kind = opts.Account.KindOf(path)
	}
	f.counters.account, f.counters.kind = opts.Account, f.opts.Kind
	why := "requested"
	switch opts.Backend {
	case BackendAuto:
		if perr := probeUring(); perr != nil {
			f.backend, why = BackendPread, fmt.Sprintf("auto: io_uring unavailable: %v", perr)
		} else {
			f.backend, why = BackendUring, "auto: io_uring available"
		}
	case BackendUring:
		if perr := probeUring(); perr != nil {
			return nil, fmt.Errorf("open %s: %w: io_uring: %v", path, ErrBackendUnavailable, perr)
		}
		f.backend = BackendUring
	default:
		f.backend = opts.Backend
	}
	if err := f.open(); err != nil {
		return nil, err
	}
	mode := "O_DIRECT"
	if !f.direct {
		mode = "buffered"
		if f.backend != BackendMmap {
			mode = "buffered (file system refuses O_DIRECT; AllowBuffered set)"
		}
	}
	var detail string
	switch f.backend {
	case BackendUring:
		detail = fmt.Sprintf("depth %d, merge <= %d B", opts.QueueDepth, f.maxSeg())
	case BackendPread:
		detail = fmt.Sprintf("%d workers, depth %d, merge <= %d B", opts.Workers, opts.QueueDepth, f.maxSeg())
	case BackendMmap:
		detail = "madvise(MADV_RANDOM)"
	}
	opts.Logger(fmt.Sprintf("storage: %s: backend %s (%s), %s, block %d B (%s), %s",
		path, f.backend, why, mode, f.blockSize, f.alignSrc, detail))
	return f, nil
}

// open opens the descriptor, sizes the file, detects the alignment and sets
// up the backend's shared state.
func (f *File) open() error {
	flags := unix.O_RDONLY | unix.O_CLOEXEC
	f.direct = f.backend != BackendMmap
	if f.direct {
		flags |= unix.O_DIRECT
	}
	fd, err := openFile(f.path, flags, 0)
	if errors.Is(err, unix.EINVAL) && f.direct {
		err = f.noDirect(fmt.Errorf("open with O_DIRECT: %w", err))
		if err == nil {
			fd, err = openFile(f.path, flags&^unix.O_DIRECT, 0)
		}
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", f.path, err)
	}
	f.fd = fd
	ok := false
	defer func() {
		if !ok {
			f.release()
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", f.path, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		f.size = st.Size
	case unix.S_IFBLK:
		sz, err := unix.Seek(fd, 0, io.SeekEnd)
		if err != nil {
			return fmt.Errorf("size of block device %s: %w", f.path, err)
		}
		f.size = int64(sz)
	default:
		return fmt.Errorf("open %s: %w: not a regular file or block device", f.path, ErrInvalid)
	}
	al := detectAlignment(fd)
	f.blockSize, f.memAlign, f.alignSrc = al.block, al.mem, al.source
	if f.opts.BlockSize > 0 {
		f.blockSize, f.alignSrc = f.opts.BlockSize, "Options.BlockSize"
	}
	if f.backend == BackendMmap {
		f.blockSize, f.alignSrc = int64(os.Getpagesize()), "page size"
	}
	if f.direct {
		if err := f.probeDirect(); err != nil {
			return err
		}
	}
	switch f.backend {
	case BackendMmap:
		if err := f.mapFile(); err != nil {
			return err
		}
	case BackendPread:
		f.pool = newPreadPool(f.opts.Workers, f.opts.QueueDepth)
	}
	ok = true
	return nil
}

// noDirect decides what happens when O_DIRECT is refused: an error, or
// (AllowBuffered) buffered reads.
func (f *File) noDirect(cause error) error {
	if !f.opts.AllowBuffered {
		return fmt.Errorf("open %s: %w: %v", f.path, ErrDirectIOUnsupported, cause)
	}
	f.direct = false
	return nil
}

// probeDirect reads the first block with O_DIRECT to check that the file
// system accepts direct reads at the detected alignment. A file system that
// opens with O_DIRECT but refuses the read (EINVAL) gets the larger of the
// block size and 4096 tried, then buffered reads or ErrDirectIOUnsupported.
func (f *File) probeDirect() error {
	if f.size == 0 {
		return nil
	}
	buf, err := allocArena(4096)
	if err != nil {
		return err
	}
	defer freeArena(buf)
	for _, bs := range []int64{f.blockSize, max(f.blockSize, 4096)} {
		_, err = unix.Pread(f.fd, buf[:bs], 0)
		if err == nil || !errors.Is(err, unix.EINVAL) {
			if err == nil && bs != f.blockSize {
				f.alignSrc += fmt.Sprintf("; raised to %d after EINVAL", bs)
				f.blockSize = bs
			}
			break
		}
	}
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("read %s: %w", f.path, err)
	}
	if err := f.noDirect(fmt.Errorf("direct read of the first block: %w", err)); err != nil {
		return err
	}
	fd, err := unix.Open(f.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", f.path, err)
	}
	unix.Close(f.fd)
	f.fd = fd
	return nil
}

// maxSeg is the largest device request: MaxMergeBytes rounded down to whole
// blocks, at least one block.
func (f *File) maxSeg() int64 {
	return max(f.opts.MaxMergeBytes&^(f.blockSize-1), f.blockSize)
}

// release frees what open set up.
func (f *File) release() error {
	var errs []error
	if f.pool != nil {
		f.pool.stop()
		f.pool = nil
	}
	if f.mapping != nil {
		if err := osutil.Unmap(f.mapping); err != nil {
			errs = append(errs, fmt.Errorf("unmap %s: %w", f.path, err))
		}
		f.mapping = nil
	}
	if f.fd >= 0 {
		if err := unix.Close(f.fd); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", f.path, err))
		}
		f.fd = -1
	}
	return errors.Join(errs...)
}

// NewReader returns a Reader for one goroutine (uring: with its own ring).
func (f *File) NewReader() (Reader, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", f.path, ErrClosed)
	}
	f.readers++
	f.mu.Unlock()
	var r Reader
	var err error
	switch f.backend {
	case BackendMmap:
		r = newMmapReader(f)
	case BackendUring:
		r, err = newUringReader(f)
	case BackendPread:
		r, err = newPreadReader(f)
	}
	if err != nil {
		f.readerClosed()
		return nil, fmt.Errorf("%s: new %s reader: %w", f.path, f.backend, err)
	}
	return r, nil
}

// readerClosed is called once by each Reader's Close.
func (f *File) readerClosed() {
	f.mu.Lock()
	f.readers--
	f.mu.Unlock()
}

// Close closes the file. All Readers must be closed first.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	if f.readers > 0 {
		return fmt.Errorf("close %s: %d readers still open: %w", f.path, f.readers, ErrBusy)
	}
	f.closed = true
	return f.release()
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Backend is the backend in use.
func (f *File) Backend() Backend { return f.backend }

// Direct reports whether reads bypass the page cache (O_DIRECT).
func (f *File) Direct() bool { return f.direct }

// Size is the file size in bytes at open.
func (f *File) Size() int64 { return f.size }

// BlockSize is the read alignment in use (page size for mmap).
func (f *File) BlockSize() int64 { return f.blockSize }

// RowBytes is Options.RowBytes.
func (f *File) RowBytes() int64 { return f.opts.RowBytes }

// Rows is the number of whole rows in the file (0 without RowBytes).
func (f *File) Rows() int64 {
	if f.opts.RowBytes == 0 {
		return 0
	}
	return f.size / f.opts.RowBytes
}

// Kind is what the file holds for the run's read account (Options.Kind).
func (f *File) Kind() string { return f.opts.Kind }

// ReaderBufferBytes is the I/O buffer each Reader of the File maps outside
// the Go heap (QueueDepth slots of the largest merged request; none for
// the mmap backend): what a memory plan counts per Reader.
func (f *File) ReaderBufferBytes() int64 {
	if f.backend == BackendMmap {
		return 0
	}
	return int64(f.opts.QueueDepth) * int64(slotStride(f))
}

// Options returns the options in effect (defaults filled in).
func (f *File) Options() Options { return f.opts }

// RowRequest builds the asynchronous Request for row id into
// dst[:RowBytes]; like that slice expression it panics when dst is shorter
// than a row. Submit checks that the row lies inside the file.
func (f *File) RowRequest(id int64, dst []byte, tag uint64) Request {
	rb := f.opts.RowBytes
	off := int64(-1) // rejected by Submit
	if rb > 0 && id >= 0 && id <= math.MaxInt64/rb {
		off = id * rb
	}
	return Request{Off: off, Dst: dst[:rb], Tag: tag, row: true}
}

// rangeRows is the rows a range read of n bytes delivers: the whole rows
// its bytes hold (0 for a File without RowBytes). Range reads of row files
// start on a row (packed chunks, partitions, cache lines).
func (f *File) rangeRows(n int) int64 {
	if f.opts.RowBytes <= 0 {
		return 0
	}
	return int64(n) / f.opts.RowBytes
}

// Stats returns the counters summed over all Readers.
func (f *File) Stats() Stats { return f.counters.snapshot(f.backend) }

// ResetStats zeroes the counters (e.g. after a warm-up).
func (f *File) ResetStats() { f.counters.reset() }

// checkRows validates a ReadRows call.
func (f *File) checkRows(ids []int64, dst []byte) error {
	rb := f.opts.RowBytes
	if rb <= 0 {
		return fmt.Errorf("%s: ReadRows: %w: Options.RowBytes not set", f.path, ErrInvalid)
	}
	if need := int64(len(ids)) * rb; int64(len(dst)) < need {
		return fmt.Errorf("%s: ReadRows: %w: dst has %d bytes, %d rows of %d bytes need %d", f.path, ErrInvalid, len(dst), len(ids), rb, need)
	}
	rows := f.size / rb
	for i, id := range ids {
		if id < 0 || id >= rows {
			return fmt.Errorf("%s: ReadRows: ids[%d] = %d: %w: the file has %d rows of %d bytes", f.path, i, id, ErrOutOfRange, rows, rb)
		}
	}
	return nil
}

// checkRange validates a byte range.
func (f *File) checkRange(off int64, n int) error {
	if off < 0 || off > f.size || int64(n) > f.size-off {
		return fmt.Errorf("%s: bytes [%d, %d): %w: the file has %d bytes", f.path, off, off+int64(n), ErrOutOfRange, f.size)
	}
	return nil
}
