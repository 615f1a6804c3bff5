package system

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/train"
)

var testDataDir string

func TestMain(m *testing.M) {
	if isMemLimitChild() {
		os.Exit(memLimitChild())
	}
	dir, err := os.MkdirTemp("", "outcore-system-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDataDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var genOnce sync.Once
var genErr error

// testDataset generates one small power-law dataset for the package.
func testDataset(t testing.TB) string {
	t.Helper()
	genOnce.Do(func() {
		c := dataset.DefaultGenConfig()
		c.Nodes, c.FeatureDim, c.Classes, c.AvgDegree = 4000, 32, 4, 8
		c.TrainFrac, c.ValFrac, c.TestFrac = 0.25, 0.1, 0.1
		_, genErr = dataset.Generate(context.Background(), dataset.DatasetsDir(testDataDir), "sys", c, nil)
	})
	if genErr != nil {
		t.Fatalf("generate: %v", genErr)
	}
	return "sys"
}

func testConfig(t testing.TB, system string, opts map[string]string) train.Config {
	c := train.DefaultConfig()
	c.Dataset, c.DataDir, c.System = testDataset(t), testDataDir, system
	c.Hidden, c.Batch, c.Epochs, c.LR = 32, 100, 3, 0.01
	c.Fanout = []int{5, 5}
	c.Options = opts
	if testing.Short() {
		c.Epochs = 2
	}
	return c
}

type runResult struct {
	start   metrics.StartRecord
	epochs  []metrics.EpochRecord
	logs    []string
	summary metrics.SummaryRecord
}

func runSystem(t *testing.T, cfg train.Config) runResult {
	t.Helper()
	var out bytes.Buffer
	sum, err := train.Run(context.Background(), cfg, &out, nil)
	var r runResult
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var head struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatal(err)
		}
		switch head.Type {
		case metrics.TypeStart:
			json.Unmarshal(sc.Bytes(), &r.start)
		case metrics.TypeEpoch:
			var e metrics.EpochRecord
			json.Unmarshal(sc.Bytes(), &e)
			r.epochs = append(r.epochs, e)
		case metrics.TypeLog:
			var l metrics.LogRecord
			json.Unmarshal(sc.Bytes(), &l)
			r.logs = append(r.logs, l.Msg)
		}
	}
	if err != nil {
		t.Fatalf("%s (%v): %v\nlogs:\n%s", cfg.System, cfg.Options, err, strings.Join(r.logs, "\n"))
	}
	r.summary = sum
	if sum.Outcome != metrics.OutcomeDone || len(r.epochs) != cfg.Epochs {
		t.Fatalf("%s: outcome %s after %d epochs", cfg.System, sum.Outcome, len(r.epochs))
	}
	return r
}

func losses(r runResult) []float64 {
	var l []float64
	for _, e := range r.epochs {
		l = append(l, e.TrainLoss)
	}
	return l
}

// TestVariantsTrainTheSameModel trains the same model on the same data with
// every variant. pyg+, ginex and an in-order gnndrive feed the trainer the
// same mini-batches in the same order with the same feature rows, so their
// losses equal the reference pipeline's exactly: any wrong row served by a
// cache would change them. The default gnndrive trains batches out of order
// and must land in the same accuracy band.
func TestVariantsTrainTheSameModel(t *testing.T) {
	ref := runSystem(t, testConfig(t, train.ReferenceName, nil))
	refLoss := losses(ref)
	best := ref.summary.BestValAcc
	if best < 0.5 { // 4 classes: chance is 0.25
		t.Fatalf("reference reaches only %.3f validation accuracy: the test data teaches nothing", best)
	}
	exact := []struct {
		name string
		sys  string
		opts map[string]string
	}{
		{"pyg+", PyGPlusName, nil},
		{"ginex", GinexName, nil},
		// several superbatches per epoch, a feature cache of ~15% of the rows
		// and a neighbour cache of part of the lists: changesets with
		// evictions, disk reads for misses, the superbatch pipeline
		{"ginex-small-caches", GinexName, map[string]string{"superbatch": "3", "feature_cache": "40KiB", "neighbor_cache": "48KiB"}},
		// one batch input: gather and training alternate (tight budgets)
		{"ginex-one-buffer", GinexName, map[string]string{"superbatch": "3", "feature_cache": "40KiB", "x_buffers": "1"}},
		{"gnndrive-in-order", GNNDriveName, map[string]string{"samplers": "1", "extractors": "1"}},
	}
	for _, c := range exact {
		t.Run(c.name, func(t *testing.T) {
			r := runSystem(t, testConfig(t, c.sys, c.opts))
			if got := losses(r); !slices.Equal(got, refLoss) {
				t.Fatalf("train losses %v, reference %v", got, refLoss)
			}
			for i, e := range r.epochs {
				if e.BytesNeeded != ref.epochs[i].BytesNeeded || e.Batches != ref.epochs[i].Batches {
					t.Fatalf("epoch %d: %d batches, %d bytes needed; reference %d, %d", i, e.Batches, e.BytesNeeded, ref.epochs[i].Batches, ref.epochs[i].BytesNeeded)
				}
				var lookups int64
				for _, tc := range e.Tiers {
					lookups += tc.Lookups
				}
				if lookups == 0 {
					t.Fatalf("epoch %d reports no feature lookups: %+v", i, e.Tiers)
				}
			}
			if len(r.start.Deviations) == 0 {
				t.Fatal("no deviations recorded in the start record")
			}
		})
	}
	t.Run("gnndrive", func(t *testing.T) {
		r := runSystem(t, testConfig(t, GNNDriveName, nil))
		if d := math.Abs(r.summary.BestValAcc - best); d > 0.05 {
			t.Fatalf("best validation accuracy %.3f, reference %.3f", r.summary.BestValAcc, best)
		}
		for i, e := range r.epochs {
			if e.BytesNeeded != ref.epochs[i].BytesNeeded {
				t.Fatalf("epoch %d: bytes needed %d, reference %d", i, e.BytesNeeded, ref.epochs[i].BytesNeeded)
			}
		}
	})
}

// TestGinexStages checks Ginex's per-epoch report and that its runtime files
// are removed.
func TestGinexStages(t *testing.T) {
	cfg := testConfig(t, GinexName, map[string]string{"superbatch": "4", "feature_cache": "64KiB"})
	cfg.Epochs = 1
	r := runSystem(t, cfg)
	e := r.epochs[0]
	for _, s := range []string{"inspect_s", "switch_s", "cache_update_s", "changeset_s"} {
		if _, ok := e.Stages[s]; !ok {
			t.Errorf("stage %s missing: %v", s, e.Stages)
		}
	}
	cpu, dev := e.Tiers[metrics.TierCPU], e.Tiers[metrics.TierDevice]
	if cpu.Hits == 0 || dev.Lookups == 0 || cpu.Lookups != cpu.Hits+dev.Lookups {
		t.Fatalf("tiers %+v", e.Tiers)
	}
	if e.Counters["changeset_misses"] != dev.Lookups {
		t.Fatalf("main loop read %d rows, the changeset simulation predicted %d misses", dev.Lookups, e.Counters["changeset_misses"])
	}
	left, _ := filepath.Glob(filepath.Join(testDataDir, "ginex-run-*"))
	if len(left) > 0 {
		t.Fatalf("runtime files left behind: %v", left)
	}
}

// TestGNNDriveSmallBuffer runs GNNDrive with a buffer at the N_e × M_b
// reservation, so slots are reused all the time.
func TestGNNDriveSmallBuffer(t *testing.T) {
	cfg := testConfig(t, GNNDriveName, map[string]string{"buffer_factor": "0.01", "extractors": "3", "samplers": "3"})
	r := runSystem(t, cfg)
	var ev int64
	for _, e := range r.epochs {
		ev += e.Counters["buffer_evictions"]
		if e.Tiers[metrics.TierCPU].Lookups == 0 {
			t.Fatalf("no buffer lookups: %+v", e.Tiers)
		}
	}
	if ev == 0 {
		t.Fatal("no slot was ever reused: the buffer was not small")
	}
}
