package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"outcore/engine/devprofile"
	"outcore/engine/metrics"
	"outcore/experiments"
	"outcore/report"
	"outcore/store"

	"outcore/engine/dataset"
	"outcore/internal/units"
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
	maxLoad  float64
	rounds   int
	// load reads the host's 1-minute load average (metrics.ReadLoad1; a
	// fixture in tests)
	load func() (float64, error)
}

// defaultMaxLoad is the quiet machine of the measuring scripts
// (scripts/quiet-gate.sh): a profile every later run's I/O floor is
// judged against is measured there or not at all.
const defaultMaxLoad = 1.5

// benchDeviceCmd is `outcore bench device`: measure the storage holding
// the data directory once (DESIGN §11) and keep the profile there, for
// each epoch's I/O floor.
func benchDeviceCmd() *Command {
	var c benchDeviceConfig
	fs := newFlagSet("bench device", &c.dataDir)
	fs.StringVar(&c.file, "file", "", "file to read (default <data dir>/bench-device.bin, written once with random bytes); an existing file is never rewritten: its size must be --size")
	fs.StringVar(&c.size, "size", "1GiB", "size of the file written (larger than the disk's cache)")
	fs.Float64Var(&c.seconds, "seconds", 2, "seconds per measurement")
	full := devprofile.FullPlan()
	fs.StringVar(&c.depths, "depths", joinInts(full.Depths), "requests in flight, comma-separated (the depths between 1 and 16 bound the IOPS of page faults from a few threads, DESIGN §11)")
	fs.StringVar(&c.sizes, "sizes", "512,4096,16384,65536,262144,1048576", "random-read request sizes in bytes (the variants' 512 B rows and 4 KiB blocks, merged requests)")
	fs.Int64Var(&c.seqBytes, "seq-bytes", 1<<20, "request size of the sequential-bandwidth measurement")
	fs.IntVar(&c.seqDepth, "seq-depth", 8, "requests in flight of the sequential-bandwidth measurement")
	fs.StringVar(&c.fio, "fio", "auto", "repeat the largest-depth 512 B and 4 KiB reads and the sequential read with fio: auto (when installed) or off")
	fs.IntVar(&c.pairs, "fio-pairs", 3, "times each fio check runs ours then fio back to back (the check keeps the medians)")
	fs.IntVar(&c.rounds, "rounds", full.Rounds, "times every measurement is taken, in whole rounds one after another; each keeps the median of its rounds (a disk's rate can move from minute to minute)")
	fs.Float64Var(&c.maxLoad, "max-load", defaultMaxLoad, "highest 1-minute load average to measure at, checked before the measurement and at its end (a profile taken on a busy machine is not saved); 0 measures whatever the load")
	c.load = metrics.ReadLoad1
	return &Command{
		Name:  "device",
		Args:  "[--size 1GiB] [--seconds 2] [--depths " + joinInts(full.Depths) + "] [--sizes 512,4096,...] [--rounds 3] [--fio auto|off] [--fio-pairs 3] [--max-load 1.5]",
		Short: "measure this host's storage (IOPS by request size and depth, sequential bandwidth) for the I/O floor",
		Long: "Reads a file on the data directory's file system with io_uring and O_DIRECT: random reads at each\n" +
			"request size and depth, and sequential reads, and checks them against fio when it is installed\n" +
			"(the same job shape and ring setup; ours and fio run back to back --fio-pairs times, medians kept).\n" +
			"Writes <data dir>/" + devprofile.DirName + "/<host>--<file system>.json, which every later run on this host\n" +
			"whose dataset is on that file system uses for its epochs' io_floor_s and io_efficiency (replacing the\n" +
			"short measurement a first run takes; docs/DESIGN.md §11), and fills in the floor of the runs recorded\n" +
			"before it. Measure on a quiet machine: above --max-load (the 1-minute load average, before the\n" +
			"measurement and at its end) nothing is measured or saved.",
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
	if err != nil {
		return usagef("--size: %q, want a size such as 1GiB", c.size)
	}
	plan := devprofile.Plan{Mode: devprofile.ModeFull, FileBytes: size, Seconds: c.seconds, Depths: depths,
		SeqBytes: c.seqBytes, SeqDepth: c.seqDepth, Rounds: c.rounds}
	for _, s := range sizes {
		plan.Sizes = append(plan.Sizes, int64(s))
	}
	if err := plan.Check(); err != nil {
		return usagef("%v", err)
	}
	if c.fio != "auto" && c.fio != "off" {
		return usagef("--fio %q, want auto or off", c.fio)
	}
	if c.pairs < 1 || c.pairs > maxFioPairs {
		return usagef("--fio-pairs %d, want 1 to %d", c.pairs, maxFioPairs)
	}
	if !(c.maxLoad >= 0) || math.IsInf(c.maxLoad, 0) {
		return usagef("--max-load %v, want a load average of 0 or more (0: no check)", c.maxLoad)
	}
	if _, err := c.quiet("before the measurement"); err != nil {
		return err
	}
	dataDir := dataset.ResolveDataDir(c.dataDir)
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	file := c.file
	if file == "" {
		file = filepath.Join(dataDir, "bench-device.bin")
	} else if fi, err := os.Stat(file); err == nil && fi.Size() != plan.FileBytes {
		// a named file that exists is only read: it may be a dataset's
		return usagef("--file %s holds %d B, --size asks for %d B: an existing file is read as it is, never rewritten (pass --size %d, or a path that does not exist for a new probe file)",
			file, fi.Size(), plan.FileBytes, fi.Size())
	}
	p, err := devprofile.MeasureFile(ctx, plan, file, func(pr devprofile.Progress) {
		fmt.Fprintf(out, "# %d/%d %s\n", pr.Step, pr.Steps, pr.What)
	})
	if err != nil {
		return fmt.Errorf("bench device: %w", err)
	}
	var moved []string
	for _, pt := range p.Random {
		fmt.Fprintf(out, "randread bytes=%d depth=%d iops=%.0f mbps=%.1f p50_us=%.1f p99_us=%.1f", pt.Bytes, pt.Depth, pt.IOPS, pt.IOPS*float64(pt.Bytes)/1e6, pt.P50us, pt.P99us)
		if len(pt.IOPSRounds) > 1 {
			fmt.Fprintf(out, " rounds=%s", joinFloats(pt.IOPSRounds))
			if sp := pt.RoundsSpread(); sp > roundsSpreadNote {
				moved = append(moved, fmt.Sprintf("%d B at depth %d %.2f×", pt.Bytes, pt.Depth, sp))
			}
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "read bytes=%d depth=%d mbps=%.1f", p.SeqRequestBytes, p.SeqDepth, p.SeqBytesPerS/1e6)
	if len(p.SeqRounds) > 1 {
		mb := make([]float64, len(p.SeqRounds))
		for i, v := range p.SeqRounds {
			mb[i] = v / 1e6
		}
		fmt.Fprintf(out, " rounds_mbps=%s", joinFloats(mb))
	}
	fmt.Fprintln(out)
	if len(moved) > 0 {
		fmt.Fprintf(out, "note: the disk's rate moved between rounds by more than %.2f× (%s): each point is its rounds' median; compare runs within one profile, and measure again on a quieter disk for a steadier one\n",
			roundsSpreadNote, strings.Join(moved, ", "))
	}
	dur := time.Duration(c.seconds * float64(time.Second))
	if c.fio == "auto" {
		if _, err := exec.LookPath("fio"); err != nil {
			fmt.Fprintln(out, "fio: not installed, no check (scripts/install-deps.sh installs it)")
		} else {
			ours := func(j fioJob) (float64, error) {
				n, _, sec, err := devprofile.Reads(ctx, file, j.bs, j.depth, dur, j.seq)
				if j.seq {
					return float64(n*j.bs) / sec, err
				}
				return float64(n) / sec, err
			}
			checks, err := fioChecks(ctx, p, file, depths[len(depths)-1], c.pairs, c.seconds, ours)
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
	var qerr error
	if p.LoadAvg[1], qerr = c.quiet("at the measurement's end"); qerr != nil {
		return fmt.Errorf("%w; the profile was not saved (runs keep the profile they had)", qerr)
	}
	path, err := devprofile.Save(dataDir, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "profile %s (load average %.2f → %.2f on %d cores)\n", path, p.LoadAvg[0], p.LoadAvg[1], p.Cores)
	fmt.Fprintf(out, "runs on host %s whose dataset is on this file system (%s, %s) use it for their I/O floor\n", p.Hostname, p.FSType, p.Storage)
	if n, runs, err := backfillStore(ctx, dataDir); err != nil {
		fmt.Fprintf(out, "the store's earlier runs: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(out, "filled in the I/O floor of %d epochs of %d runs recorded before this profile\n", n, runs)
	}
	return nil
}

// quiet reads the 1-minute load average and refuses a machine above
// --max-load (0: never), saying when it was read.
func (c benchDeviceConfig) quiet(when string) (float64, error) {
	load, err := c.load()
	if c.maxLoad == 0 {
		return load, nil
	}
	if err != nil {
		return 0, fmt.Errorf("bench device: cannot read the load average %s (%v): pass --max-load 0 to measure without the check", when, err)
	}
	if load > c.maxLoad {
		return load, fmt.Errorf("bench device: the load average is %.2f %s, above --max-load %g: not a quiet machine, and a busy disk or CPU would set every later run's I/O floor (wait for the machine to settle, or pass --max-load 0 to measure anyway)", load, when, c.maxLoad)
	}
	return load, nil
}

// roundsSpreadNote is the largest over the smallest round of a point
// beyond which bench device says the disk's rate moved.
const roundsSpreadNote = 1.25

// joinFloats writes rounds as "41203,47101,52004".
func joinFloats(v []float64) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strings.Join(s, ",")
}

// maxFioPairs bounds --fio-pairs (each pair runs both tools once).
const maxFioPairs = 20

// joinInts writes a list as positiveInts reads it.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
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

// backfillStore fills in the I/O floor of the epochs the data directory's
// store recorded before a profile of their storage existed
// (experiments.FillIOFloors) and refreshes those runs' digests; it returns
// the epochs and runs filled in. Without a store there is nothing to do.
func backfillStore(ctx context.Context, dataDir string) (int, int, error) {
	if _, err := os.Stat(store.Path(dataDir)); err != nil {
		return 0, 0, nil
	}
	st, err := store.Open(ctx, store.Path(dataDir))
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	n, runs, err := experiments.FillIOFloors(ctx, st, dataDir)
	for _, id := range runs {
		if derr := report.StoreRunDigest(ctx, st, id); derr != nil && err == nil {
			err = derr
		}
	}
	return n, len(runs), err
}
