package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"outcore/engine/dataset"
	"outcore/engine/devprofile"
	"outcore/engine/metrics"
	"outcore/engine/testbed"
	"outcore/engine/train"
	"outcore/experiments/grid"
	"outcore/experiments/supervise"
	"outcore/gpu"
	"outcore/internal/version"
)

// trainCmd is `outcore train`.
func trainCmd() *Command {
	var cfg train.Config
	var raw []string  // the command line, passed on when --mem-limit re-runs it in a cgroup
	var placed string // --cgroup, set by a supervisor (memlimit.go)
	def := train.DefaultConfig()
	cmd := &Command{
		Name:  "train",
		Args:  "--dataset D [flags]\n       outcore train --config run.json [flags that override the file]",
		Short: "train one model with one system variant",
		Long: `Trains one model with one system variant. Stdout carries the run's records,
one JSON object per line (engine/metrics/records.go): start, log, sample
(every second), progress, epoch, and a final summary whose test_acc is the
test accuracy at the epoch of best val_acc. When stderr is a terminal a
progress bar and one line per epoch are drawn there.

Every flag sets the run configuration field of the same name (train.Config,
the fields of the --config file); --config loads the file first, and flags
given override it.

systems: ` + strings.Join(train.Names(), ", "),
		Flags: trainFlags(&def, new(string)),
	}
	cmd.Parse = func(args []string) ([]string, error) {
		raw = args
		var err error
		cfg, placed, err = parseTrainArgs(args)
		return nil, err
	}
	cmd.Exec = func(ctx context.Context, s Streams, _ []string) error {
		if err := checkTrainRanges(cfg); err != nil {
			return err
		}
		cfg.Normalize()
		if err := cfg.Validate(); err != nil {
			return badValue(err)
		}
		if err := checkMinMemory(cfg); err != nil {
			return badValue(err)
		}
		// The storage the dataset is on, measured once on this host before
		// its first run (DESIGN §11), outside the run's cgroup and clock: a
		// run placed by a supervisor finds it measured already.
		barEpochs := cfg.Epochs
		if placed == "" {
			if err := ensureStorage(ctx, cfg, s.Err); err != nil {
				return err
			}
		}
		// A paper's testbed: its host memory is the suggested --mem-limit,
		// and the run's limit when none is given (the child a supervisor
		// starts gets it on its command line).
		if cfg.PaperTestbed() {
			say := s.Err
			if placed != "" { // the supervisor's child: its parent said it
				say = io.Discard
			}
			lim, mapped, err := testbedMemLimit(cfg, say)
			if err != nil {
				return err
			}
			if cfg.Epochs == 0 {
				barEpochs = mapped.Epochs
			}
			if lim != "" {
				cfg.MemLimit = lim
				raw = append(raw, "--mem-limit="+lim)
				if err := checkMinMemory(cfg); err != nil {
					return badValue(fmt.Errorf("testbed %s: %w (the mapping's host memory; give --mem-limit to run under another limit, recorded among the deviations)", cfg.Testbed, err))
				}
			}
		}
		// --mem-limit: re-run this command inside its own memory cgroup and
		// supervise it (memlimit.go); a limit back means: train here.
		limit, err := placement{sup: &supervise.Supervisor{}, stdout: s.Out, stderr: s.Err}.run(ctx, cfg, placed, raw)
		if err != nil || limit == nil {
			return err
		}
		g := gpu.Open()
		defer g.Close()
		opt := &train.RunOptions{GPU: g, GPUName: g.Name(), Version: version.String(),
			MemoryLimit: func(int64) train.MemoryLimit { return limit }}
		var bar *progressBar
		if f, ok := s.Err.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			bar = &progressBar{w: s.Err, epochs: barEpochs}
			opt.Progress = bar.progress
			opt.OnEpoch = bar.epoch
		}
		sum, err := train.Run(ctx, cfg, s.Out, opt)
		if bar != nil {
			bar.finish(sum)
		}
		return err
	}
	return cmd
}

// trainFlags binds every flag of `outcore train` onto the fields of c
// (their current values are the defaults); configPath receives --config.
// TestTrainFlagsCoverConfig checks that each json field of train.Config is
// set by a flag here or listed in configFileOnly.
func trainFlags(c *train.Config, configPath *string) *flag.FlagSet {
	fs := newFlagSet("train", &c.DataDir)
	fs.StringVar(configPath, "config", "", "JSON file with the run configuration (fields as train.Config); flags given override it")
	fs.StringVar(&c.Dataset, "dataset", c.Dataset, "dataset name (in the data directory)")
	fs.StringVar(&c.System, "system", c.System, "system variant")
	fs.StringVar(&c.IDs, "ids", c.IDs, `the node numbering the dataset must have: "scattered" or "local" (a grid's ids axis sets it; the run refuses a dataset numbered otherwise); empty: any`)
	fs.StringVar(&c.Model, "model", c.Model, "sage, gcn or gat")
	fs.IntVar(&c.Layers, "layers", c.Layers, "layers (default: number of fanouts; must match)")
	fs.IntVar(&c.Hidden, "hidden", c.Hidden, "hidden width (gat: concatenated width of all heads)")
	fs.IntVar(&c.Heads, "heads", c.Heads, "attention heads (gat)")
	fs.Float64Var(&c.Dropout, "dropout", c.Dropout, "dropout probability")
	fs.Var((*intList)(&c.Fanout), "fanout", "neighbours sampled per hop, seeds' hop first; -1 = all")
	fs.IntVar(&c.Batch, "batch", c.Batch, "seeds per training batch (0 = whole training split)")
	fs.IntVar(&c.Epochs, "epochs", c.Epochs, "epochs")
	fs.Float64Var(&c.LR, "lr", c.LR, "Adam learning rate")
	fs.Float64Var(&c.WeightDecay, "weight-decay", c.WeightDecay, "L2 weight decay (Adam)")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "random seed (initialisation, shuffling, sampling, dropout)")
	fs.BoolVar(&c.RowNormalize, "row-normalize", c.RowNormalize, "divide every feature row by its sum (Planetoid preprocessing)")
	fs.StringVar(&c.Eval, "eval", c.Eval, "evaluation: sampled (with --eval-fanout) or full neighbourhoods")
	fs.Var((*intList)(&c.EvalFanout), "eval-fanout", "fanouts of sampled evaluation (default: --fanout)")
	fs.IntVar(&c.EvalBatch, "eval-batch", c.EvalBatch, "nodes per evaluation batch (default max(batch, 1000))")
	fs.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "evaluate every n-th epoch (and the last)")
	fs.IntVar(&c.TrainMaxNodes, "train-max-nodes", c.TrainMaxNodes, "train on at most this many training nodes per epoch, a fixed random subset (0 = all; recorded as a deviation)")
	fs.IntVar(&c.EvalMaxNodes, "eval-max-nodes", c.EvalMaxNodes, "evaluate at most this many val/test nodes per split, a fixed random subset (0 = 10000, -1 = all)")
	fs.Var(optionalInt{&c.WarmupEpochs}, "warmup", "warm-up epochs flagged in the records (default 1 when epochs > 1)")
	fs.StringVar(&c.IO, "io", c.IO, "storage backend: uring, pread, mmap or auto")
	fs.IntVar(&c.QueueDepth, "queue-depth", c.QueueDepth, "I/O queue depth per reader (0 = storage default)")
	fs.BoolVar(&c.AllowBuffered, "allow-buffered", c.AllowBuffered, "fall back to page-cache reads where the file system refuses O_DIRECT (tmpfs); not for measurements")
	fs.StringVar(&c.MemLimit, "mem-limit", c.MemLimit, `memory budget: "2GiB", "512MB" or a share of the feature bytes "25%"`)
	fs.StringVar(&c.Device, "device", c.Device, `where the trainer runs: "cpu" (default), "cuda" (GPU 0 through engine/cuda; an error without a GPU; sage, gcn, gat) or "auto" (the GPU when usable, else the CPU, recorded as a deviation)`)
	fs.StringVar(&c.ModelMem, "model-mem", c.ModelMem, `where the CPU model step is accounted under --mem-limit: "device" (default; outside the budget, as GPU memory in the papers) or "host"`)
	fs.StringVar(&c.Compute, "compute", c.Compute, `what consumes each batch: "cpu" (default; the CPU trainer), "none" (the loader alone: features checksummed and released) or "model:PROFILE" (held for an accelerator's modelled step time, e.g. model:h100-roofline)`)
	fs.StringVar(&c.DeviceMem, "device-mem", c.DeviceMem, `device budget (the papers' GPU memory, held beside --mem-limit): "1GiB", a share of the feature bytes "10%" (default) or "none"`)
	fs.StringVar(&c.Testbed, "testbed", c.Testbed, "the host the run emulates (DESIGN §13): "+strings.Join(testbed.Names(), ", ")+
		`; a paper's maps compute, epochs (unless --epochs), device budget, step dilation, I/O depth (ginex, pyg+) and --mem-limit (unless given) from its profile; default this host as it is`)
	fs.Float64Var(&c.StepDilation, "step-dilation", c.StepDilation, "multiply the modelled step time of --compute model:PROFILE (0 = not dilated; a paper's --testbed sets it)")
	fs.Var((*optMap)(&c.Options), "opt", "variant option key=value (repeatable)")
	return fs
}

// configFileOnly are the json fields of train.Config that no flag sets,
// with the reason.
var configFileOnly = map[string]string{
	"mem_limit_bytes":  "resolved from mem_limit (train.Config.Resolve); the runner writes it into the child's config",
	"device_mem_bytes": "resolved from device_mem (train.Config.ResolveDeviceMem) when the run starts",
}

// parseTrainArgs builds the run configuration: the defaults, or the
// --config file over them, then every flag given. placed is the hidden
// --cgroup flag a supervisor appends (experiments/supervise): the memory
// cgroup this process was started in, "none", or "" when a user started it.
// It is not in the help (Command.Flags is trainFlags alone).
func parseTrainArgs(args []string) (cfg train.Config, placed string, err error) {
	cfg, err = parseTrainConfig(args, &placed)
	return cfg, placed, err
}

func parseTrainConfig(args []string, placed *string) (train.Config, error) {
	var configPath string
	cfg, fs, pos, err := parseOver(args,
		func(c *train.Config) *flag.FlagSet {
			fs := trainFlags(c, &configPath)
			fs.StringVar(placed, supervise.CgroupFlag, "", "set by the supervisor: the memory cgroup this process runs in, or none")
			return fs
		},
		func() (train.Config, error) {
			if configPath == "" {
				return train.DefaultConfig(), nil
			}
			c, err := train.LoadConfigFile(configPath)
			if err != nil {
				return c, fmt.Errorf("%w: %v", ErrUsage, err)
			}
			return c, nil
		})
	if err != nil {
		return cfg, err
	}
	if len(pos) > 0 {
		return cfg, usagef("unexpected argument %q", pos[0])
	}
	// Under a paper's testbed the epochs are the mapping's unless --epochs
	// or a config file gives them (train.ApplyTestbed: epochs 0).
	if cfg.PaperTestbed() && !flagGiven(fs, "epochs") && configPath == "" {
		cfg.Epochs = 0
	}
	// --layers without --fanout: repeat the default fanout's first entry.
	if cfg.Layers > 0 && cfg.Layers != len(cfg.Fanout) && !flagGiven(fs, "fanout") && configPath == "" {
		def := train.DefaultConfig()
		f := make([]int, cfg.Layers)
		for i := range f {
			f[i] = def.Fanout[0]
		}
		cfg.Fanout = f
	}
	return cfg, nil
}

// intList is a flag of comma-separated integers ("10,5", "-1,-1").
type intList []int

func (l *intList) String() string {
	if l == nil {
		return ""
	}
	s := make([]string, len(*l))
	for i, x := range *l {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(s string) error {
	v, err := train.ParseIntList(s)
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// optionalInt is an integer flag whose absence is nil.
type optionalInt struct{ p **int }

func (o optionalInt) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.Itoa(**o.p)
}

func (o optionalInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want an integer, got %q", s)
	}
	*o.p = &v
	return nil
}

// optMap collects repeated key=value flags into a map (added to what the
// config file set).
type optMap map[string]string

func (o *optMap) String() string {
	if o == nil || *o == nil {
		return ""
	}
	keys := make([]string, 0, len(*o))
	for k := range *o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + (*o)[k]
	}
	return strings.Join(keys, ",")
}

func (o *optMap) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	if *o == nil {
		*o = optMap{}
	}
	(*o)[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

// progressBar draws one updating line on a terminal and one line per epoch.
type progressBar struct {
	mu     sync.Mutex
	w      io.Writer
	epochs int
	start  time.Time
	drawn  bool
}

func (b *progressBar) progress(p metrics.ProgressRecord) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.start.IsZero() {
		b.start = time.Now()
	}
	const width = 30
	frac := 0.0
	if p.Batches > 0 {
		frac = float64(p.Batch) / float64(p.Batches)
	}
	n := int(frac * width)
	fmt.Fprintf(b.w, "\r\x1b[K%-7s epoch %d/%d [%s%s] %d/%d  %.1fs",
		p.Phase, p.Epoch+1, b.epochs, strings.Repeat("=", n), strings.Repeat(" ", width-n), p.Batch, p.Batches, p.Elapsed)
	b.drawn = true
}

func (b *progressBar) epoch(r metrics.EpochRecord) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
	warm := ""
	if r.Warmup {
		warm = " (warm-up)"
	}
	fmt.Fprintf(b.w, "epoch %d%s: %.2fs  loss %.4f  train %.4f  val %.4f  test %.4f  read %.1f MB (features %.1f, topology %.1f; x%.2f per row from the device)\n",
		r.Epoch, warm, r.EpochS, r.TrainLoss, r.TrainAcc, r.ValAcc, r.TestAcc, float64(r.BytesRead)/1e6,
		float64(r.FeatureBytesRead)/1e6, float64(r.TopologyBytesRead)/1e6, r.ReadAmplification)
	b.drawn = false
}

func (b *progressBar) finish(s metrics.SummaryRecord) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
	fmt.Fprintf(b.w, "%s: %d epochs, best val %.4f at epoch %d, test %.4f, mean epoch %.2fs, total %.1fs\n",
		s.Outcome, s.Epochs, s.BestValAcc, s.BestEpoch, s.TestAcc, s.MeanEpochS, s.TotalS)
}

// checkTrainRanges holds the command line to the bounds a grid is held to
// (grid.RangeProblems, MemLimitProblem): `--weight-decay 1e308` or
// `--mem-limit 1e-30` (0 bytes once truncated, which trained unlimited)
// are usage errors naming the setting and its range.
func checkTrainRanges(cfg train.Config) error {
	var msgs []string
	rc := cfg
	if rc.Epochs == 0 && rc.PaperTestbed() {
		rc.Epochs = 1 // the mapping's, at least testbed.MinEpochs, set when the run applies it
	}
	for _, p := range grid.RangeProblems(rc, func(string) bool { return true }) {
		msgs = append(msgs, p.Message)
	}
	if cfg.MemLimit != "" {
		var featureBytes int64
		if strings.HasSuffix(strings.TrimSpace(cfg.MemLimit), "%") {
			if m, err := dataset.ReadMeta(datasetDir(cfg)); err == nil {
				featureBytes = m.FeatureBytes()
			}
		}
		if msg := grid.MemLimitProblem(cfg.MemLimit, featureBytes); msg != "" && (featureBytes > 0 || !strings.HasSuffix(strings.TrimSpace(cfg.MemLimit), "%")) {
			msgs = append(msgs, "mem_limit: "+msg)
		}
	}
	if len(msgs) > 0 {
		return usagef("%s", strings.Join(msgs, "; "))
	}
	return nil
}

// testbedMemLimit maps cfg's testbed for its dataset (train.MapTestbed),
// says on w what the mapping gives, and returns the host memory to use as
// --mem-limit: the mapping's in bytes when cfg has no limit of its own,
// else "" (the config's wins, and w says so).
func testbedMemLimit(cfg train.Config, w io.Writer) (string, testbed.Settings, error) {
	dataDir := dataset.ResolveDataDir(cfg.DataDir)
	dir := datasetDir(cfg)
	m, err := dataset.ReadMeta(dir)
	if err != nil {
		return "", testbed.Settings{}, fmt.Errorf("testbed %s: dataset %s: %w", cfg.Testbed, cfg.Dataset, err)
	}
	st, err := train.MapTestbed(cfg, m, dataDir, dir)
	if err != nil {
		return "", st, err
	}
	host, device, rule := st.For(cfg.System)
	fmt.Fprintf(w, "testbed %s: %s\n", cfg.Testbed, rule)
	fmt.Fprintf(w, "testbed %s: compute model:%s, %d epochs, I/O depth %d (ginex, pyg+)\n", cfg.Testbed, st.AccelProfile, st.Epochs, st.IODepth)
	fmt.Fprintf(w, "testbed %s: %s\n", cfg.Testbed, st.DilationRule)
	fmt.Fprintf(w, "testbed %s: suggested --mem-limit %d (host memory), device budget %d bytes\n", cfg.Testbed, host, device)
	if cfg.MemLimit != "" || cfg.MemLimitBytes > 0 || host <= 0 {
		fmt.Fprintf(w, "testbed %s: the run keeps its own --mem-limit %q\n", cfg.Testbed, cfg.MemLimit)
		return "", st, nil
	}
	fmt.Fprintf(w, "testbed %s: no --mem-limit given: the run takes the mapping's, --mem-limit %d\n", cfg.Testbed, host)
	return strconv.FormatInt(host, 10), st, nil
}

// ensureStorage measures the storage holding the run's dataset when this
// host has no profile of it (devprofile.Ensure, the short mode), saying so
// on w. A dataset that is not there is left for the run to report.
func ensureStorage(ctx context.Context, cfg train.Config, w io.Writer) error {
	dataDir := dataset.ResolveDataDir(cfg.DataDir)
	dir, err := dataset.DirByName(dataDir, cfg.Dataset)
	if err != nil {
		return nil
	}
	announced := false
	o, err := devprofile.Ensure(ctx, dataDir, dir, func(p devprofile.Progress) {
		if !announced && p.Steps > 0 {
			fmt.Fprintf(w, "measuring this host's storage once, for the I/O floor of every run on it (short mode, about %.0f s; outcore bench device takes the full measurement)\n",
				float64(p.Steps-1)*devprofile.ShortPlan().Seconds+1)
			announced = true
		}
		if p.Steps > 0 {
			fmt.Fprintf(w, "  %d/%d %s\n", p.Step, p.Steps, p.What)
		} else {
			fmt.Fprintf(w, "%s\n", p.What)
		}
	})
	if err != nil {
		return err
	}
	if o.Measured || o.Profile == nil {
		fmt.Fprintln(w, o.Note)
	}
	return nil
}
