package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"outcore/engine/devprofile"

	"outcore/engine/storage"
)

// benchCmd is `outcore bench`.
func benchCmd() *Command {
	return &Command{
		Name:        "bench",
		Args:        "<benchmark> [flags]",
		Short:       "micro-benchmarks and device measurements (bench io, bench device, bench mmap, bench sync, bench profile-fit)",
		Subcommands: []*Command{benchIOCmd(), benchDeviceCmd(), benchMmapCmd(), benchSyncCmd(), benchProfileCmd()},
	}
}

// benchIOConfig is the parsed `bench io` command line.
type benchIOConfig struct {
	file         string
	rowBytes     int64
	depth        int
	seconds      float64
	io           string
	threads      int
	batch        int
	workers      int
	mergeBytes   int64
	fixedFile    bool
	fixedBuffers bool
	seed         uint64
}

// benchIOCmd is `outcore bench io`: random reads of whole rows from a file
// through one storage backend, printing one machine-readable line.
func benchIOCmd() *Command {
	var c benchIOConfig
	fs := newFlagSet("bench io", nil)
	fs.StringVar(&c.file, "file", "", "file to read (required); any regular file or block device")
	fs.Int64Var(&c.rowBytes, "row-bytes", 512, "bytes per row; row ids are uniform in [0, size/row-bytes)")
	fs.IntVar(&c.depth, "depth", storage.DefaultQueueDepth, "reads in flight per thread (uring ring size; pread per-reader limit)")
	fs.Float64Var(&c.seconds, "seconds", 5, "measurement time")
	fs.StringVar(&c.io, "io", "auto", "backend: uring, pread, mmap or auto")
	fs.IntVar(&c.threads, "threads", 1, "goroutines issuing reads, each with its own Reader")
	fs.IntVar(&c.batch, "batch", 0, "0: keep depth single-row requests in flight (Submit/Reap, like fio); N: synchronous ReadRows of N random rows")
	fs.IntVar(&c.workers, "workers", storage.DefaultWorkers, "pread worker goroutines")
	fs.Int64Var(&c.mergeBytes, "merge-bytes", 0, "largest merged request in bytes (0: default)")
	fs.BoolVar(&c.fixedFile, "fixed-file", false, "uring: register the file with each ring")
	fs.BoolVar(&c.fixedBuffers, "fixed-buffers", false, "uring: register each reader's buffers")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed")
	return &Command{
		Name:  "io",
		Args:  "--file F [--row-bytes 512] [--depth 128] [--seconds 5] [--io uring|pread|mmap] [--threads N] [--batch N]",
		Short: "random row reads from a file through one storage backend",
		Long: "Random reads of whole rows from a file through one storage backend. Prints one line:\n" +
			"io=... iops=N mbps=N p50_us=N p99_us=N ...",
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			return benchIO(ctx, c, s.Out, s.Err)
		},
	}
}

// benchIO runs one `bench io` measurement.
func benchIO(ctx context.Context, c benchIOConfig, stdout, stderr io.Writer) error {
	switch {
	case c.file == "":
		return usagef("--file is required")
	case c.rowBytes <= 0:
		return usagef("--row-bytes must be positive")
	case c.depth <= 0 || c.threads <= 0 || c.batch < 0 || c.seconds <= 0:
		return usagef("--depth, --threads and --seconds must be positive, --batch >= 0")
	}
	backend, err := storage.ParseBackend(c.io)
	if err != nil {
		return fmt.Errorf("%w: --io: %v", ErrUsage, err)
	}
	f, err := storage.OpenFile(c.file, storage.Options{
		Backend:       backend,
		RowBytes:      c.rowBytes,
		QueueDepth:    c.depth,
		Workers:       c.workers,
		MaxMergeBytes: c.mergeBytes,
		FixedFile:     c.fixedFile,
		FixedBuffers:  c.fixedBuffers,
		Logger:        func(line string) { fmt.Fprintln(stderr, line) },
	})
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Rows() == 0 {
		return fmt.Errorf("bench io: %s holds no whole row of %d bytes", c.file, c.rowBytes)
	}
	readers := make([]storage.Reader, c.threads)
	for i := range readers {
		if readers[i], err = f.NewReader(); err != nil {
			for _, r := range readers[:i] {
				r.Close()
			}
			return err
		}
	}
	start := time.Now()
	deadline := start.Add(time.Duration(c.seconds * float64(time.Second)))
	rows := make([]int64, c.threads)
	errs := make([]error, c.threads)
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(c.seed, uint64(i)))
			if c.batch > 0 {
				rows[i], errs[i] = benchBatch(ctx, f, r, rng, c.batch, deadline)
			} else {
				rows[i], errs[i] = benchStream(ctx, f, r, rng, c.depth, deadline)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if now := time.Now(); now.After(deadline) {
		elapsed = deadline.Sub(start) // rows count only up to the deadline
	}
	for _, r := range readers {
		if err := r.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bench io: %w", err)
	}
	var total int64
	for _, n := range rows {
		total += n
	}
	s := f.Stats()
	sec := elapsed.Seconds()
	fmt.Fprintf(stdout, "io=%s file=%s row_bytes=%d depth=%d threads=%d batch=%d seconds=%.2f rows=%d iops=%.0f mbps=%.1f p50_us=%.1f p99_us=%.1f requests=%d bytes_read=%d read_mbps=%.1f amplification=%.3f direct=%v block=%d\n",
		f.Backend(), c.file, c.rowBytes, c.depth, c.threads, c.batch, sec, total,
		float64(total)/sec, float64(total*c.rowBytes)/sec/1e6,
		float64(s.Latency.Percentile(0.50))/1e3, float64(s.Latency.Percentile(0.99))/1e3,
		s.Requests, s.BytesRead, float64(s.BytesRead)/sec/1e6, s.Amplification(), f.Direct(), f.BlockSize())
	return nil
}

// benchStream keeps depth single-row requests in flight until the deadline
// and returns how many finished before it.
func benchStream(ctx context.Context, f *storage.File, r storage.Reader, rng *rand.Rand, depth int, deadline time.Time) (int64, error) {
	nrows := f.Rows()
	return devprofile.StreamReads(ctx, f, r, func() int64 { return rng.Int64N(nrows) }, depth, 0, deadline)
}

// benchBatch reads batches of random rows with ReadRows until the deadline.
func benchBatch(ctx context.Context, f *storage.File, r storage.Reader, rng *rand.Rand, batch int, deadline time.Time) (int64, error) {
	nrows := f.Rows()
	ids := make([]int64, batch)
	dst := make([]byte, int64(batch)*f.RowBytes())
	var n int64
	for time.Now().Before(deadline) {
		for i := range ids {
			ids[i] = rng.Int64N(nrows)
		}
		if err := r.ReadRows(ctx, ids, dst); err != nil {
			return n, err
		}
		n += int64(batch)
	}
	return n, nil
}
