package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"outcore/engine/devprofile"

	"outcore/engine/metrics"
	"outcore/engine/train"
	"outcore/engine/vocab"
	"outcore/experiments/slurm"
	"outcore/experiments/supervise"
	"outcore/internal/osutil"
	"outcore/store"
)

// The test binary doubles as the two other processes the runner deals
// with, selected by environment variables (the usual os/exec test pattern):
//
//   - envFakeTrain=1: a fake `outcore train --config FILE --cgroup PATH`
//     (run as `<test binary> -test.run=^$ -- FILE --cgroup PATH`) that
//     writes the records of engine/metrics on stdout, says which group it
//     was told about in a log record ("--cgroup PATH") and behaves as the
//     config's options ask (see fakeTrain);
//   - envServer=DATADIR: a queue server over DATADIR that prints every
//     event it publishes ("EVENT id kind run msg") — killed with SIGKILL by
//     TestServerKilledLosesNoEpoch, and, with envSlurmOutcore naming an
//     outcore binary for the jobs' dataset commands, by
//     TestSlurmServerKilledPicksUpJobs.
//
// Fake children also run as Slurm jobs (slurm_e2e_test.go): the job script
// exports envFakeTrain and runs this binary.
const (
	envFakeTrain    = "OUTCORE_TEST_FAKE_TRAIN"
	envServer       = "OUTCORE_TEST_SERVER"
	envSlurmOutcore = "OUTCORE_TEST_SLURM_OUTCORE"
)

// fakeSystems are registered in the engine's registry so that grids naming
// them validate; the fake child never calls their factory.
var fakeSystems = []string{"fake", "fake2", "fake3"}

func TestMain(m *testing.M) {
	if os.Getenv(envFakeTrain) != "" {
		os.Exit(fakeTrain(os.Args))
	}
	// The runner measures the storage before a fresh data directory's first
	// run (a few seconds): not in the tests of other things, which set the
	// measurement off unless they test it (devprofile.ProbeEnv).
	os.Setenv(devprofile.ProbeEnv, "off")
	for _, name := range fakeSystems {
		train.RegisterVariant(train.Variant{Variant: vocab.Variant{Name: name, Options: fakeOptions},
			New: func(train.Config) (train.System, error) { return nil, fmt.Errorf("fake system") }})
	}
	// a variant with a floor of its own (train.Variant.MinMemory)
	train.RegisterVariant(train.Variant{Variant: vocab.Variant{Name: "fake-floor", MinMemory: func(train.DatasetShape, train.Config) int64 { return 300 << 20 }},
		New: func(train.Config) (train.System, error) { return nil, fmt.Errorf("fake system") }})
	// a floor that only holds once the first mini-batch was sampled from
	// the dataset (train.ProbeShape): 20 MiB plus a byte per input node
	train.RegisterVariant(train.Variant{Variant: vocab.Variant{Name: "fake-probe", MinMemory: func(s train.DatasetShape, _ train.Config) int64 {
		if s.FirstBatchInputs == 0 {
			return 0
		}
		return 20<<20 + s.FirstBatchInputs
	}}, New: func(train.Config) (train.System, error) { return nil, fmt.Errorf("fake system") }})
	if dir := os.Getenv(envServer); dir != "" {
		os.Exit(fakeServer(dir))
	}
	code := m.Run()
	if tinyDir != "" {
		os.RemoveAll(filepath.Dir(tinyDir))
	}
	if outcoreBinDir != "" {
		os.RemoveAll(outcoreBinDir)
	}
	os.Exit(code)
}

// fakeOptions are the options fakeTrain reads, declared by the fake
// systems.
var fakeOptions = func() []train.Option {
	var o []train.Option
	for _, k := range []string{"epoch_ms", "alloc_mib", "report_ms", "stderr_kib", "sample_ms"} {
		o = append(o, train.Option{Key: k, Type: train.OptInt, Default: "0", Help: "see fakeTrain"})
	}
	for _, k := range []string{"fail", "hang", "ignore_term", "report", "oom", "late_sample", "deviate", "bad_lines", "enospc"} {
		o = append(o, train.Option{Key: k, Type: train.OptString, Default: "", Help: "see fakeTrain"})
	}
	return o
}()

// fakeTrain emulates `outcore train`. Options (config "options"):
//
//	epochs: from the config; epoch_ms (default 20): time per epoch;
//	alloc_mib: MiB allocated and touched, spread over the epochs;
//	fail: exit 3 after the first epoch with this message on stderr;
//	hang: "1" sleeps after the first epoch until killed;
//	ignore_term: "1" ignores SIGTERM;
//	report: a file to which "epoch N" is appended report_ms (default 300)
//	after epoch N's record was written to stdout;
//	stderr_kib: KiB of noise written to stderr first;
//	deviate: a deviation logged as it prepares (train.Env.Deviate);
//	oom: "1" ends after the first epoch as `outcore train --mem-limit`
//	does when its cgroup's OOM killer struck: an oom summary, exit 1;
//	late_sample: "1" emits a second sample after each epoch's record, so
//	that it waits for a flush (not the next epoch's write);
//	bad_lines: "1" writes, after epoch 0's record, lines that are not the
//	run's (badLines) before the next epoch;
//	sample_ms: a sample every sample_ms from a goroutine of its own, as
//	the engine's resource sampler writes one a second (instead of one
//	sample per epoch), hang included;
//	enospc: "1" writes "no space left on device" on stderr after the
//	first epoch, stops its samples and waits, silent, until killed.
func fakeTrain(args []string) int {
	i := slices.Index(args, "--")
	// A Slurm job starts it as `outcore train --config FILE` is started
	// there: without --cgroup (it would place itself).
	slurmJob := i >= 0 && i+2 == len(args) && os.Getenv("SLURM_JOB_ID") != ""
	if !slurmJob && (i < 0 || i+3 >= len(args) || args[i+2] != "--"+supervise.CgroupFlag) {
		fmt.Fprintf(os.Stderr, "fake train: want -- FILE --cgroup PATH, got %q\n", args)
		return 2
	}
	cfgPath, placed := args[i+1], "(none: a Slurm job)"
	if !slurmJob {
		placed = args[i+3]
	}
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var cfg train.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opt := train.Opts(cfg.Options)
	epochMS, _ := opt.Int("epoch_ms", 20)
	allocMiB, _ := opt.Int("alloc_mib", 0)
	reportMS, _ := opt.Int("report_ms", 300)
	if opt.String("ignore_term", "") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if n, _ := opt.Int("stderr_kib", 0); n > 0 {
		for i := 0; i < n; i++ {
			fmt.Fprintf(os.Stderr, "noise line %06d %s\n", i, string(make([]byte, 1000)))
		}
	}
	em := metrics.NewEmitter(os.Stdout)
	rss, _ := osutil.RSSBytes()
	sampleMS, _ := opt.Int("sample_ms", 0)
	stopSamples := make(chan struct{})
	em.Emit(metrics.StartRecord{Type: metrics.TypeStart, System: cfg.System, Dataset: cfg.Dataset, Config: b,
		Host: metrics.HostFacts{GEMM: "fake", Cores: 1}, IOBackend: "pread", MemLimitBytes: cfg.MemLimitBytes,
		Devices: map[string]string{"sample": "cpu", "train": "cpu"}, Deviations: []string{"fake child"}})
	fmt.Println("not json: a stray line")
	em.Emit(metrics.LogRecord{Type: metrics.TypeLog, Level: "info", Msg: "--" + supervise.CgroupFlag + " " + placed, T: em.T()})
	if d := opt.String("deviate", ""); d != "" {
		em.Emit(metrics.LogRecord{Type: metrics.TypeLog, Level: "warn", Msg: metrics.DeviationLogPrefix + d, T: em.T()})
	}
	if sampleMS > 0 {
		go func() {
			tick := time.NewTicker(time.Duration(sampleMS) * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stopSamples:
					return
				case <-tick.C:
				}
				r, _ := osutil.RSSBytes()
				em.Emit(metrics.SampleRecord{Type: metrics.TypeSample, T: em.T(), CPUPercent: 50, RSSBytes: r})
			}
		}()
	}
	var keep [][]byte
	for ep := 0; ep < cfg.Epochs; ep++ {
		for bt := 0; bt < 3; bt++ {
			em.Emit(metrics.ProgressRecord{Type: metrics.TypeProgress, Epoch: ep, Batch: bt, Batches: 3, Phase: "train", Elapsed: em.T()})
		}
		if allocMiB > 0 {
			per := allocMiB / cfg.Epochs
			for i := 0; i < per; i++ {
				blk := make([]byte, 1<<20)
				for j := 0; j < len(blk); j += 4096 {
					blk[j] = 1
				}
				keep = append(keep, blk)
			}
		}
		time.Sleep(time.Duration(epochMS) * time.Millisecond)
		if r, err := osutil.RSSBytes(); err == nil {
			rss = max(rss, r)
		}
		if sampleMS == 0 {
			em.Emit(metrics.SampleRecord{Type: metrics.TypeSample, T: float64(ep), CPUPercent: 50, RSSBytes: rss})
		}
		em.Emit(metrics.LogRecord{Type: metrics.TypeLog, Level: "info", Msg: fmt.Sprintf("epoch %d done", ep), T: em.T()})
		em.Emit(metrics.EpochRecord{Type: metrics.TypeEpoch, Epoch: ep, Warmup: ep == 0 && cfg.Epochs > 1,
			EpochS: float64(epochMS) / 1000 * float64(ep+1), Batches: 3, ValAcc: 0.5 + float64(ep)/100, TestAcc: 0.4,
			Stages: map[string]float64{"inspect_s": 0.01}, Tiers: map[string]metrics.TierCount{"device": {Lookups: 10, Hits: 10}}})
		if opt.String("late_sample", "") == "1" {
			em.Emit(metrics.SampleRecord{Type: metrics.TypeSample, T: float64(ep) + 0.5, CPUPercent: 50, RSSBytes: rss})
		}
		if ep == 0 && opt.String("bad_lines", "") == "1" {
			for _, l := range badLines {
				fmt.Println(l)
			}
		}
		if p := opt.String("report", ""); p != "" {
			time.Sleep(time.Duration(reportMS) * time.Millisecond)
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			fmt.Fprintf(f, "epoch %d\n", ep)
			f.Close()
		}
		if ep == 0 {
			if opt.String("oom", "") == "1" {
				em.Emit(metrics.SummaryRecord{Type: metrics.TypeSummary, Outcome: metrics.OutcomeOOM, Epochs: 1, BestEpoch: -1,
					Error: "killed by the memory limit of 1 bytes (fake)"})
				return 1
			}
			if msg := opt.String("fail", ""); msg != "" {
				fmt.Fprintln(os.Stderr, msg)
				return 3
			}
			if opt.String("enospc", "") == "1" {
				close(stopSamples)
				fmt.Fprintln(os.Stderr, "write scratch/chunk-0.bin: no space left on device")
				time.Sleep(time.Hour)
			}
			if opt.String("hang", "") == "1" {
				time.Sleep(time.Hour)
			}
		}
	}
	em.Emit(metrics.SummaryRecord{Type: metrics.TypeSummary, Outcome: metrics.OutcomeDone, Epochs: cfg.Epochs,
		PeakRSSBytes: rss, TotalS: em.T(), MeanEpochS: float64(epochMS) / 1000})
	_ = keep
	return 0
}

// fakeServer runs the queue of dataDir (or stands by while another
// process runs it, printing "STANDBY <reason>") and prints published events
// until killed.
func fakeServer(dataDir string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	st, err := store.OpenDataDir(ctx, dataDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opts := testOptions(dataDir, st)
	if bin := os.Getenv(envSlurmOutcore); bin != "" {
		opts.ExecutorOptions = map[string]any{slurm.Name: testSlurmOptions(bin)}
	}
	m, err := New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ch, cancel := m.Subscribe()
	defer cancel()
	go func() {
		for ev := range ch {
			fmt.Printf("EVENT %d %s %d %s\n", ev.ID, ev.Kind, ev.RunID, strconv.Quote(ev.Msg))
		}
	}()
	standby := func(err error) { fmt.Printf("STANDBY %s\n", strconv.Quote(err.Error())) }
	if err := m.Standby(ctx, 250*time.Millisecond, standby); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testOptions runs children as the fake train of this test binary.
func testOptions(dataDir string, st *store.Store) Options {
	return Options{
		DataDir:   dataDir,
		Store:     st,
		Binary:    os.Args[0],
		Args:      []string{"-test.run=^$", "--"},
		Env:       []string{envFakeTrain + "=1"},
		KillGrace: 2 * time.Second,
		// The tests' queues offer both executors; TestExecutorIsTheServers
		// checks the default (the executor named alone).
		Executors: []string{store.ExecutorLocal, slurm.Name},
	}
}
