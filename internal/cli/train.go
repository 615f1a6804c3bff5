package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"outcore/engine/metrics"
	"outcore/engine/system"
	"outcore/engine/train"
	"outcore/gpu"
	"outcore/internal/version"
)

const trainUsage = `usage: outcore train --dataset D [flags]
       outcore train --config run.json [flags that override the file]

Trains one model with one system variant. Stdout carries the run's records,
one JSON object per line (engine/metrics/records.go): start, log, sample
(every second), progress, epoch, and a final summary whose test_acc is the
test accuracy at the epoch of best val_acc. When stderr is a terminal a
progress bar and one line per epoch are drawn there.

flags:`

// Train runs `outcore train`.
func Train(ctx context.Context, args []string) error {
	cfg, err := parseTrainArgs(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	// --mem-limit: re-run this command inside its own memory cgroup and
	// watch it (engine/system/memlimit.go); handled=false runs it here.
	if handled, err := system.RunUnderMemLimit(ctx, cfg, args, os.Stdout, os.Stderr); handled {
		return err
	}
	g := gpu.Open()
	defer g.Close()
	opt := &train.RunOptions{GPU: g, GPUName: g.Name(), Version: outcoreVersion(), MemoryLimit: system.OwnGroupLimit}
	var bar *progressBar
	if term.IsTerminal(int(os.Stderr.Fd())) {
		bar = &progressBar{w: os.Stderr, epochs: cfg.Epochs}
		opt.Progress = bar.progress
		opt.OnEpoch = bar.epoch
	}
	sum, err := train.Run(ctx, cfg, os.Stdout, opt)
	if bar != nil {
		bar.finish(sum)
	}
	return err
}

// parseTrainArgs builds the run configuration: defaults, then the --config
// file, then every flag given explicitly.
func parseTrainArgs(args []string, stderr io.Writer) (train.Config, error) {
	def := train.DefaultConfig()
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, trainUsage)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nsystems: %s\n", strings.Join(train.Names(), ", "))
	}
	var (
		configPath = fs.String("config", "", "JSON file with the run configuration (fields as train.Config)")
		c          = def
		fanout     = fs.String("fanout", joinInts(def.Fanout), "neighbours sampled per hop, seeds' hop first; -1 = all")
		evalFanout = fs.String("eval-fanout", "", "fanouts of sampled evaluation (default: --fanout)")
		warmup     = fs.Int("warmup", -1, "warm-up epochs flagged in the records (default 1 when epochs > 1)")
		opts       optList
	)
	fs.StringVar(&c.Dataset, "dataset", "", "dataset name (in the data directory)")
	fs.StringVar(&c.DataDir, "data-dir", "", "data directory (default $OUTCORE_DATA, else $XDG_DATA_HOME/outcore, else ~/.local/share/outcore)")
	fs.StringVar(&c.System, "system", def.System, "system variant")
	fs.StringVar(&c.Model, "model", def.Model, "sage, gcn or gat")
	fs.IntVar(&c.Layers, "layers", 0, "layers (default: number of fanouts; must match)")
	fs.IntVar(&c.Hidden, "hidden", def.Hidden, "hidden width (gat: concatenated width of all heads)")
	fs.IntVar(&c.Heads, "heads", def.Heads, "attention heads (gat)")
	fs.IntVar(&c.Batch, "batch", def.Batch, "seeds per training batch (0 = whole training split)")
	fs.IntVar(&c.Epochs, "epochs", def.Epochs, "epochs")
	fs.Float64Var(&c.LR, "lr", def.LR, "Adam learning rate")
	fs.Float64Var(&c.Dropout, "dropout", def.Dropout, "dropout probability")
	fs.Float64Var(&c.WeightDecay, "weight-decay", def.WeightDecay, "L2 weight decay (Adam)")
	fs.Int64Var(&c.Seed, "seed", def.Seed, "random seed (initialisation, shuffling, sampling, dropout)")
	fs.StringVar(&c.IO, "io", def.IO, "storage backend: uring, pread, mmap or auto")
	fs.IntVar(&c.QueueDepth, "queue-depth", 0, "I/O queue depth per reader (0 = storage default)")
	fs.BoolVar(&c.RowNormalize, "row-normalize", false, "divide every feature row by its sum (Planetoid preprocessing)")
	fs.StringVar(&c.Eval, "eval", def.Eval, "evaluation: sampled (with --eval-fanout) or full neighbourhoods")
	fs.IntVar(&c.EvalBatch, "eval-batch", 0, "nodes per evaluation batch (default max(batch, 1000))")
	fs.IntVar(&c.EvalEvery, "eval-every", def.EvalEvery, "evaluate every n-th epoch (and the last)")
	fs.IntVar(&c.EvalMaxNodes, "eval-max-nodes", 0, "evaluate at most this many val/test nodes per split, a fixed random subset (0 = 10000, -1 = all)")
	fs.StringVar(&c.ModelMem, "model-mem", "", `where the CPU model step is accounted under --mem-limit: "device" (default; outside the budget, as GPU memory in the papers) or "host"`)
	fs.StringVar(&c.MemLimit, "mem-limit", "", `memory budget: "2GiB", "512MB" or a share of the feature bytes "25%"`)
	fs.Var(&opts, "opt", "variant option key=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	cfg := def
	if *configPath != "" {
		var err error
		if cfg, err = train.LoadConfigFile(*configPath); err != nil {
			return cfg, fmt.Errorf("%w: %v", ErrUsage, err)
		}
	}
	var ferr error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "config":
		case "dataset":
			cfg.Dataset = c.Dataset
		case "data-dir":
			cfg.DataDir = c.DataDir
		case "system":
			cfg.System = c.System
		case "model":
			cfg.Model = c.Model
		case "layers":
			cfg.Layers = c.Layers
		case "hidden":
			cfg.Hidden = c.Hidden
		case "heads":
			cfg.Heads = c.Heads
		case "batch":
			cfg.Batch = c.Batch
		case "epochs":
			cfg.Epochs = c.Epochs
		case "lr":
			cfg.LR = c.LR
		case "dropout":
			cfg.Dropout = c.Dropout
		case "weight-decay":
			cfg.WeightDecay = c.WeightDecay
		case "seed":
			cfg.Seed = c.Seed
		case "io":
			cfg.IO = c.IO
		case "queue-depth":
			cfg.QueueDepth = c.QueueDepth
		case "row-normalize":
			cfg.RowNormalize = c.RowNormalize
		case "eval":
			cfg.Eval = c.Eval
		case "eval-batch":
			cfg.EvalBatch = c.EvalBatch
		case "eval-every":
			cfg.EvalEvery = c.EvalEvery
		case "eval-max-nodes":
			cfg.EvalMaxNodes = c.EvalMaxNodes
		case "mem-limit":
			cfg.MemLimit = c.MemLimit
		case "model-mem":
			cfg.ModelMem = c.ModelMem
		case "fanout":
			v, err := train.ParseIntList(*fanout)
			if err != nil {
				ferr = fmt.Errorf("%w: --fanout: %v", ErrUsage, err)
			}
			cfg.Fanout = v
		case "eval-fanout":
			v, err := train.ParseIntList(*evalFanout)
			if err != nil {
				ferr = fmt.Errorf("%w: --eval-fanout: %v", ErrUsage, err)
			}
			cfg.EvalFanout = v
		case "warmup":
			w := *warmup
			cfg.WarmupEpochs = &w
		case "opt":
			if cfg.Options == nil {
				cfg.Options = map[string]string{}
			}
			for k, v := range opts {
				cfg.Options[k] = v
			}
		}
	})
	// --layers without --fanout: repeat the default fanout's first entry.
	if ferr == nil && cfg.Layers > 0 && cfg.Layers != len(cfg.Fanout) && !flagSet(fs, "fanout") && *configPath == "" {
		f := make([]int, cfg.Layers)
		for i := range f {
			f[i] = def.Fanout[0]
		}
		cfg.Fanout = f
	}
	return cfg, ferr
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// optList collects repeated --opt key=value flags.
type optList map[string]string

func (o *optList) String() string {
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

func (o *optList) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	if *o == nil {
		*o = optList{}
	}
	(*o)[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

func outcoreVersion() string { return version.String() }

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
	fmt.Fprintf(b.w, "epoch %d%s: %.2fs  loss %.4f  train %.4f  val %.4f  test %.4f  read %.1f MB (x%.2f)\n",
		r.Epoch, warm, r.EpochS, r.TrainLoss, r.TrainAcc, r.ValAcc, r.TestAcc, float64(r.BytesRead)/1e6, r.ReadAmplification)
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
