// Package storage reads feature rows and byte ranges from files on an SSD
// with one of three backends behind one interface:
//
//   - "uring": io_uring + O_DIRECT (github.com/pawelgaczynski/giouring). Each
//     Reader owns one ring, so each goroutine that issues I/O has its own
//     ring. Up to Options.QueueDepth reads are in flight per Reader.
//     Options.SingleIssuer sets the ring up as fio does (SINGLE_ISSUER |
//     DEFER_TASKRUN) for a caller that owns the Reader from one locked OS
//     thread (`outcore bench device`); the default ring reaps whole queues
//     at a time (docs/benchmarks/storage.md, "completion convoys").
//   - "pread": pread(2) + O_DIRECT served by a pool of Options.Workers
//     goroutines shared by all Readers of a File.
//   - "mmap": the file is memory-mapped with readahead off
//     (madvise(MADV_RANDOM)) and rows are copied out, so page faults happen
//     on the calling goroutine, as in PyG+.
//
// OpenFile picks "uring" when the kernel lets it set up a ring, else "pread",
// and logs one line saying which backend it chose and why.
//
// # Alignment and coalescing (GNNDrive §4.4)
//
// Direct I/O must read whole logical blocks at aligned offsets into aligned
// memory. The block size comes from ioctl(BLKSSZGET) on the device holding
// the file, else statx(STATX_DIOALIGN), else st_blksize, else 512 bytes.
// A read of rows or ranges is planned as follows: the rows of one call are
// sorted by offset, each is widened to its covering aligned block range, and
// the union of those ranges is read. Rows that share a block are read once;
// runs of adjacent needed blocks are merged into one device request of at
// most Options.MaxMergeBytes; every row is then copied out of the aligned
// buffers into the caller's destination. Stats.BytesRead against
// Stats.BytesNeeded shows the read amplification this costs or saves.
//
// # Synchronous and asynchronous use
//
// Reader.ReadRows and Reader.ReadRange block until every byte is in the
// destination. Reader.Submit and Reader.Reap form the asynchronous interface
// GNNDrive's extractors and Helios's decoupled submission/completion need:
// Submit plans and issues requests (each with a caller tag) without waiting,
// and Reap collects finished requests. The rows of one Submit call are
// coalesced together. "uring" maps this onto its ring; "pread" emulates it
// with its worker pool; "mmap" copies during Submit and reports the
// completions at the next Reap.
//
// # Concurrency rules
//
//   - A File is safe for concurrent use; it hands out Readers (NewReader).
//   - A Reader is used by one goroutine, with one exception: one goroutine may
//     call Submit while one other goroutine calls Reap (the Helios split of
//     submission and completion handling). Two concurrent Reap calls return
//     ErrBusy for one of them.
//   - ReadRows and ReadRange return ErrBusy while asynchronous requests of
//     the same Reader are outstanding (submitted and not yet reaped).
//   - The Dst of a submitted Request belongs to the Reader until Reap returns
//     that request's Completion; the copy into Dst happens on the goroutine
//     that calls Reap, before Reap returns.
//   - Close every Reader before closing its File; Reader.Close waits for the
//     reads it has in flight, so no buffer is released while the kernel may
//     still write into it.
//   - Stats are atomic counters aggregated over all Readers of a File; each
//     Reader adds its counts when a ReadRows, ReadRange, Submit or Reap call
//     returns.
//
// # Device reads (docs/DESIGN.md §5)
//
// Stats.DeviceBytes and DeviceRows are what the block device delivered:
// for direct I/O the aligned bytes read and every row read (ReadRows,
// RowRequest); for mmap the reads of the copying thread, measured with
// metrics.ThreadMeter around the copies, and the rows whose own copy read
// (checked one by one for rows mincore found not resident). A File opened
// with Options.Account adds them to that account under Options.Kind (by
// default the kind the account gives the file's name), which is how a run
// sums feature and topology reads over every file its variant opens.
// Stats.DeliveredRows is the layer's own count of the rows it delivered
// from the device, taken when a read completes (range reads of a File with
// RowBytes deliver the whole rows they hold); the account keeps it apart
// (AddDelivered) as the epoch counter rows_delivered, which a variant's
// rows_from_device must equal.
package storage
