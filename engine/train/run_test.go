package train

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
)

// testDataDir holds datasets generated once for the package's tests.
var testDataDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "outcore-train-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDataDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var genOnce sync.Map // name -> *onceErr

// onceErr runs a dataset's creation once and remembers its error.
type onceErr struct {
	once sync.Once
	err  error
}

// genDataset generates a dataset called name once per test binary.
func genDataset(t testing.TB, name string, edit func(c *dataset.GenConfig)) {
	t.Helper()
	o, _ := genOnce.LoadOrStore(name, new(onceErr))
	oe := o.(*onceErr)
	oe.once.Do(func() {
		c := dataset.DefaultGenConfig()
		c.Nodes, c.FeatureDim, c.Classes, c.AvgDegree = 3000, 16, 4, 8
		c.TrainFrac, c.ValFrac, c.TestFrac = 0.3, 0.1, 0.1
		if edit != nil {
			edit(&c)
		}
		_, oe.err = dataset.Generate(context.Background(), dataset.DatasetsDir(testDataDir), name, c, nil)
	})
	if oe.err != nil {
		t.Fatalf("generate %s: %v", name, oe.err)
	}
}

func testConfig(name string) Config {
	c := DefaultConfig()
	c.Dataset, c.DataDir = name, testDataDir
	c.Hidden, c.Batch, c.Epochs, c.LR = 32, 128, 3, 0.01
	c.Fanout = []int{5, 5}
	c.AllowBuffered = true
	return c
}

// records splits a run's output into its records by type.
type records struct {
	start   metrics.StartRecord
	epochs  []metrics.EpochRecord
	samples []metrics.SampleRecord
	logs    []metrics.LogRecord
	summary metrics.SummaryRecord
	types   []string
}

func parseRecords(t *testing.T, out []byte) records {
	t.Helper()
	var r records
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var head struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		r.types = append(r.types, head.Type)
		var err error
		switch head.Type {
		case metrics.TypeStart:
			err = json.Unmarshal(sc.Bytes(), &r.start)
		case metrics.TypeEpoch:
			var e metrics.EpochRecord
			err = json.Unmarshal(sc.Bytes(), &e)
			r.epochs = append(r.epochs, e)
		case metrics.TypeSample:
			var s metrics.SampleRecord
			err = json.Unmarshal(sc.Bytes(), &s)
			r.samples = append(r.samples, s)
		case metrics.TypeLog:
			var l metrics.LogRecord
			err = json.Unmarshal(sc.Bytes(), &l)
			r.logs = append(r.logs, l)
		case metrics.TypeSummary:
			err = json.Unmarshal(sc.Bytes(), &r.summary)
		case metrics.TypeProgress:
		default:
			t.Fatalf("unknown record type %q", head.Type)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(r.types) == 0 || r.types[0] != metrics.TypeStart && r.types[len(r.types)-1] != metrics.TypeSummary {
		t.Fatalf("stream does not start with start / end with summary: %v", r.types)
	}
	if r.types[len(r.types)-1] != metrics.TypeSummary {
		t.Fatalf("last record %q, want summary", r.types[len(r.types)-1])
	}
	return r
}

func TestRunReference(t *testing.T) {
	genDataset(t, "t3k", nil)
	cfg := testConfig("t3k")
	cfg.Epochs = 4
	var out bytes.Buffer
	var progress int
	sum, err := Run(context.Background(), cfg, &out, &RunOptions{Progress: func(metrics.ProgressRecord) { progress++ }})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	r := parseRecords(t, out.Bytes())
	if r.types[0] != metrics.TypeStart {
		t.Fatalf("first record %q", r.types[0])
	}
	if r.start.System != "reference" || r.start.IOBackend == "" || r.start.Host.Cores < 1 || r.start.Host.GEMM == "" {
		t.Fatalf("start record %+v", r.start)
	}
	var echoed Config
	if err := json.Unmarshal(r.start.Config, &echoed); err != nil || echoed.Dataset != "t3k" {
		t.Fatalf("start config %s", r.start.Config)
	}
	if len(r.epochs) != 4 || progress == 0 || len(r.samples) == 0 {
		t.Fatalf("%d epochs, %d progress callbacks, %d samples", len(r.epochs), progress, len(r.samples))
	}
	for _, e := range r.epochs {
		if e.Warmup != (e.Epoch == 0) {
			t.Fatalf("epoch %d warmup=%v", e.Epoch, e.Warmup)
		}
		if e.EpochS <= 0 || e.SampleS <= 0 || e.ExtractS <= 0 || e.TrainS <= 0 || e.Stages[metrics.StageForward] <= 0 || e.Stages[metrics.StageBackward] <= 0 {
			t.Fatalf("epoch %d stage times %+v", e.Epoch, e)
		}
		if e.SampleS+e.ExtractS+e.TrainS > e.EpochS*1.05 {
			t.Fatalf("stages %.4f+%.4f+%.4f exceed epoch %.4f for a sequential pipeline", e.SampleS, e.ExtractS, e.TrainS, e.EpochS)
		}
		if e.BytesNeeded <= 0 || e.Tiers[metrics.TierDevice].Lookups*16*4 != e.BytesNeeded {
			t.Fatalf("bytes needed %d, device lookups %d", e.BytesNeeded, e.Tiers[metrics.TierDevice].Lookups)
		}
		if !e.Evaluated || e.ValAcc <= 0 || e.TestAcc <= 0 || e.EvalS <= 0 || e.WallS <= 0 {
			t.Fatalf("epoch %d eval %+v", e.Epoch, e)
		}
	}
	// Summary: test_acc at the epoch of best val_acc.
	best := r.epochs[0]
	for _, e := range r.epochs[1:] {
		if e.ValAcc > best.ValAcc {
			best = e
		}
	}
	s := r.summary
	if s.Outcome != metrics.OutcomeDone || s.Epochs != 4 || s.BestEpoch != best.Epoch || s.BestValAcc != best.ValAcc || s.TestAcc != best.TestAcc {
		t.Fatalf("summary %+v, best epoch %+v", s, best)
	}
	if s.TestAcc != sum.TestAcc || s.BestEpoch != sum.BestEpoch || s.Outcome != sum.Outcome {
		t.Fatal("returned summary differs from emitted one")
	}
	mean := (r.epochs[1].EpochS + r.epochs[2].EpochS + r.epochs[3].EpochS) / 3
	if d := s.MeanEpochS - mean; d > 1e-9 || d < -1e-9 {
		t.Fatalf("mean epoch %v, want %v (non-warm-up epochs)", s.MeanEpochS, mean)
	}
	if s.PeakRSSBytes <= 0 || s.TotalS <= 0 {
		t.Fatalf("summary peaks %+v", s)
	}
	if last := r.epochs[3]; last.TrainLoss >= r.epochs[0].TrainLoss {
		t.Fatalf("loss did not fall: %v -> %v", r.epochs[0].TrainLoss, last.TrainLoss)
	}
}
