package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/experiments"
	"outcore/report"
	"outcore/store"
	"outcore/store/storetest"
)

// The page benchmark (docs/benchmarks/web.md): every page of the dashboard
// against a store holding 1,000 finished runs, each with 50 epochs and 600
// per-second samples, seeded through the store API. Two layouts: ten
// experiments of 100 runs (4 variants × 5 limits × 5 repeats), and one
// experiment of 1,000 runs (the worst case for an experiment's page).
//
//	go test ./web -run '^$' -bench Pages -benchtime 20x -count 5

const (
	benchRuns    = 1000
	benchEpochs  = 50
	benchSamples = 600
)

var (
	benchMu    sync.Mutex
	benchSites = map[int]*benchSite{}
)

type benchSite struct {
	st   *store.Store
	base string
	exp  int64 // the experiment whose page is measured
	run  int64 // the run whose page is measured
}

// seedBench fills a store with benchRuns finished runs in experiments of perExp runs.
func seedBench(b *testing.B, dir string, st *store.Store, perExp int) (exp, run int64) {
	ctx := context.Background()
	variants := []string{"pyg+", "ginex", "gnndrive", "reference"}
	limits := []int64{64 << 20, 128 << 20, 256 << 20, 512 << 20, 1 << 30}
	for done := 0; done < benchRuns; {
		var e store.Experiment
		if err := st.Update(ctx, func(tx *store.Tx) error {
			e = store.Experiment{Name: fmt.Sprintf("bench %d", done/perExp), Dataset: "tiny", Grid: []byte(`{"dataset":"tiny"}`)}
			return tx.InsertExperiment(&e)
		}); err != nil {
			b.Fatal(err)
		}
		exp = e.ID
		for i := 0; i < perExp && done < benchRuns; i, done = i+1, done+1 {
			v, l, rep := variants[i%len(variants)], limits[(i/len(variants))%len(limits)], i/(len(variants)*len(limits))
			err := st.Update(ctx, func(tx *store.Tx) error {
				r := store.Run{ExperimentID: e.ID, Seq: i, System: v, Dataset: "tiny", Model: "sage", MemLimitBytes: l,
					FeatureDim: 32, BatchSize: 1024, Fanout: "10,5", Repeat: rep, Config: []byte(`{"epochs":50}`)}
				if err := tx.InsertRun(&r); err != nil {
					return err
				}
				run = r.ID
				if _, err := tx.ClaimRun(r.ID); err != nil {
					return err
				}
				for ep := 0; ep < benchEpochs; ep++ {
					rec := storetest.Epoch(ep, 1+float64(i%7)*0.1)
					if err := tx.InsertEpoch(r.ID, &rec); err != nil {
						return err
					}
				}
				samples := make([]metrics.SampleRecord, benchSamples)
				for s := range samples {
					samples[s] = metrics.SampleRecord{T: float64(s), CPUPercent: 150, IOWaitPercent: 10, RSSBytes: 50 << 20, CgroupBytes: 60 << 20, DiskReadMBps: 20}
				}
				if err := tx.InsertSamples(r.ID, samples); err != nil {
					return err
				}
				for k := 0; k < 10; k++ {
					if err := tx.AppendEvent(&store.Event{ExperimentID: e.ID, RunID: r.ID, Kind: store.EventLog, Msg: fmt.Sprintf("log line %d", k)}); err != nil {
						return err
					}
				}
				_, err := tx.FinishRun(r.ID, store.RunEnd{Status: store.StatusDone, TotalS: 60})
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	return exp, run
}

// site returns a served dashboard over a seeded store, made once per layout.
func site(b *testing.B, perExp int) *benchSite {
	benchMu.Lock()
	defer benchMu.Unlock()
	if s := benchSites[perExp]; s != nil {
		return s
	}
	dir, err := mkdirTemp()
	if err != nil {
		b.Fatal(err)
	}
	copyDir(b, tinyDir, filepath.Join(dataset.DatasetsDir(dir), "tiny"))
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	exp, run := seedBench(b, dir, st, perExp)
	b.Logf("seeded %d runs (%d per experiment) in %v", benchRuns, perExp, time.Since(start).Round(time.Millisecond))
	mgr, err := experiments.New(experiments.Options{DataDir: dir, Store: st, NoCgroups: true, Binary: "/bin/false"})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(ctx, Config{Store: st, Queue: mgr, DataDir: dir, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ctx, ln)
	s := &benchSite{st: st, base: "http://" + ln.Addr().String(), exp: exp, run: run}
	benchSites[perExp] = s
	return s
}

func BenchmarkPages(b *testing.B) {
	for _, perExp := range []int{100, 1000} {
		pages := []struct{ name, path string }{
			{"experiments", "/experiments"},
			{"experiment", "/experiments/%d"},
			{"experiment-charts.json", "/experiments/%d/charts.json"},
			{"run", "/runs/%d"},
			{"run-charts.json", "/runs/%d/charts.json"},
			{"new", "/experiments/new"},
			{"datasets", "/datasets"},
		}
		for _, pg := range pages {
			b.Run(fmt.Sprintf("%dx%d/%s", benchRuns/perExp, perExp, pg.name), func(b *testing.B) {
				s := site(b, perExp)
				path := pg.path
				switch pg.name {
				case "experiment", "experiment-charts.json":
					path = fmt.Sprintf(path, s.exp)
				case "run", "run-charts.json":
					path = fmt.Sprintf(path, s.run)
				}
				client := &http.Client{}
				get := func() time.Duration {
					req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
					req.Header.Set("Accept", "text/html")
					t0 := time.Now()
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					d := time.Since(t0)
					if resp.StatusCode != 200 || n == 0 {
						b.Fatalf("GET %s: %d, %d bytes", path, resp.StatusCode, n)
					}
					return d
				}
				get() // warm the connection and the caches
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					lat = append(lat, get())
				}
				b.StopTimer()
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
				b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "ms-p90")
			})
		}
	}
}

// mkdirTemp makes a data directory for a benchmark site (kept for the process).
func mkdirTemp() (string, error) { return os.MkdirTemp("", "web-bench-") }

// BenchmarkChartsCold is an experiment's chart data with nothing cached:
// every run's epochs read from the store, digested, charted and encoded
// (what the first charts.json of a server process costs).
//
// Two ways: "digests" as a new server finds an experiment whose finished
// runs' digests are stored with them (every load after the first ever,
// report.DigestStore), and "epochs" as the first load ever, which reads
// the experiment's epochs in one query (a source without stored digests).
func BenchmarkChartsCold(b *testing.B) {
	for _, perExp := range []int{100, 1000} {
		for _, how := range []string{"digests", "epochs"} {
			b.Run(fmt.Sprintf("%dx%d/%s", benchRuns/perExp, perExp, how), func(b *testing.B) {
				s := site(b, perExp)
				benchChartsCold(b, s, how == "epochs")
			})
		}
	}
}

// epochsOnly hides a store's stored digests: LoadComparison reads epochs.
type epochsOnly struct{ report.Source }

func benchChartsCold(b *testing.B, s *benchSite, fromEpochs bool) {
	var src report.Source = s.st
	if fromEpochs {
		src = epochsOnly{s.st}
	}
	ctx := context.Background()
	if _, err := report.LoadComparison(ctx, s.st, nil, s.exp); err != nil { // stores the digests
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		cmp, err := report.LoadComparison(ctx, src, nil, s.exp)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(cmp.Charts("")); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
}
