// Package storetest fills a real experiment store (SQLite in a data
// directory) with small experiments of finished runs, written through the
// store's own transactions as the runner writes them, for the tests of the
// packages that read the store (report, cmd/outcore/cli, web).
package storetest

import (
	"context"
	"encoding/json"
	"fmt"

	"outcore/engine/metrics"
	"outcore/store"
)

// Run is one run to write: its grid point, how it ended and its epochs.
type Run struct {
	System   string
	MemLimit int64 // bytes; 0 = no limit
	Repeat   int
	Outcome  string  // store.StatusDone, StatusOOM, StatusFailed, ... ("" = still queued)
	Epochs   int     // epochs reported before the end
	EpochS   float64 // seconds per epoch (each later epoch 1% slower)
	Dataset  string  // "" = "tiny"
	Dim      int     // feature dimension; 0 = 32
	Host     string  // the host's name in the run's host facts ("" = none recorded)
	Busy     bool    // every epoch measured on a busy host (others' CPU 60 %)
	// EvalEvery evaluates after every n-th epoch and the last, as
	// train.Config.EvalEvery does (0 or 1 = every epoch); the others carry
	// no accuracy (evaluated false, val_acc 0).
	EvalEvery int
}

// Grid is the experiment of the report and CLI tests: pyg+ and gnndrive at
// 128 MiB and 256 MiB, two repeats each, three epochs per run; pyg+ runs
// out of memory at 128 MiB and gnndrive is about twice as fast.
func Grid() []Run {
	var runs []Run
	for _, v := range []string{"pyg+", "gnndrive"} {
		for _, lim := range []int64{128 << 20, 256 << 20} {
			for rep := 0; rep < 2; rep++ {
				r := Run{System: v, MemLimit: lim, Repeat: rep, Outcome: store.StatusDone, Epochs: 3, EpochS: 2 + 0.1*float64(rep)}
				if v == "gnndrive" {
					r.EpochS /= 2
				}
				if v == "pyg+" && lim == 128<<20 {
					r.Outcome, r.Epochs = store.StatusOOM, 0
				}
				runs = append(runs, r)
			}
		}
	}
	return runs
}

// Epoch is a plausible epoch record of the current metrics version
// (DESIGN §5): stage seconds, two cache tiers, 600 rows of 128 B from the
// device at read amplification 3, 1 MiB of topology, busy and wait time,
// wall-clock stages, and accuracy rising with the epoch.
func Epoch(epoch int, secs float64) metrics.EpochRecord {
	e := LegacyEpoch(epoch, secs)
	e.MetricsVersion = metrics.EpochMetricsVersion
	e.RowsFromDevice = 600
	e.FeatureBytesRead = 600 * 128 * 3
	e.TopologyBytesRead = 1 << 20
	e.ReadAmplification = 3
	e.SampleBusyS, e.SampleWaitS = secs*0.1, secs*0.3
	e.ExtractBusyS, e.ExtractWaitS = secs*0.2, secs*0.6
	// wall-clock stages: add up to the epoch (DESIGN §5)
	e.WallSampleS, e.WallLoadS, e.WallTrainS, e.WallStallS = secs*0.1, secs*0.5, secs*0.3, secs*0.1
	e.HostPressure = QuietHost()
	return e
}

// QuietHost is the host pressure of a quiet host whose kernel reports CPU
// and I/O pressure but not memory pressure.
func QuietHost() *metrics.HostPressure {
	cpu, io := 3.0, 7.5
	return &metrics.HostPressure{Load1: 1.5, OthersCPUPct: 2, StealPct: 0, PSICPUPct: &cpu, PSIIOPct: &io}
}

// LegacyEpoch is an epoch record as outcore wrote them before metrics
// version 2: no metrics_version, no device reads by file kind, rows or
// busy/wait, and read_amplification = bytes_read / bytes_needed (3).
func LegacyEpoch(epoch int, secs float64) metrics.EpochRecord {
	return metrics.EpochRecord{Type: metrics.TypeEpoch, Epoch: epoch, Warmup: epoch == 0, EpochS: secs,
		SampleS: secs * 0.2, ExtractS: secs * 0.5, TrainS: secs * 0.3, StallS: secs * 0.1, Batches: 8,
		Tiers:       map[string]metrics.TierCount{"cpu": {Lookups: 1000, Hits: 400}, "device": {Lookups: 600, Hits: 600}},
		BytesNeeded: 1 << 20, BytesRead: 3 << 20, ReadAmplification: 3,
		TrainLoss: 1 / float64(epoch+1), TrainAcc: 0.5, ValAcc: 0.4 + 0.1*float64(epoch), TestAcc: 0.38 + 0.1*float64(epoch),
		Evaluated: true, WallS: float64(epoch+1) * secs}
}

// Experiment writes an experiment on dataset "tiny" with the given runs:
// each run is claimed, reports its epochs and one sample per epoch, and
// ends with its outcome. It returns the experiment and its runs as stored.
func Experiment(ctx context.Context, st *store.Store, name string, runs []Run) (store.Experiment, []store.Run, error) {
	ds := "tiny"
	if len(runs) > 0 && runs[0].Dataset != "" {
		ds = runs[0].Dataset
	}
	e := store.Experiment{Name: name, Dataset: ds, Grid: json.RawMessage(`{"dataset":"` + ds + `"}`)}
	err := st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		for i, spec := range runs {
			cfg, _ := json.Marshal(map[string]any{"system": spec.System, "epochs": spec.Epochs})
			dim := spec.Dim
			if dim == 0 {
				dim = 32
			}
			r := store.Run{ExperimentID: e.ID, Seq: i, System: spec.System, Dataset: ds, Model: "sage",
				MemLimitBytes: spec.MemLimit, FeatureDim: dim, BatchSize: 1024, Fanout: "10,5", Repeat: spec.Repeat, Config: cfg}
			if err := tx.InsertRun(&r); err != nil {
				return err
			}
			if spec.Outcome == "" {
				continue
			}
			if ok, err := tx.ClaimRun(r.ID); err != nil || !ok {
				return fmt.Errorf("claim run %d: %v %v", r.ID, ok, err)
			}
			if spec.Host != "" {
				host, _ := json.Marshal(metrics.HostFacts{Hostname: spec.Host, Cores: 2})
				if err := tx.SetRunStarted(r.ID, store.RunStart{Host: host}); err != nil {
					return err
				}
			}
			for ep := 0; ep < spec.Epochs; ep++ {
				rec := Epoch(ep, spec.EpochS*(1+0.01*float64(ep)))
				if n := spec.EvalEvery; n > 1 && (ep+1)%n != 0 && ep != spec.Epochs-1 {
					rec.ValAcc, rec.TestAcc, rec.Evaluated = 0, 0, false
				}
				if spec.Busy {
					rec.HostPressure = &metrics.HostPressure{Load1: 4, OthersCPUPct: 60}
				}
				if err := tx.InsertEpoch(r.ID, &rec); err != nil {
					return err
				}
				smp := metrics.SampleRecord{Type: metrics.TypeSample, T: rec.WallS, CPUPercent: 150, IOWaitPercent: 12,
					RSSBytes: 50 << 20, CgroupBytes: 80 << 20, DiskReadMBps: 30, Host: QuietHost()}
				if err := tx.InsertSamples(r.ID, []metrics.SampleRecord{smp}); err != nil {
					return err
				}
			}
			end := store.RunEnd{Status: spec.Outcome, TotalS: float64(spec.Epochs) * spec.EpochS}
			if ok, err := tx.FinishRun(r.ID, end); err != nil || !ok {
				return fmt.Errorf("finish run %d: %v %v", r.ID, ok, err)
			}
		}
		return nil
	})
	if err != nil {
		return e, nil, err
	}
	if e, err = st.Experiment(ctx, e.ID); err != nil {
		return e, nil, err
	}
	stored, err := st.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
	return e, stored, err
}
