package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"outcore/store"
	"outcore/store/storetest"
)

// openStore is a real store in a temporary data directory holding the
// storetest grid.
func openStore(t *testing.T) (*store.Store, store.Experiment, []store.Run) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e, runs, err := storetest.Experiment(ctx, st, "grid", storetest.Grid())
	if err != nil {
		t.Fatal(err)
	}
	return st, e, runs
}

func TestLoadComparisonFromStore(t *testing.T) {
	st, e, runs := openStore(t)
	ctx := context.Background()
	cache := NewDigestCache(100)
	cmp, err := LoadComparison(ctx, st, cache, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v := cmp.Variants(); len(v) != 2 || v[0] != "pyg+" || v[1] != "gnndrive" {
		t.Fatalf("variants %v", v)
	}
	ch, _ := cmp.Chart("epoch-vs-mem", "")
	if p := find(t, ch, "pyg+", "128MiB"); p.Status != StatusOOM || p.Y != nil {
		t.Errorf("pyg+ at 128 MiB: %+v", p)
	}
	// gnndrive at 256 MiB: repeats of 1.0 s and 1.05 s per epoch, steady
	// epochs 1 and 2 (1% slower each) averaged per run.
	p := find(t, ch, "gnndrive", "256MiB")
	want := (1.0*(1.01+1.02)/2 + 1.05*(1.01+1.02)/2) / 2
	if p.N != 2 || math.Abs(*p.Y-want) > 1e-9 {
		t.Errorf("gnndrive at 256 MiB: %+v, want mean %v over 2 runs", p, want)
	}
	// Finished runs' digests are cached, and a second load gives the same charts.
	for _, r := range runs {
		if _, ok := cache.get(r); ok != (r.Status == store.StatusDone || r.Status == store.StatusOOM) {
			t.Errorf("run %d (%s): cached %v", r.ID, r.Status, ok)
		}
	}
	again, err := LoadComparison(ctx, st, cache, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	ch2, _ := again.Chart("epoch-vs-mem", "")
	if WriteChartCSV(&a, ch) != nil || WriteChartCSV(&b, ch2) != nil || a.String() != b.String() {
		t.Errorf("cached load differs:\n%s\n%s", a.String(), b.String())
	}
	if _, err := LoadComparison(ctx, st, nil, e.ID+100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown experiment: %v", err)
	}
}

func TestLoadRunChartsFromStore(t *testing.T) {
	st, _, runs := openStore(t)
	var done store.Run
	for _, r := range runs {
		if r.Status == store.StatusDone {
			done = r
			break
		}
	}
	charts, err := LoadRunCharts(context.Background(), st, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != len(RunChartIDs) {
		t.Fatalf("%d charts, want %d", len(charts), len(RunChartIDs))
	}
	for i, ch := range charts {
		if ch.ID != RunChartIDs[i] || ch.Empty != "" {
			t.Errorf("chart %d: %s, empty %q", i, ch.ID, ch.Empty)
		}
	}
	if n := len(charts[0].Categories); n != 3 {
		t.Errorf("stage chart has %d epochs, want 3", n)
	}
}

func TestWriteChartFormats(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	ch, _ := cmp.Chart("epoch-vs-mem", "")
	for _, f := range ExportFormats {
		var b bytes.Buffer
		if err := WriteChart(&b, ch, f); err != nil || b.Len() == 0 {
			t.Errorf("%s: %d bytes, %v", f, b.Len(), err)
		}
	}
	if err := WriteChart(&bytes.Buffer{}, ch, "png"); err == nil || !strings.Contains(err.Error(), "csv, svg, pdf") {
		t.Errorf("png: %v", err)
	}
	empty, _ := cmp.Chart("epoch-vs-dim", "") // the dimension does not vary
	if err := WriteChart(&bytes.Buffer{}, empty, FigurePDF); !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "not varied") {
		t.Errorf("empty chart: %v", err)
	}
	if err := CheckChart("nope", ChartIDs); !errors.Is(err, ErrUnknownChart) || !strings.Contains(err.Error(), "epoch-vs-mem, epoch-vs-dim") {
		t.Errorf("unknown chart: %v", err)
	}
}

// TestStoredDigests: the first load stores each finished run's digest with
// the run; a later load (a new server: nothing cached) reads them in one
// query instead of the epochs, and draws the same charts.
func TestStoredDigests(t *testing.T) {
	st, e, runs := openStore(t)
	ctx := context.Background()
	first, err := LoadComparison(ctx, st, nil, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.RunDigests(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	withEpochs := 0
	for _, r := range runs {
		if r.EpochsDone > 0 {
			withEpochs++
			if _, ok := stored[r.ID]; !ok {
				t.Errorf("run %d (%d epochs): no stored digest", r.ID, r.EpochsDone)
			}
		}
	}
	if len(stored) != withEpochs {
		t.Errorf("%d digests stored, %d runs have epochs", len(stored), withEpochs)
	}
	src := &countingSource{Store: st}
	second, err := LoadComparison(ctx, src, nil, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if src.epochReads != 0 {
		t.Errorf("the second load read epochs %d times", src.epochReads)
	}
	a, _ := json.Marshal(first.Charts(""))
	b, _ := json.Marshal(second.Charts(""))
	if !bytes.Equal(a, b) {
		t.Error("charts from stored digests differ from charts from epochs")
	}
	// A digest whose run has more epochs since is stale: read again.
	r := runs[len(runs)-1]
	if err := st.Update(ctx, func(tx *store.Tx) error {
		rec := storetest.Epoch(9, 1)
		return tx.InsertEpoch(r.ID, &rec)
	}); err != nil {
		t.Fatal(err)
	}
	src.epochReads = 0
	if _, err := LoadComparison(ctx, src, nil, e.ID); err != nil {
		t.Fatal(err)
	}
	if src.epochReads != 1 {
		t.Errorf("after a new epoch, %d epoch reads, want 1", src.epochReads)
	}
}

// countingSource counts reads of epochs.
type countingSource struct {
	*store.Store
	epochReads int
}

func (c *countingSource) Epochs(ctx context.Context, id int64) ([]store.Epoch, error) {
	c.epochReads++
	return c.Store.Epochs(ctx, id)
}

func (c *countingSource) ExperimentEpochs(ctx context.Context, id int64) (map[int64][]store.Epoch, error) {
	c.epochReads++
	return c.Store.ExperimentEpochs(ctx, id)
}

// TestStoreRunDigest: the runner's hook stores a finished run's digest, so
// the first view reads no epoch of it.
func TestStoreRunDigest(t *testing.T) {
	st, e, runs := openStore(t)
	ctx := context.Background()
	for _, r := range runs {
		if err := StoreRunDigest(ctx, st, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	src := &countingSource{Store: st}
	if _, err := LoadComparison(ctx, src, nil, e.ID); err != nil {
		t.Fatal(err)
	}
	if src.epochReads != 0 {
		t.Errorf("the first view read epochs %d times after the runs' digests were stored", src.epochReads)
	}
}
