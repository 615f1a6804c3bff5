package train

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/internal/osutil"
)

// RunOptions are the parts of a run that are not its configuration.
type RunOptions struct {
	// Progress, when set, also receives every progress record (the CLI draws
	// its terminal bar from them).
	Progress func(metrics.ProgressRecord)
	// OnEpoch, when set, also receives every epoch record.
	OnEpoch func(metrics.EpochRecord)
	// GPU, when set, adds GPU readings to the per-second samples; GPUName
	// goes into the start record's host facts ("none" when empty).
	GPU     metrics.GPUSampler
	GPUName string
	// Version is outcore's version string for the start record.
	Version string
	// SampleInterval is the resource-sampling period (default
	// metrics.SampleInterval, 1 s).
	SampleInterval time.Duration
	// MemoryLimit, when set, gives the run's movable memory limit for its
	// resolved budget (memory_limit.go); nil: FixedLimit(budget).
	MemoryLimit func(budget int64) MemoryLimit
}

// Run executes one training run of cfg.System and writes its records to out
// as JSON lines: start, log records, per-second samples, progress, one epoch
// record per epoch (training then evaluation; evaluation is excluded from
// epoch_s and from bytes_read), and a summary whose test_acc is the test
// accuracy at the epoch of best val_acc. Every error after the first record
// ends the stream with a summary of outcome "failed" (or "cancelled" when ctx
// ended the run); the error is also returned.
func Run(ctx context.Context, cfg Config, out io.Writer, opt *RunOptions) (metrics.SummaryRecord, error) {
	if opt == nil {
		opt = &RunOptions{}
	}
	emit := metrics.NewEmitter(out)
	r := &runner{cfg: cfg, opt: opt, emit: emit}
	sum, err := r.run(ctx)
	sum.Type = metrics.TypeSummary
	sum.TotalS = emit.T()
	if err != nil {
		sum.Outcome = metrics.OutcomeFailed
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			sum.Outcome = metrics.OutcomeCancelled
		}
		sum.Error = err.Error()
	} else {
		sum.Outcome = metrics.OutcomeDone
	}
	if eerr := emit.Emit(sum); eerr != nil && err == nil {
		err = eerr
	}
	return sum, err
}

// runner holds one run's state.
type runner struct {
	cfg  Config
	opt  *RunOptions
	emit *metrics.Emitter

	mu      sync.Mutex
	started bool
	pending []string // storage log lines before the start record
}

// logLine routes a library log line into a log record (held back until the
// start record is out).
func (r *runner) logLine(line string) {
	r.mu.Lock()
	if !r.started {
		r.pending = append(r.pending, line)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	_ = r.emit.Infof("%s", line)
}

func (r *runner) run(ctx context.Context) (sum metrics.SummaryRecord, err error) {
	sum.BestEpoch = -1
	cfg := r.cfg
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return sum, err
	}
	ds, err := dataset.OpenByName(dataset.ResolveDataDir(cfg.DataDir), cfg.Dataset)
	if err != nil {
		return sum, fmt.Errorf("open dataset: %w", err)
	}
	if n := ds.Meta.Numbering(); cfg.IDs != "" && n != cfg.IDs {
		return sum, fmt.Errorf("%w: ids: %q, but dataset %s numbers its nodes %s", ErrConfig, cfg.IDs, cfg.Dataset, cmp.Or(n, "as its source did (imported)"))
	}
	if err := cfg.ResolveMemLimit(ds.FeatureBytes()); err != nil {
		return sum, err
	}
	// A paper's testbed maps the run's settings before anything is sized
	// from them (testbed.go, DESIGN §13).
	var testbedLines []string
	sum.Testbed = cfg.Testbed
	if cfg.PaperTestbed() {
		s, err := MapTestbed(cfg, ds.Meta, dataset.ResolveDataDir(cfg.DataDir), ds.Dir)
		if err != nil {
			return sum, err
		}
		testbedLines = ApplyTestbed(&cfg, s)
		host, _, _ := s.For(cfg.System)
		r.logLine(fmt.Sprintf("testbed %s: mapping applied (DESIGN §13): compute %s, %d epochs, step dilation %g, device_mem %q, options %v; host memory limit %d bytes, the run's %d (each rule among the deviations)",
			cfg.Testbed, cfg.Compute, cfg.Epochs, cfg.StepDilation, cfg.DeviceMem, cfg.Options, host, cfg.MemLimitBytes))
		if err := cfg.Validate(); err != nil {
			return sum, fmt.Errorf("testbed %s: %w", cfg.Testbed, err)
		}
	}
	if err := cfg.ResolveDeviceMem(ds.FeatureBytes()); err != nil {
		return sum, err
	}
	// The same check as the grid's, the CLI's and the dashboard's
	// (feasible.go), with the first batch probed.
	if err := CheckFeasible(cfg, ds.Meta); err != nil {
		return sum, err
	}
	labels, err := ds.Labels()
	if err != nil {
		return sum, fmt.Errorf("read labels: %w", err)
	}
	env := &Env{Config: cfg, Dataset: ds, Labels: labels, MemBudget: cfg.MemLimitBytes, Emit: r.emit,
		Reads: metrics.NewReadAccount(metrics.DatasetFileKind), testbed: testbedLines}
	if env.compute, env.profile, err = cfg.ComputeMode(); err != nil {
		return sum, fmt.Errorf("%w: compute: %v", ErrConfig, err)
	}
	env.Limit = FixedLimit(env.MemBudget)
	if r.opt.MemoryLimit != nil {
		env.Limit = r.opt.MemoryLimit(env.MemBudget)
	}
	if env.Train, err = ds.TrainIDs(); err != nil {
		return sum, fmt.Errorf("read train split: %w", err)
	}
	if env.Val, err = ds.ValIDs(); err != nil {
		return sum, fmt.Errorf("read val split: %w", err)
	}
	if env.Test, err = ds.TestIDs(); err != nil {
		return sum, fmt.Errorf("read test split: %w", err)
	}
	if n := len(env.Train); cfg.TrainMaxNodes > 0 && n > cfg.TrainMaxNodes {
		env.Train = sample.Shuffle(env.Train, cfg.Seed^evalSeedSalt, 0)[:cfg.TrainMaxNodes]
		slices.Sort(env.Train)
		env.Deviate("training on a fixed random subset of %d of the %d training nodes (train_max_nodes): an epoch of %d batches", cfg.TrainMaxNodes, n, env.NumBatches())
	}
	for _, sp := range []struct {
		name string
		ids  *[]int64
		salt int
	}{{"val", &env.Val, 1}, {"test", &env.Test, 2}} {
		if n := len(*sp.ids); cfg.EvalMaxNodes > 0 && n > cfg.EvalMaxNodes {
			*sp.ids = sample.Shuffle(*sp.ids, cfg.Seed^evalSeedSalt, sp.salt)[:cfg.EvalMaxNodes]
			r.logLine(fmt.Sprintf("evaluation: %s split has %d nodes, evaluating a fixed random subset of %d (eval_max_nodes)", sp.name, n, cfg.EvalMaxNodes))
		}
	}
	if len(env.Train) == 0 {
		return sum, fmt.Errorf("dataset %s has an empty training split", cfg.Dataset)
	}
	if ds.Meta.Classes < 2 {
		return sum, fmt.Errorf("dataset %s has %d classes, need at least 2", cfg.Dataset, ds.Meta.Classes)
	}
	backend, _ := storage.ParseBackend(cfg.IO)
	env.Storage = storage.Options{Backend: backend, QueueDepth: cfg.QueueDepth, AllowBuffered: cfg.AllowBuffered, Logger: r.logLine, Account: env.Reads}
	if env.Trainer, err = NewTrainer(cfg, ds.Meta.FeatureDim, ds.Meta.Classes, labels); err != nil {
		return sum, err
	}
	defer env.Trainer.Close()
	if err := useDevice(env, cfg.Device); err != nil {
		return sum, err
	}
	v, _ := LookupVariant(cfg.System)
	sys, err := v.New(cfg)
	if err != nil {
		return sum, fmt.Errorf("create system %s: %w", cfg.System, err)
	}
	defer func() {
		if cerr := sys.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	// The evaluator's own reader of features.bin also tells the start
	// record which backend the run uses.
	evalFeats, err := env.OpenFeatures()
	if err != nil {
		return sum, err
	}
	defer evalFeats.Close()
	evalTopo, closeEvalTopo, err := env.Topology("mmap")
	if err != nil {
		return sum, err
	}
	defer closeEvalTopo()
	ev, err := NewEvaluator(cfg, env.Trainer, evalTopo, evalFeats)
	if err != nil {
		return sum, err
	}
	defer ev.Close()

	if err := r.start(env, sys, evalFeats.Backend()); err != nil {
		return sum, err
	}
	var floorNote string
	env.device, floorNote = deviceProfileFor(dataset.ResolveDataDir(cfg.DataDir), ds.Dir)
	r.logLine(floorNote)
	env.progress = func(p metrics.ProgressRecord) {
		_ = r.emit.Emit(p)
		if r.opt.Progress != nil {
			r.opt.Progress(p)
		}
	}

	pm := metrics.NewPressureMeter()
	defer func() {
		p := pm.Stop()
		sum.HostPressure = &p
	}()
	rs := metrics.NewResourceSampler(r.emit.Start())
	rs.GPU = r.opt.GPU
	sctx, stopSampler := context.WithCancel(ctx)
	var swg sync.WaitGroup
	swg.Add(1)
	go func() {
		defer swg.Done()
		iv := r.opt.SampleInterval
		if iv <= 0 {
			iv = metrics.SampleInterval
		}
		rs.Run(sctx, iv, func(s metrics.SampleRecord) { _ = r.emit.Emit(s) })
	}()
	defer func() {
		stopSampler()
		swg.Wait()
		last := rs.Sample()
		_ = r.emit.Emit(last)
		sum.PeakRSSBytes, sum.PeakCgroupBytes = rs.Peaks()
		if hwm, err := osutil.PeakRSSBytes(); err == nil && hwm > sum.PeakRSSBytes {
			sum.PeakRSSBytes = hwm
		}
	}()

	env.Progress(0, 0, 1, "prepare")
	t0 := time.Now()
	if err := sys.Prepare(ctx, env); err != nil {
		return sum, fmt.Errorf("%s prepare: %w", cfg.System, err)
	}
	sum.PrepareS = time.Since(t0).Seconds()
	env.prepMu.Lock()
	sum.PrepareStages = env.prepStages
	if d, ok := sys.(Describer); ok {
		sum.Deviations = append(sum.Deviations, d.Deviations()...)
	}
	sum.Deviations = append(sum.Deviations, env.deviations...)
	if d := computeDeviation(env.compute, env.profile, cfg.StepDilation); d != "" {
		sum.Deviations = append(sum.Deviations, d)
	}
	sum.Deviations = append(sum.Deviations, env.testbed...)
	sum.Memory = env.MemoryAccount()
	sum.FeatureDiskBytes, sum.FeatureDiskBlowup, sum.DiskFiles = env.diskAccount()
	env.prepMu.Unlock()
	_ = r.emit.Infof("%s prepared in %.3fs", cfg.System, sum.PrepareS)

	var steady, all []float64
	for epoch := 0; epoch < cfg.Epochs; epoch++ {
		rec, err := r.epoch(ctx, env, sys, ev, epoch)
		if err != nil {
			return sum, err
		}
		sum.Epochs = epoch + 1
		all = append(all, rec.EpochS)
		if !rec.Warmup {
			steady = append(steady, rec.EpochS)
		}
	}
	if len(steady) == 0 {
		steady = all
	}
	for _, v := range steady {
		sum.MeanEpochS += v / float64(len(steady))
	}
	sum.BestEpoch, sum.BestValAcc, sum.TestAcc = env.Trainer.Best()
	return sum, nil
}

// start emits the start record and any log lines held back until then.
func (r *runner) start(env *Env, sys System, backend storage.Backend) error {
	cfg, ds := env.Config, env.Dataset
	cj, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	host := metrics.CollectHost(ds.Dir)
	host.GEMM = nn.GemmBackend()
	host.Version = r.opt.Version
	if r.opt.GPUName != "" {
		host.GPU = r.opt.GPUName
	}
	rec := metrics.StartRecord{
		Type: metrics.TypeStart, System: cfg.System, Dataset: cfg.Dataset, Config: cj, Host: host,
		IOBackend: string(backend), MemLimitBytes: cfg.MemLimitBytes,
		Devices: map[string]string{"sample": "cpu", "extract": "cpu", "train": "cpu"},
	}
	if lim := env.Limit; lim.Enforced() {
		rec.LimitEnforced = true
		if rec.MemLimitBytes == 0 {
			rec.MemLimitBytes = lim.Bytes()
		}
	}
	if d, ok := sys.(Describer); ok {
		if dev := d.Devices(); len(dev) > 0 {
			rec.Devices = dev
		}
		rec.Deviations = d.Deviations()
	}
	if d := computeDeviation(env.compute, env.profile, cfg.StepDilation); d != "" {
		rec.Deviations = append(rec.Deviations, d)
		dev := make(map[string]string, len(rec.Devices))
		for k, v := range rec.Devices {
			dev[k] = v
		}
		dev["train"] = env.compute.String()
		rec.Devices = dev
	}
	rec.Deviations = append(rec.Deviations, env.testbed...)
	rec.Testbed = cfg.Testbed
	if err := r.emit.Emit(rec); err != nil {
		return err
	}
	r.mu.Lock()
	r.started = true
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	for _, l := range pending {
		_ = r.emit.Infof("%s", l)
	}
	if host.Reclaim != "" {
		_ = r.emit.Warnf("host: proactive reclaim is on (%s): it pages out idle page cache beside this run's memory limit, so cache residency and page faults are not the limit's alone", host.Reclaim)
	}
	return nil
}

// epoch runs and evaluates one epoch and emits its record.
func (r *runner) epoch(ctx context.Context, env *Env, sys System, ev *Evaluator, epoch int) (metrics.EpochRecord, error) {
	cfg := env.Config
	ep := metrics.NewEpochStats()
	if v, ok := LookupVariant(cfg.System); ok {
		ep.WallStagesAs(v.WallStages)
	}
	reads0 := env.Reads.Totals()
	rb0, _ := osutil.ReadBytes()
	pm := metrics.NewPressureMeter()
	dm := metrics.NewDiskMeter(env.Dataset.Dir)
	ep.BatchStarted()
	if err := sys.RunEpoch(ctx, env, epoch, ep); err != nil {
		return metrics.EpochRecord{}, fmt.Errorf("%s epoch %d: %w", cfg.System, epoch, err)
	}
	pressure := pm.Stop()
	disk := dm.Stop()
	rb1, _ := osutil.ReadBytes()
	reads := env.Reads.Totals().Sub(reads0)
	var rec metrics.EpochRecord
	ep.Fill(&rec)
	rec.MetricsVersion = metrics.EpochMetricsVersion
	rec.Epoch = epoch
	rec.Warmup = epoch < cfg.Warmup()
	rec.HostPressure = &pressure
	rec.DiskService = disk // its profile time comes with the I/O floor (fillIOFloor)
	// Device reads (DESIGN §5): the process total, and the run's account
	// of feature and topology files (engine/storage Files, measured
	// memory maps, what the variant added) over the same window.
	rec.BytesRead = rb1 - rb0
	rec.FeatureBytesRead = reads.FeatureBytes
	rec.TopologyBytesRead = reads.TopologyBytes
	rec.RowsFromDevice += reads.FeatureRows
	if reads.FeatureRowsDelivered != 0 || rec.RowsFromDevice != 0 {
		if rec.Counters == nil {
			rec.Counters = map[string]int64{}
		}
		rec.Counters[metrics.CounterRowsDelivered] = reads.FeatureRowsDelivered
	}
	rec.ReadAmplification = metrics.ReadAmplification(rec.FeatureBytesRead, rec.RowsFromDevice, env.Dataset.RowBytes())
	fillIOFloor(&rec, env.device, reads)
	if n := rec.Counters["rows_unaccounted"]; n > 0 {
		env.Warnf("%s epoch %d: %d looked-up rows were counted by more than one tier (rows_unaccounted)", cfg.System, epoch, n)
	}
	if want := env.NumBatches(); rec.Batches != want {
		env.Warnf("%s epoch %d trained %d batches, the epoch has %d", cfg.System, epoch, rec.Batches, want)
	}
	rec.Compute = env.compute.String()
	// Evaluation needs a trained model: in the compute modes none and
	// model there is none, and val_acc and test_acc are n/a.
	if env.compute.Trains() && ((epoch+1)%cfg.EvalEvery == 0 || epoch == cfg.Epochs-1) {
		t0 := time.Now()
		env.Progress(epoch, 0, 2, "eval")
		val, err := ev.Accuracy(ctx, env.Val, 1)
		if err != nil {
			return rec, err
		}
		test, err := ev.Accuracy(ctx, env.Test, 2)
		if err != nil {
			return rec, err
		}
		env.Progress(epoch, 2, 2, "eval")
		rec.ValAcc, rec.TestAcc, rec.Evaluated = val, test, true
		rec.EvalS = time.Since(t0).Seconds()
		env.Trainer.Observe(epoch, val, test)
	}
	rec.WallS = r.emit.T()
	if r.opt.OnEpoch != nil {
		r.opt.OnEpoch(rec)
	}
	return rec, r.emit.Emit(rec)
}
