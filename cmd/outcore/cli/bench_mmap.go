package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/devprofile"
	"outcore/engine/metrics"
	"outcore/engine/system/kit"
	"outcore/internal/osutil"
	"outcore/internal/units"
)

// benchMmapConfig is the parsed `bench mmap` command line.
type benchMmapConfig struct {
	dataDir, file, region, threads string
	runs                           int
	fio                            string
}

// benchMmapCmd is `outcore bench mmap`: the I/O floor of memory-mapped
// reads (DESIGN §11) against what page faults achieve on this host, ours
// (PyG+'s gather) and fio's mmap engine on the same pattern.
func benchMmapCmd() *Command {
	var c benchMmapConfig
	fs := newFlagSet("bench mmap", &c.dataDir)
	fs.StringVar(&c.file, "file", "", "file to read (default <data dir>/bench-device.bin, the file outcore bench device wrote)")
	fs.StringVar(&c.region, "region", "256MiB", "bytes of the file read per run: each of its pages faulted in once, in random order")
	fs.StringVar(&c.threads, "threads", "1,4,8,16", "threads faulting at once, comma-separated (one run set each)")
	fs.IntVar(&c.runs, "runs", 3, "runs per thread count and tool (medians kept)")
	fs.StringVar(&c.fio, "fio", "auto", "repeat each run with fio (psync O_DIRECT at N jobs; mmap at one): auto (when installed) or off")
	return &Command{
		Name:  "mmap",
		Args:  "[--region 256MiB] [--threads 1,4,8,16] [--runs 3] [--fio auto|off]",
		Short: "page faults on a memory map against the I/O floor's model of them (DESIGN §11)",
		Long: "Faults every 4 KiB page of --region of a file (cold: dropped from the page cache first) in random\n" +
			"order through a read-only map with readahead off, with N threads at once, as PyG+'s gather does\n" +
			"(kit.GatherMapped), then the same pages with fio: --ioengine=psync --direct=1 --numjobs=N (N requests\n" +
			"in flight, what the floor models N faulting threads as) and, at one thread, --ioengine=mmap. For\n" +
			"each it measures the major faults and the bytes they read (bytes per fault) and puts the run's reads through the I/O floor of\n" +
			"the host's device profile (outcore bench device): the floor as requests at their size at depth N,\n" +
			"and the bandwidth-only floor memory-mapped reads had before; efficiency = floor / elapsed.",
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			return benchMmap(ctx, c, s.Out)
		},
	}
}

// mmapRun is what one run of page faults measured.
type mmapRun struct {
	Faults, Bytes int64
	Seconds       float64
}

// mmapEfficiency is a run's efficiency against the profile: the I/O floor
// of its reads as page faults at depth threads (the model), and as bytes
// at the sequential bandwidth only (before faults were counted), each
// divided by the run's time.
func mmapEfficiency(p *metrics.DeviceProfile, r mmapRun, threads int) (model, bandwidthOnly float64, err error) {
	if r.Faults <= 0 || r.Bytes <= 0 || !(r.Seconds > 0) {
		return 0, 0, fmt.Errorf("run of %d faults, %d bytes in %v s: nothing faulted (is the file still cached?)", r.Faults, r.Bytes, r.Seconds)
	}
	floor, ok := p.IOFloor(metrics.DeviceReads{Bytes: r.Bytes, Faults: metrics.MappedReads{Bytes: r.Bytes, Faults: r.Faults}, FaultThreads: threads})
	if !ok {
		return 0, 0, errors.New("the device profile has no bandwidth")
	}
	bw, _ := p.IOFloor(metrics.DeviceReads{Bytes: r.Bytes})
	return floor / r.Seconds, bw / r.Seconds, nil
}

func benchMmap(ctx context.Context, c benchMmapConfig, out io.Writer) error {
	threads, err := positiveInts(c.threads)
	if err != nil {
		return usagef("--threads: %v", err)
	}
	region, err := units.ParseMemLimit(c.region, 0)
	if err != nil || region < 4096 {
		return usagef("--region: %q, want a size such as 256MiB", c.region)
	}
	if c.runs < 1 || c.runs > maxFioPairs {
		return usagef("--runs %d, want 1 to %d", c.runs, maxFioPairs)
	}
	if c.fio != "auto" && c.fio != "off" {
		return usagef("--fio %q, want auto or off", c.fio)
	}
	dataDir := dataset.ResolveDataDir(c.dataDir)
	file := c.file
	if file == "" {
		file = filepath.Join(dataDir, "bench-device.bin")
	}
	st, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) && c.file == "" {
		return fmt.Errorf("bench mmap: %s does not exist: run outcore bench device first (it writes the file and the profile)", file)
	}
	if err != nil {
		return fmt.Errorf("bench mmap: %w", err)
	}
	region = min(region, st.Size()) &^ 4095
	k, err := devprofile.KeyOf(filepath.Dir(file))
	if err != nil {
		return fmt.Errorf("bench mmap: %w", err)
	}
	p, path, err := devprofile.Load(dataDir, k)
	if err != nil {
		return fmt.Errorf("bench mmap: no device profile of %s: %w (run outcore bench device)", k, err)
	}
	useFio := c.fio == "auto"
	if _, err := exec.LookPath("fio"); useFio && err != nil {
		fmt.Fprintln(out, "fio: not installed, ours only (scripts/install-deps.sh installs it)")
		useFio = false
	}
	load0, _ := metrics.ReadLoad1()
	fmt.Fprintf(out, "# %s: %s of %s, 4 KiB pages in random order; profile %s; load average %.2f\n",
		file, units.Bytes(region), units.Bytes(st.Size()), path, load0)
	fmt.Fprintln(out, "tool threads | faults bytes/fault | IOPS | IOPS at depth (profile) | efficiency: model, bandwidth only (medians of runs)")
	for _, n := range threads {
		tools := []string{"ours"}
		if useFio {
			if n == 1 {
				tools = append(tools, "fio-mmap")
			}
			tools = append(tools, "fio-psync")
		}
		for _, tool := range tools {
			var iops, perFault, model, bwOnly []float64
			var last mmapRun
			for i := range c.runs {
				var r mmapRun
				if tool == "ours" {
					r, err = faultPages(file, region, n, uint64(i))
				} else {
					r, err = fioRun(ctx, strings.TrimPrefix(tool, "fio-"), file, region, n)
				}
				if err != nil {
					return fmt.Errorf("bench mmap: %s, %d threads: %w", tool, n, err)
				}
				m, b, err := mmapEfficiency(p, r, n)
				if err != nil {
					return fmt.Errorf("bench mmap: %s, %d threads: %w", tool, n, err)
				}
				iops = append(iops, float64(r.Faults)/r.Seconds)
				perFault = append(perFault, float64(r.Bytes)/float64(r.Faults))
				model, bwOnly = append(model, m), append(bwOnly, b)
				last = r
			}
			at, _ := p.IOPSAt(metrics.RequestClass(last.Bytes/last.Faults), n)
			fmt.Fprintf(out, "%s %d | %d %.0f | %.0f | %.0f | %.3f, %.3f\n", tool, n, last.Faults, median(perFault), median(iops), at, median(model), median(bwOnly))
		}
	}
	load1, _ := metrics.ReadLoad1()
	fmt.Fprintf(out, "# load average %.2f at the end\n", load1)
	return nil
}

// faultPages drops the first region bytes of file from the page cache,
// maps the file and faults each of their pages once, in an order drawn
// from seed, with threads threads (kit.GatherMapped, as PyG+'s gather:
// one 64-byte row of each page).
func faultPages(file string, region int64, threads int, seed uint64) (mmapRun, error) {
	if err := osutil.DropFileCache(file); err != nil {
		return mmapRun{}, err
	}
	m, err := osutil.MapFile(file)
	if err != nil {
		return mmapRun{}, err
	}
	defer m.Close()
	const row = 64
	ids := make([]int64, region/4096)
	for i, pg := range rand.New(rand.NewPCG(seed, 1)).Perm(len(ids)) {
		ids[i] = int64(pg) * (4096 / row)
	}
	dst := make([]byte, len(ids)*row)
	t0 := time.Now()
	g, err := kit.GatherMapped(m, row, ids, dst, threads, nil)
	if err != nil {
		return mmapRun{}, err
	}
	return mmapRun{Faults: g.Faults, Bytes: g.DeviceBytes, Seconds: time.Since(t0).Seconds()}, nil
}

// fioRun runs fio over the same pages: threads jobs (one process,
// --thread), each reading its share of the region once in random order
// (fio's random map), 4 KiB at a time. engine "mmap": through a map (fio
// advises MADV_RANDOM for random reads), its faults and bytes fio's
// (getrusage of the child: ru_majflt, ru_inblock); fio 3.33's mmap engine
// reads the same share in every job when jobs have offsets (four jobs of 64
// MiB left 64 MiB cached), so it runs with one thread only. engine
// "psync": pread with O_DIRECT, one request in flight per job, each
// request counted as a fault of 4 KiB (what the floor models a fault as).
// The time is the slowest job's.
func fioRun(ctx context.Context, engine, file string, region int64, threads int) (mmapRun, error) {
	if err := osutil.DropFileCache(file); err != nil {
		return mmapRun{}, err
	}
	share := region / int64(threads) &^ 4095
	args := []string{"--name=outcore-" + engine, "--filename=" + file, "--readonly", "--ioengine=" + engine, "--rw=randread",
		"--bs=4096", "--thread", "--numjobs=" + strconv.Itoa(threads), "--size=" + strconv.FormatInt(share, 10),
		"--offset_increment=" + strconv.FormatInt(share, 10), "--invalidate=1", "--output-format=json"}
	if engine == "psync" {
		args = append(args, "--direct=1")
	}
	b, state, err := execFio(ctx, args)
	if err != nil {
		return mmapRun{}, err
	}
	ios, sec, err := parseFioJobs(b)
	if err != nil {
		return mmapRun{}, err
	}
	r := mmapRun{Faults: ios, Bytes: ios * 4096, Seconds: sec}
	if engine == "mmap" {
		ru, ok := state.SysUsage().(*syscall.Rusage)
		if !ok {
			return mmapRun{}, errors.New("fio: no resource usage")
		}
		r.Faults, r.Bytes = ru.Majflt, ru.Inblock*512
	}
	return r, nil
}

// parseFioJobs reads fio's JSON output of several jobs: their reads in
// all, and the longest job's run time in seconds.
func parseFioJobs(b []byte) (ios int64, seconds float64, err error) {
	var r struct {
		Jobs []struct {
			Error int `json:"error"`
			Read  struct {
				TotalIOs  int64 `json:"total_ios"`
				RuntimeMS int64 `json:"runtime"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if err := decodeFio(b, &r, func() int { return len(r.Jobs) }); err != nil {
		return 0, 0, err
	}
	var ms int64
	for _, j := range r.Jobs {
		if j.Error != 0 || j.Read.TotalIOs <= 0 || j.Read.RuntimeMS <= 0 {
			return 0, 0, fmt.Errorf("fio output: job error %d, %d reads in %d ms", j.Error, j.Read.TotalIOs, j.Read.RuntimeMS)
		}
		ios += j.Read.TotalIOs
		ms = max(ms, j.Read.RuntimeMS)
	}
	return ios, float64(ms) / 1000, nil
}
