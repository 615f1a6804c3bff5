package cli

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/devprofile"
	"outcore/engine/metrics"
	"outcore/engine/storage"
	"outcore/internal/osutil"
	"outcore/internal/units"
)

// benchSyncConfig is the parsed `bench sync` command line.
type benchSyncConfig struct {
	dataDir string
	file    string
	size    string
	bs      int64
	counts  string
	seconds float64
	runs    int
	fio     string
	csvPath string
}

// benchSyncCmd is `outcore bench sync`: GNNDrive's Appendix B (Fig. B.1),
// synchronous reads from N threads against N reads in flight from one
// thread through io_uring, on this host's storage.
func benchSyncCmd() *Command {
	var c benchSyncConfig
	fs := newFlagSet("bench sync", &c.dataDir)
	fs.StringVar(&c.file, "file", "", "existing file to read, never written (default <data dir>/bench-sync.bin, written once with random bytes at --size)")
	fs.StringVar(&c.size, "size", "30GB", "size of the default file written (GNNDrive's Appendix B reads a 30 GB file); not used with --file")
	fs.Int64Var(&c.bs, "bs", 512, "bytes per read (the paper's: the legacy sector size, 512 B)")
	fs.StringVar(&c.counts, "counts", "1,2,4,8,16,32,64,128", "threads of synchronous reads, and io_uring depths, comma-separated")
	fs.Float64Var(&c.seconds, "seconds", 3, "seconds per measurement")
	fs.IntVar(&c.runs, "runs", 3, "runs per point and tool (medians kept)")
	fs.StringVar(&c.fio, "fio", "auto", "repeat each point with fio (--ioengine=psync --numjobs=N; --ioengine=io_uring --iodepth=N): auto (when installed) or off")
	fs.StringVar(&c.csvPath, "csv", "", "also write every run as CSV to this file (tool, mode, n, run, iops, mb_s, mean_lat_us)")
	return &Command{
		Name:  "sync",
		Args:  "[--size 30GB] [--bs 512] [--counts 1,2,...,128] [--seconds 3] [--runs 3] [--fio auto|off] [--csv F]",
		Short: "synchronous reads from N threads against io_uring at depth N (GNNDrive's Appendix B, Fig. B.1)",
		Long: "Random reads of --bs bytes of a file with O_DIRECT, two ways for each count N: synchronous\n" +
			"pread(2) from N threads (outcore's pread backend: N worker threads, each blocking in one read),\n" +
			"and N reads in flight from one thread through io_uring (outcore's uring backend, as bench device).\n" +
			"With fio installed each point is repeated with fio (psync, N jobs; io_uring, depth N) on the same\n" +
			"file. Prints bandwidth and mean latency per point, medians of --runs: ours as N / IOPS (Little's\n" +
			"law for N reads always in flight), fio's as it measures it. Only direct I/O is measured (the mode\n" +
			"GNNDrive's extractors use; the figure also plots buffered reads).",
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			return benchSync(ctx, c, s.Out)
		},
	}
}

// syncPoint is one run: tool ours or fio, mode sync or uring, n threads
// or depth.
type syncPoint struct {
	Tool, Mode string
	N, Run     int
	IOPS       float64
	MeanLatUs  float64
}

func benchSync(ctx context.Context, c benchSyncConfig, out io.Writer) error {
	counts, err := positiveInts(c.counts)
	if err != nil {
		return usagef("--counts: %v", err)
	}
	for _, n := range counts {
		if n > devprofile.MaxDepth {
			return usagef("--counts: %d, want at most %d", n, devprofile.MaxDepth)
		}
	}
	if c.bs < devprofile.MinRequestBytes || c.bs%devprofile.MinRequestBytes != 0 || c.bs > devprofile.MaxRequestBytes {
		return usagef("--bs %d, want a multiple of %d B up to %s (direct I/O reads whole blocks)", c.bs, devprofile.MinRequestBytes, units.Bytes(devprofile.MaxRequestBytes))
	}
	if !(c.seconds > 0) || c.seconds > devprofile.MaxSeconds {
		return usagef("--seconds %v, want more than 0 and at most %d", c.seconds, devprofile.MaxSeconds)
	}
	if c.runs < 1 || c.runs > maxFioPairs {
		return usagef("--runs %d, want 1 to %d", c.runs, maxFioPairs)
	}
	if c.fio != "auto" && c.fio != "off" {
		return usagef("--fio %q, want auto or off", c.fio)
	}
	size, err := units.ParseMemLimit(c.size, 0)
	if err != nil || size < 4*c.bs || size < devprofile.MinFileBytes {
		return usagef("--size %q, want a size of at least %s such as 30GB", c.size, units.Bytes(devprofile.MinFileBytes))
	}
	file, fileBytes, err := syncFile(c, size, out)
	if err != nil {
		return fmt.Errorf("bench sync: %w", err)
	}
	useFio := c.fio == "auto"
	if _, err := exec.LookPath("fio"); useFio && err != nil {
		fmt.Fprintln(out, "fio: not installed, ours only (scripts/install-deps.sh installs it)")
		useFio = false
	}
	load0, _ := metrics.ReadLoad1()
	fmt.Fprintf(out, "# %s: %s, random %d B reads, O_DIRECT, %g s each, medians of %d; load average %.2f\n",
		file, units.Bytes(fileBytes), c.bs, c.seconds, c.runs, load0)
	fmt.Fprintln(out, "mode n | ours MB/s, mean latency µs | fio MB/s, mean latency µs")
	dur := time.Duration(c.seconds * float64(time.Second))
	var all []syncPoint
	for _, mode := range []string{"sync", "uring"} {
		for _, n := range counts {
			tools := []string{"ours"}
			if useFio {
				tools = append(tools, "fio")
			}
			row := fmt.Sprintf("%s %d |", mode, n)
			for _, tool := range tools {
				var mbs, lat []float64
				for i := range c.runs {
					p, err := syncRun(ctx, tool, mode, file, c.bs, n, dur)
					if err != nil {
						return fmt.Errorf("bench sync: %s %s at %d: %w", tool, mode, n, err)
					}
					p.Run = i
					all = append(all, p)
					mbs, lat = append(mbs, p.IOPS*float64(c.bs)/1e6), append(lat, p.MeanLatUs)
				}
				row += fmt.Sprintf(" %.1f, %.0f |", median(mbs), median(lat))
			}
			if !useFio {
				row += " – |"
			}
			fmt.Fprintln(out, row[:len(row)-2])
		}
	}
	load1, _ := metrics.ReadLoad1()
	fmt.Fprintf(out, "# load average %.2f at the end\n", load1)
	if c.csvPath != "" {
		if err := writeSyncCSV(c.csvPath, c.bs, all); err != nil {
			return fmt.Errorf("bench sync: --csv: %w", err)
		}
	}
	return nil
}

// syncFile is the file the bench reads and its size. A file named by
// --file is only read, never written: it may be a dataset's. The default
// probe file is written at size unless one of that size is there,
// refusing one the file system has no room for.
func syncFile(c benchSyncConfig, size int64, out io.Writer) (string, int64, error) {
	if c.file != "" {
		fi, err := os.Stat(c.file)
		switch {
		case err != nil:
			return "", 0, fmt.Errorf("--file: %w", err)
		case !fi.Mode().IsRegular() || fi.Size() < 4*c.bs:
			return "", 0, fmt.Errorf("--file %s: want a regular file of at least 4 reads (%d B), it has %d B", c.file, 4*c.bs, fi.Size())
		}
		return c.file, fi.Size(), nil
	}
	file := filepath.Join(dataset.ResolveDataDir(c.dataDir), "bench-sync.bin")
	if fi, err := os.Stat(file); err == nil && fi.Size() == size {
		return file, size, nil
	}
	if free, err := osutil.FreeDiskBytes(filepath.Dir(file)); err == nil && free < size+(1<<30) {
		return "", 0, fmt.Errorf("%s: %s to write, %s free on its file system (want 1 GiB more than the file); pass a smaller --size or another --file",
			file, units.Bytes(size), units.Bytes(free))
	}
	fmt.Fprintf(out, "# writing %s of random bytes to %s\n", units.Bytes(size), file)
	return file, size, devprofile.EnsureFile(file, size)
}

// syncRun measures one point once.
func syncRun(ctx context.Context, tool, mode, file string, bs int64, n int, dur time.Duration) (syncPoint, error) {
	p := syncPoint{Tool: tool, Mode: mode, N: n}
	if tool == "fio" {
		iops, lat, err := runFioLatency(ctx, file, mode, bs, n, dur.Seconds())
		p.IOPS, p.MeanLatUs = iops, lat
		return p, err
	}
	backend := storage.BackendUring
	if mode == "sync" {
		backend = storage.BackendPread
	}
	done, _, sec, err := devprofile.ReadsWith(ctx, backend, file, bs, n, dur, false)
	if err != nil {
		return p, err
	}
	if done == 0 || !(sec > 0) {
		return p, errors.New("no read finished")
	}
	p.IOPS = float64(done) / sec
	p.MeanLatUs = float64(n) / p.IOPS * 1e6
	return p, nil
}

// runFioLatency runs fio's counterpart of one point: mode sync is
// --ioengine=psync with n jobs (threads), mode uring --ioengine=io_uring
// at depth n, random bs reads with O_DIRECT for seconds; it returns the
// jobs' read IOPS in all and their mean completion latency in µs.
func runFioLatency(ctx context.Context, file, mode string, bs int64, n int, seconds float64) (iops, meanLatUs float64, err error) {
	args := []string{"--name=outcore-" + mode, "--filename=" + file, "--readonly", "--rw=randread", "--bs=" + strconv.FormatInt(bs, 10),
		"--direct=1", "--time_based", "--runtime=" + strconv.FormatInt(max(int64(seconds*1000), 1), 10) + "ms",
		"--group_reporting", "--output-format=json"}
	if mode == "sync" {
		args = append(args, "--ioengine=psync", "--thread", "--numjobs="+strconv.Itoa(n))
	} else {
		args = append(args, "--ioengine=io_uring", "--iodepth="+strconv.Itoa(n))
	}
	b, _, err := execFio(ctx, args)
	if err != nil {
		return 0, 0, err
	}
	return parseFioLatency(b)
}

// parseFioLatency reads fio's JSON output of a group-reported job: its
// read IOPS and mean latency (lat_ns: submission to completion) in µs.
func parseFioLatency(b []byte) (iops, meanLatUs float64, err error) {
	var r struct {
		Jobs []struct {
			Error int `json:"error"`
			Read  struct {
				IOPS  float64 `json:"iops"`
				LatNs struct {
					Mean float64 `json:"mean"`
				} `json:"lat_ns"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if err := decodeFio(b, &r, func() int { return len(r.Jobs) }); err != nil {
		return 0, 0, err
	}
	j := r.Jobs[0]
	if j.Error != 0 || !(j.Read.IOPS > 0) || !(j.Read.LatNs.Mean > 0) {
		return 0, 0, fmt.Errorf("fio output: job error %d, %v IOPS, mean latency %v ns", j.Error, j.Read.IOPS, j.Read.LatNs.Mean)
	}
	return j.Read.IOPS, j.Read.LatNs.Mean / 1e3, nil
}

// writeSyncCSV writes every run: tool, mode, n, run, iops, mb_s,
// mean_lat_us.
func writeSyncCSV(path string, bs int64, points []syncPoint) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"tool", "mode", "n", "run", "bs", "iops", "mb_s", "mean_lat_us"})
	for _, p := range points {
		_ = w.Write([]string{p.Tool, p.Mode, strconv.Itoa(p.N), strconv.Itoa(p.Run), strconv.FormatInt(bs, 10),
			strconv.FormatFloat(p.IOPS, 'f', 1, 64), strconv.FormatFloat(p.IOPS*float64(bs)/1e6, 'f', 3, 64),
			strconv.FormatFloat(p.MeanLatUs, 'f', 1, 64)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
