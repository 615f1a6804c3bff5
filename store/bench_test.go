package store_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"outcore/engine/metrics"
	"outcore/store"
)

// The store benchmark of docs/benchmarks/store.md: a database of 1,000
// finished runs of 50 epochs of 600 s each, sampled every second — 50,000
// epoch rows and 30 M sample rows (30,000 per run) — in 51 experiments (one
// of 500 runs, fifty of 10), then the dashboard's queries and CSV export
// against it. It only runs when
// OUTCORE_STORE_BENCH=1 (it writes about 2 GB); the database is kept at
// $OUTCORE_STORE_BENCH_DB (default $TMPDIR/outcore-store-bench.db) and
// reused by later runs:
//
//	OUTCORE_STORE_BENCH=1 go test ./store -run '^$' -bench . -benchtime 20x -timeout 60m

const (
	benchRuns    = 1000
	benchEpochs  = 50
	benchSamples = 50 * 600 // per run: 600 one-second samples per epoch
	bigRuns      = 500      // runs of experiment 1; the other 500 are 50 × 10
)

var (
	benchOnce  sync.Once
	benchStore *store.Store
	benchErr   error
	benchBig   int64 // the 500-run experiment
	benchSmall int64 // a 10-run experiment
)

func benchDB(b *testing.B) *store.Store {
	b.Helper()
	if os.Getenv("OUTCORE_STORE_BENCH") != "1" {
		b.Skip("set OUTCORE_STORE_BENCH=1 to build the 30M-sample database and run the store benchmark")
	}
	benchOnce.Do(func() {
		path := os.Getenv("OUTCORE_STORE_BENCH_DB")
		if path == "" {
			path = filepath.Join(os.TempDir(), "outcore-store-bench.db")
		}
		benchStore, benchErr = openOrBuild(b, path)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchStore
}

// openOrBuild opens path when it holds the complete benchmark data, else
// rebuilds it.
func openOrBuild(b *testing.B, path string) (*store.Store, error) {
	ctx := context.Background()
	if st, err := store.Open(ctx, path); err == nil {
		list, err := st.ListExperiments(ctx)
		if err == nil && len(list) == 51 {
			total := 0
			for _, e := range list {
				total += e.Counts.Done
				switch e.Counts.Total {
				case bigRuns:
					benchBig = e.ID
				case 10:
					benchSmall = e.ID
				}
			}
			last, _ := st.Samples(ctx, int64(benchRuns), 0, 0, 0)
			if total == benchRuns && len(last) == benchSamples {
				b.Logf("reusing %s", path)
				return st, nil
			}
		}
		st.Close()
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := fill(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	fi, _ := os.Stat(path)
	b.Logf("built %s in %.1f s: %d runs, %d epochs, %d samples, %.2f GB", path, time.Since(t0).Seconds(),
		benchRuns, benchRuns*benchEpochs, benchRuns*benchSamples, float64(fi.Size())/1e9)
	return st, nil
}

// fill writes the benchmark data with the store's own write API in
// transactions of 10 runs (300,000 samples each), samples through one
// prepared statement per run.
func fill(ctx context.Context, st *store.Store) error {
	systems := []string{"pyg+", "ginex", "gnndrive", "mariusgnn", "diskgnn"}
	limits := []int64{256 << 20, 512 << 20, 1 << 30, 2 << 30, 4 << 30}
	var exps []int64
	err := st.Update(ctx, func(tx *store.Tx) error {
		for i := 0; i < 51; i++ {
			e := store.Experiment{Name: fmt.Sprintf("bench-%d", i), Dataset: "bench", Grid: json.RawMessage(`{"dataset":"bench"}`)}
			if err := tx.InsertExperiment(&e); err != nil {
				return err
			}
			exps = append(exps, e.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	benchBig, benchSmall = exps[0], exps[1]
	samples := make([]metrics.SampleRecord, benchSamples)
	const perTx = 10
	for first := 0; first < benchRuns; first += perTx {
		err := st.Update(ctx, func(tx *store.Tx) error {
			for i := first; i < first+perTx; i++ {
				exp := exps[0]
				if i >= bigRuns {
					exp = exps[1+(i-bigRuns)/10]
				}
				r := store.Run{ExperimentID: exp, Seq: i, System: systems[i%len(systems)], Dataset: "bench", Model: "sage",
					MemLimitBytes: limits[(i/len(systems))%len(limits)], FeatureDim: 128, BatchSize: 1000, Fanout: "10,10,10",
					Repeat: i / 25, Config: json.RawMessage(`{"system":"x"}`)}
				if err := tx.InsertRun(&r); err != nil {
					return err
				}
				if _, err := tx.ClaimRun(r.ID); err != nil {
					return err
				}
				for ep := 0; ep < benchEpochs; ep++ {
					rec := metrics.EpochRecord{Epoch: ep, Warmup: ep == 0, EpochS: 10 + float64(i%7) + float64(ep)/100,
						SampleS: 1, ExtractS: 5, TrainS: 3, StallS: 1, Batches: 1000, BytesNeeded: 1 << 30, BytesRead: 3 << 30,
						ReadAmplification: 3, TrainLoss: 1 / float64(ep+1), ValAcc: 0.5 + float64(ep)/200, TestAcc: 0.5,
						Stages: map[string]float64{"inspect_s": 0.5, "switch_s": 0.1},
						Tiers:  map[string]metrics.TierCount{"cpu": {Lookups: 1000, Hits: 600}, "device": {Lookups: 400, Hits: 400}}}
					if err := tx.InsertEpoch(r.ID, &rec); err != nil {
						return err
					}
				}
				for s := range samples {
					samples[s] = metrics.SampleRecord{T: float64(s), CPUPercent: 150 + float64(s%50), IOWaitPercent: float64(s % 30),
						RSSBytes: 200<<20 + int64(s)<<10, CgroupBytes: 250<<20 + int64(s)<<10, DiskReadMBps: float64(s % 400)}
				}
				if err := tx.InsertSamples(r.ID, samples); err != nil {
					return err
				}
				if _, err := tx.FinishRun(r.ID, store.RunEnd{Status: store.StatusDone, TotalS: 600, PeakCgroupBytes: 300 << 20}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// timed runs fn b.N times and reports the median and max per call.
func timed(b *testing.B, fn func() error) {
	b.Helper()
	d := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		d = append(d, float64(time.Since(t0).Microseconds())/1000)
	}
	b.StopTimer()
	sort.Float64s(d)
	b.ReportMetric(d[len(d)/2], "median-ms")
	b.ReportMetric(d[len(d)-1], "max-ms")
}

func BenchmarkStore(b *testing.B) {
	st := benchDB(b)
	ctx := context.Background()
	b.Run("ListExperiments", func(b *testing.B) {
		timed(b, func() error {
			l, err := st.ListExperiments(ctx)
			if err == nil && (len(l) != 51 || l[len(l)-1].Counts.Done != bigRuns) {
				err = fmt.Errorf("list: %d experiments", len(l))
			}
			return err
		})
	})
	b.Run("Compare500Runs", func(b *testing.B) {
		timed(b, func() error {
			cells, err := st.Compare(ctx, benchBig)
			if err == nil && len(cells) != 25 {
				err = fmt.Errorf("compare: %d cells", len(cells))
			}
			return err
		})
	})
	b.Run("RunsOfExperiment500", func(b *testing.B) {
		timed(b, func() error {
			runs, err := st.Runs(ctx, store.RunFilter{ExperimentID: benchBig, Current: true})
			if err == nil && len(runs) != bigRuns {
				err = fmt.Errorf("runs: %d", len(runs))
			}
			return err
		})
	})
	b.Run("EpochsOfRun", func(b *testing.B) {
		i := int64(0)
		timed(b, func() error {
			i = i%benchRuns + 1
			eps, err := st.Epochs(ctx, i)
			if err == nil && len(eps) != benchEpochs {
				err = fmt.Errorf("epochs: %d", len(eps))
			}
			return err
		})
	})
	b.Run("SamplesOfRun", func(b *testing.B) {
		i := int64(0)
		timed(b, func() error {
			i = (i*7919)%benchRuns + 1
			s, err := st.Samples(ctx, i, 0, 0, 0)
			if err == nil && len(s) != benchSamples {
				err = fmt.Errorf("samples: %d", len(s))
			}
			return err
		})
	})
	b.Run("SampleSeries500Points", func(b *testing.B) {
		i := int64(0)
		timed(b, func() error {
			i = (i*7919)%benchRuns + 1
			s, err := st.SampleSeries(ctx, i, 0, 0, 500)
			if err == nil && len(s) != 500 {
				err = fmt.Errorf("series: %d points", len(s))
			}
			return err
		})
	})
	b.Run("SamplesWindow60s", func(b *testing.B) {
		i := int64(0)
		timed(b, func() error {
			i = (i*7919)%benchRuns + 1
			s, err := st.Samples(ctx, i, 3000, 3060, 0)
			if err == nil && len(s) != 60 {
				err = fmt.Errorf("samples: %d", len(s))
			}
			return err
		})
	})
}

// BenchmarkExport streams CSV exports of the 10-run and the 500-run
// experiment into a counting writer while a sampler records the peak Go
// heap and process RSS: constant memory means the same peaks for 6,000
// and 15,000,000 sample rows.
func BenchmarkExport(b *testing.B) {
	st := benchDB(b)
	for _, tc := range []struct {
		name string
		exp  *int64
		what string
		rows int
	}{
		{"Samples10Runs", &benchSmall, store.ExportSamples, 10 * benchSamples},
		{"Epochs500Runs", &benchBig, store.ExportEpochs, bigRuns * benchEpochs},
		{"Samples500Runs", &benchBig, store.ExportSamples, bigRuns * benchSamples},
	} {
		b.Run(tc.name, func(b *testing.B) { exportBench(b, st, *tc.exp, tc.what, tc.rows) })
	}
}

func exportBench(b *testing.B, st *store.Store, exp int64, what string, rows int) {
	ctx := context.Background()
	runtime.GC()
	peakHeap, peakRSS := sampleMemory()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				h, r := sampleMemory()
				peakHeap, peakRSS = max(peakHeap, h), max(peakRSS, r)
			}
		}
	}()
	var total int64
	var lines int
	timed(b, func() error {
		cw := &countWriter{}
		if err := st.ExportCSV(ctx, cw, exp, what); err != nil {
			return err
		}
		total, lines = cw.n, cw.lines
		if lines != rows+1 {
			return fmt.Errorf("exported %d lines, want %d", lines, rows+1)
		}
		return nil
	})
	close(stop)
	<-done
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peakRSS)/(1<<20), "peak-rss-MiB")
	b.ReportMetric(float64(total)/(1<<20), "csv-MiB")
	b.ReportMetric(float64(lines-1), "rows")
}

// countWriter counts bytes and lines and keeps nothing.
type countWriter struct {
	n     int64
	lines int
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	c.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// sampleMemory returns the Go heap in use and the process's resident set.
func sampleMemory() (heap, rss uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return ms.HeapInuse, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.Fields(rest)[0], 10, 64)
			rss = kb << 10
		}
	}
	return ms.HeapInuse, rss
}
