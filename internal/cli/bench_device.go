package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/storage"
	"outcore/internal/osutil"
	"outcore/internal/units"
	"outcore/internal/version"
)

// benchDeviceConfig is the parsed `bench device` command line.
type benchDeviceConfig struct {
	dataDir  string
	file     string
	size     string
	seconds  float64
	depths   string
	sizes    string
	seqBytes int64
	seqDepth int
	fio      string
	pairs    int
}

// benchDeviceCmd is `outcore bench device`: measure the storage holding
// the data directory once (DESIGN §11) and keep the profile there, for
// each epoch's I/O floor.
func benchDeviceCmd() *Command {
	var c benchDeviceConfig
	fs := newFlagSet("bench device", &c.dataDir)
	fs.StringVar(&c.file, "file", "", "file to read (default <data dir>/bench-device.bin, written once with random bytes)")
	fs.StringVar(&c.size, "size", "1GiB", "size of the file written (larger than the disk's cache)")
	fs.Float64Var(&c.seconds, "seconds", 2, "seconds per measurement")
	fs.StringVar(&c.depths, "depths", "1,16,64", "requests in flight, comma-separated")
	fs.StringVar(&c.sizes, "sizes", "512,4096,16384,65536,262144,1048576", "random-read request sizes in bytes (the variants' 512 B rows and 4 KiB blocks, merged requests)")
	fs.Int64Var(&c.seqBytes, "seq-bytes", 1<<20, "request size of the sequential-bandwidth measurement")
	fs.IntVar(&c.seqDepth, "seq-depth", 8, "requests in flight of the sequential-bandwidth measurement")
	fs.StringVar(&c.fio, "fio", "auto", "repeat the largest-depth 512 B and 4 KiB reads and the sequential read with fio: auto (when installed) or off")
	fs.IntVar(&c.pairs, "fio-pairs", 3, "times each fio check runs ours then fio back to back (the check keeps the medians)")
	return &Command{
		Name:  "device",
		Args:  "[--size 1GiB] [--seconds 2] [--depths 1,16,64] [--sizes 512,4096,...] [--fio auto|off] [--fio-pairs 3]",
		Short: "measure this host's storage (IOPS by request size and depth, sequential bandwidth) for the I/O floor",
		Long: "Reads a file on the data directory's file system with io_uring and O_DIRECT: random reads at each\n" +
			"request size and depth, and sequential reads, and checks them against fio when it is installed\n" +
			"(the same job shape and ring setup; ours and fio run back to back --fio-pairs times, medians kept).\n" +
			"Writes <data dir>/" + metrics.DeviceProfileFile + ", which every later run on this host uses for its\n" +
			"epochs' io_floor_s and io_efficiency (docs/DESIGN.md §11). Measure on a quiet machine.",
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			return benchDevice(ctx, c, s.Out)
		},
	}
}

func benchDevice(ctx context.Context, c benchDeviceConfig, out io.Writer) error {
	depths, err := positiveInts(c.depths)
	if err != nil {
		return usagef("--depths: %v", err)
	}
	sizes, err := positiveInts(c.sizes)
	if err != nil {
		return usagef("--sizes: %v", err)
	}
	size, err := units.ParseMemLimit(c.size, 0)
	if err != nil || size < 1<<20 {
		return usagef("--size: %q, want a size of at least 1MiB", c.size)
	}
	if !(c.seconds > 0) || c.seqBytes < 512 || c.seqDepth < 1 || (c.fio != "auto" && c.fio != "off") || c.pairs < 1 {
		return usagef("--seconds must be positive, --seq-bytes at least 512, --seq-depth at least 1, --fio auto or off, --fio-pairs at least 1")
	}
	dataDir := dataset.ResolveDataDir(c.dataDir)
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	file := c.file
	if file == "" {
		file = filepath.Join(dataDir, "bench-device.bin")
	}
	if err := ensureBenchFile(file, size); err != nil {
		return err
	}
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	dev, _ := osutil.DeviceID(dataDir)
	host := osutil.CollectHost(dataDir)
	p := metrics.DeviceProfile{Hostname: host.Hostname, Device: dev, DiskModel: host.DiskModel, File: file, FileBytes: fi.Size(),
		MeasuredAt: time.Now().UTC().Format(time.RFC3339), Version: version.String(), Cores: host.Cores,
		SeqRequestBytes: c.seqBytes, SeqDepth: c.seqDepth}
	p.LoadAvg[0] = loadAvg1()
	dur := time.Duration(c.seconds * float64(time.Second))
	for _, sz := range sizes {
		for _, d := range depths {
			n, st, sec, err := deviceReads(ctx, file, int64(sz), d, dur, false)
			if err != nil {
				return fmt.Errorf("bench device: %d B at depth %d: %w", sz, d, err)
			}
			pt := metrics.IOPSPoint{Bytes: int64(sz), Depth: d, IOPS: float64(n) / sec,
				P50us: float64(st.Latency.Percentile(0.5)) / 1e3, P99us: float64(st.Latency.Percentile(0.99)) / 1e3}
			p.Random = append(p.Random, pt)
			fmt.Fprintf(out, "randread bytes=%d depth=%d iops=%.0f mbps=%.1f p50_us=%.1f p99_us=%.1f\n", sz, d, pt.IOPS, pt.IOPS*float64(sz)/1e6, pt.P50us, pt.P99us)
		}
	}
	n, _, sec, err := deviceReads(ctx, file, c.seqBytes, c.seqDepth, dur, true)
	if err != nil {
		return fmt.Errorf("bench device: sequential: %w", err)
	}
	p.SeqBytesPerS = float64(n*c.seqBytes) / sec
	fmt.Fprintf(out, "read bytes=%d depth=%d mbps=%.1f\n", c.seqBytes, c.seqDepth, p.SeqBytesPerS/1e6)
	if c.fio == "auto" {
		if _, err := exec.LookPath("fio"); err != nil {
			fmt.Fprintln(out, "fio: not installed, no check (scripts/install-deps.sh installs it)")
		} else {
			ours := func(j fioJob) (float64, error) {
				n, _, sec, err := deviceReads(ctx, file, j.bs, j.depth, dur, j.seq)
				if j.seq {
					return float64(n*j.bs) / sec, err
				}
				return float64(n) / sec, err
			}
			checks, err := fioChecks(ctx, &p, file, depths[len(depths)-1], c.pairs, c.seconds, ours)
			if err != nil {
				return fmt.Errorf("bench device: fio check: %w", err)
			}
			p.Fio = checks
			for _, ch := range checks {
				agree := "agrees within 10 %"
				if ch.Ratio < 0.9 || ch.Ratio > 1.1 {
					agree = "DISAGREES by more than 10 %"
				}
				rs := make([]string, len(ch.PairRatios))
				for i, r := range ch.PairRatios {
					rs[i] = strconv.FormatFloat(r, 'f', 3, 64)
				}
				fmt.Fprintf(out, "fio %s: ours %.0f, fio %.0f, ratio %.3f (median of %d back-to-back pairs: %s) (%s)\n",
					ch.What, ch.Ours, ch.Fio, ch.Ratio, ch.Pairs, strings.Join(rs, " "), agree)
			}
		}
	}
	p.LoadAvg[1] = loadAvg1()
	if err := p.Check(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	path := metrics.DeviceProfilePath(dataDir)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	fmt.Fprintf(out, "profile %s (load average %.2f → %.2f on %d cores)\n", path, p.LoadAvg[0], p.LoadAvg[1], p.Cores)
	return nil
}

// positiveInts parses "1,16,64".
func positiveInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive whole number", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

// ensureBenchFile writes size random bytes to path unless a file of that
// size is there, makes it durable and drops it from the page cache.
func ensureBenchFile(path string, size int64) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() == size {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.NewChaCha8([32]byte{'o', 'u', 't', 'c', 'o', 'r', 'e'})
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(buf)) {
		_, _ = rng.Read(buf)
		if _, err := w.Write(buf[:min(left, int64(len(buf)))]); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	err = w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = osutil.DropCache(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// deviceReads keeps depth reads of reqBytes in flight on file through
// io_uring with O_DIRECT for dur (random rows, or in file order when seq)
// and returns how many finished, the file's stats and the seconds.
//
// It measures the device the way fio does: one OS thread owns a ring set
// up as fio's (storage.Options.SingleIssuer), and every request is its own
// device read (SeparateReads: no two requests ever become one), resubmitted
// one per Submit as it is reaped (fio's iodepth_batch_submit=1). With the engine's
// default ring a reaper woke only once the whole queue had finished, so
// the device queue drained to empty before each refill (docs/benchmarks/
// storage.md, "completion convoys").
func deviceReads(ctx context.Context, file string, reqBytes int64, depth int, dur time.Duration, seq bool) (int64, storage.Stats, float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f, err := storage.OpenFile(file, storage.Options{Backend: storage.BackendUring, RowBytes: reqBytes, QueueDepth: depth,
		MaxMergeBytes: max(reqBytes, storage.DefaultMaxMergeBytes), SeparateReads: true, SingleIssuer: true, Logger: func(string) {}})
	if err != nil {
		return 0, storage.Stats{}, 0, err
	}
	defer f.Close()
	if f.Rows() == 0 {
		return 0, storage.Stats{}, 0, fmt.Errorf("%s holds no whole request of %d bytes", file, reqBytes)
	}
	r, err := f.NewReader()
	if err != nil {
		return 0, storage.Stats{}, 0, err
	}
	start := time.Now()
	deadline := start.Add(dur)
	rng := rand.New(rand.NewPCG(1, uint64(reqBytes)))
	next := func() int64 { return rng.Int64N(f.Rows()) }
	if seq {
		var i int64
		next = func() int64 { i++; return (i - 1) % f.Rows() }
	}
	n, err := streamReads(ctx, f, r, next, depth, 1, deadline)
	sec := min(time.Since(start), dur).Seconds()
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return n, f.Stats(), sec, err
}

// streamReads keeps depth row requests in flight until the deadline
// (rows from next) and returns how many finished before it. Each reaped
// batch is resubmitted submitBatch requests per Submit (0: all in one),
// so with 1 the first finished slot is back on the device before the
// rest of the batch is handled, as fio's default iodepth_batch_submit=1.
func streamReads(ctx context.Context, f *storage.File, r storage.Reader, next func() int64, depth, submitBatch int, deadline time.Time) (int64, error) {
	rb := f.RowBytes()
	buf := make([]byte, int64(depth)*rb)
	reqs := make([]storage.Request, 0, depth)
	for slot := range depth {
		reqs = append(reqs, f.RowRequest(next(), buf[int64(slot)*rb:], uint64(slot)))
	}
	if err := r.Submit(reqs); err != nil {
		return 0, err
	}
	var done []storage.Completion
	var n int64
	var err error
	for {
		if done, err = r.Reap(ctx, done[:0], 1); err != nil {
			return n, err
		}
		if time.Now().After(deadline) {
			break
		}
		reqs = reqs[:0]
		for _, c := range done {
			if c.Err != nil {
				return n, c.Err
			}
			reqs = append(reqs, f.RowRequest(next(), buf[int64(c.Tag)*rb:], c.Tag))
		}
		n += int64(len(done))
		for left := reqs; len(left) > 0; {
			k := len(left)
			if submitBatch > 0 {
				k = min(k, submitBatch)
			}
			if err := r.Submit(left[:k]); err != nil {
				return n, err
			}
			left = left[k:]
		}
	}
	for r.Outstanding() > 0 {
		if done, err = r.Reap(ctx, done[:0], r.Outstanding()); err != nil {
			return n, err
		}
	}
	return n, nil
}

// loadAvg1 is the 1-minute load average (0 when unreadable).
func loadAvg1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
