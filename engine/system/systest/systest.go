// Package systest holds what the variants' tests share: one small
// power-law dataset per test binary (Main removes it), a run configuration
// over it, and a run whose records are parsed, the reference run, the
// shared stages=sample check, the "every configuration trains the same
// model" check with its tier chain (same_model.go, tiers.go), the
// scratch-directory check (scratch.go), a test directory on disk
// (DiskDir), a unit test's data file (TableFile), and the sizing tables'
// shapes, rows and checks (sizing.go). It is imported by _test.go files
// only (docs/ARCHITECTURE.md "Adding a system").
package systest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

// DatasetName is the name of the shared test dataset.
const DatasetName = "sys"

// FeatureDim is the shared dataset's feature dimension; RowBytes the
// bytes of one of its feature rows (float32).
const (
	FeatureDim = 32
	RowBytes   = FeatureDim * 4
)

var (
	dirOnce sync.Once
	dir     string
	dirErr  error
	genOnce sync.Once
	genErr  error
)

// DataDir is the test binary's data directory (created on first use;
// Main removes it).
func DataDir() (string, error) {
	dirOnce.Do(func() { dir, dirErr = os.MkdirTemp("", "outcore-system-test-") })
	return dir, dirErr
}

// Main runs a package's tests and removes the data directory afterwards;
// call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// Dataset generates the shared dataset once (4,000 nodes, 32-dim
// features, 4 planted classes, a quarter of the nodes in the training
// split) and returns its name.
func Dataset(t testing.TB) string {
	t.Helper()
	genOnce.Do(func() {
		d, err := DataDir()
		if err != nil {
			genErr = err
			return
		}
		c := dataset.DefaultGenConfig()
		c.Nodes, c.FeatureDim, c.Classes, c.AvgDegree = 4000, FeatureDim, 4, 8
		c.TrainFrac, c.ValFrac, c.TestFrac = 0.25, 0.1, 0.1
		_, genErr = dataset.Generate(context.Background(), dataset.DatasetsDir(d), DatasetName, c, nil)
	})
	if genErr != nil {
		t.Fatalf("generate: %v", genErr)
	}
	return DatasetName
}

// Evict makes the shared dataset's files durable and drops them from the
// page cache, so that the next run's first reads go to the device (as the
// experiment runner does before every run).
func Evict(t testing.TB) {
	t.Helper()
	d, err := DataDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataset.DatasetsDir(d), Dataset(t))
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		err = f.Sync()
		if err == nil {
			err = osutil.DropCache(f)
		}
		f.Close()
		if err != nil {
			t.Fatalf("evict %s: %v", e.Name(), err)
		}
	}
}

// Config is a small run of system on the shared dataset: 2-layer SAGE,
// hidden 32, fanout 5,5, batches of 100, 3 epochs (2 with -short).
func Config(t testing.TB, system string, opts map[string]string) train.Config {
	t.Helper()
	c := train.DefaultConfig()
	c.Dataset, c.System = Dataset(t), system
	c.DataDir, _ = DataDir()
	c.Hidden, c.Batch, c.Epochs, c.LR = 32, 100, 3, 0.01
	c.Fanout = []int{5, 5}
	c.Options = opts
	if testing.Short() {
		c.Epochs = 2
	}
	return c
}

// Result is a run's records.
type Result struct {
	Start   metrics.StartRecord
	Epochs  []metrics.EpochRecord
	Logs    []string
	Summary metrics.SummaryRecord
}

// Losses are the epochs' training losses.
func (r Result) Losses() []float64 {
	var l []float64
	for _, e := range r.Epochs {
		l = append(l, e.TrainLoss)
	}
	return l
}

// Run trains cfg in this process and fails the test unless every epoch
// completed.
func Run(t testing.TB, cfg train.Config) Result {
	t.Helper()
	return RunWith(t, cfg, nil)
}

// RunWith is Run with train.RunOptions (nil: none), e.g. an OnEpoch hook
// that takes a reading at the end of every epoch.
func RunWith(t testing.TB, cfg train.Config, opt *train.RunOptions) Result {
	t.Helper()
	var out bytes.Buffer
	sum, err := train.Run(context.Background(), cfg, &out, opt)
	r, perr := Parse(out.Bytes())
	if perr != nil {
		t.Fatal(perr)
	}
	if err != nil {
		t.Fatalf("%s (%v): %v\nlogs:\n%s", cfg.System, cfg.Options, err, strings.Join(r.Logs, "\n"))
	}
	r.Summary = sum
	if sum.Outcome != metrics.OutcomeDone || len(r.Epochs) != cfg.Epochs {
		t.Fatalf("%s: outcome %s after %d epochs", cfg.System, sum.Outcome, len(r.Epochs))
	}
	return r
}

// Parse reads a run's JSON-line records.
func Parse(b []byte) (Result, error) {
	var r Result
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var head struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			return r, fmt.Errorf("record %q: %w", sc.Text(), err)
		}
		switch head.Type {
		case metrics.TypeStart:
			json.Unmarshal(sc.Bytes(), &r.Start)
		case metrics.TypeEpoch:
			var e metrics.EpochRecord
			json.Unmarshal(sc.Bytes(), &e)
			r.Epochs = append(r.Epochs, e)
		case metrics.TypeLog:
			var l metrics.LogRecord
			json.Unmarshal(sc.Bytes(), &l)
			r.Logs = append(r.Logs, l.Msg)
		case metrics.TypeSummary:
			json.Unmarshal(sc.Bytes(), &r.Summary)
		}
	}
	return r, sc.Err()
}

// HasDeviation reports whether one of ds contains part.
func HasDeviation(ds []string, part string) bool {
	for _, d := range ds {
		if strings.Contains(d, part) {
			return true
		}
	}
	return false
}

// Reference runs the reference system (train.ReferenceName) with the
// default configuration over the shared dataset: the run a variant's
// losses are compared with.
func Reference(t testing.TB) Result {
	t.Helper()
	return Run(t, Config(t, train.ReferenceName, nil))
}

// MediumShape is the shape of the `medium` dataset preset (2 Mi nodes, 128
// dims): the fixture of the sizing tables that size a run at its scale.
var MediumShape = train.DatasetShape{Nodes: 2097152, Edges: 31486938, FeatureDim: 128, Classes: 32, Train: 104841}
