package report

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
	"outcore/store/storetest"
)

// TestDeviceReadAndWorkerCharts checks the views of metrics version 2 on
// the fixture: the read amplification is feature bytes over the bytes of
// the rows from the device, the disk read splits by file kind and the
// worker time by stage and busy/wait.
func TestDeviceReadAndWorkerCharts(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	near := func(what string, got *float64, want float64) {
		t.Helper()
		if got == nil || math.Abs(*got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	// pyg+ (vi 0) at 1 GiB (li 2): 500 rows of 512 B from the device,
	// 2 × their bytes read; 64 KiB of topology; 4 KiB else.
	amp := NewChartOrDie(t, cmp, "amplification")
	near("pyg+ amplification", find(t, amp, "pyg+", "1GiB").Y, 2)
	near("ginex amplification at 256MiB", find(t, amp, "ginex", "256MiB").Y, 3)
	kind := NewChartOrDie(t, cmp, "disk-read-kind")
	if kind.Kind != "stack" || len(kind.Series) != 3 {
		t.Fatalf("disk-read-kind: %s with %d series", kind.Kind, len(kind.Series))
	}
	near("features", find(t, kind, "features", "pyg+ · 1GiB").Y, 500*512*2/float64(1<<20))
	near("topology", find(t, kind, "topology", "pyg+ · 1GiB").Y, 64.0/1024)
	near("other", find(t, kind, "other", "pyg+ · 1GiB").Y, 4096.0/(1<<20))
	if p := find(t, kind, "features", "pyg+ · 256MiB"); p.Status != StatusOOM {
		t.Errorf("pyg+ at 256 MiB ran out of memory: %+v", p)
	}
	wt := NewChartOrDie(t, cmp, "worker-time")
	if len(wt.Series) != 4 || wt.Series[0].Name != "sample busy" || wt.Series[3].Name != "extract wait" {
		t.Fatalf("worker-time series %v", wt.Series)
	}
	// t = 3 + 0.1·repeat + 0.01·epoch; steady epochs 1, 2; repeats 0, 1.
	near("sample busy", find(t, wt, "sample busy", "pyg+ · 1GiB").Y, 0.1*3.065)
	near("extract wait", find(t, wt, "extract wait", "pyg+ · 1GiB").Y, 0.6*3.065)
}

// TestMixedLegacyRunsAreLeftOut: a grid point whose runs were recorded
// before metrics version 2 is "unmeasured" in the charts of the new
// metrics (never drawn as 0, never with the old ratio), and says so;
// the charts every version has still show it.
func TestMixedLegacyRunsAreLeftOut(t *testing.T) {
	runs := fixtureRuns()
	for i, r := range runs {
		if r.System != "pyg+" || r.MemLimit != 1<<30 {
			continue
		}
		var eps []metrics.EpochRecord
		for e := 0; e < 3; e++ {
			eps = append(eps, metrics.EpochRecord{Epoch: e, Warmup: e == 0, EpochS: 2, SampleS: 1, ExtractS: 1,
				BytesNeeded: 1 << 20, BytesRead: 3 << 20, ReadAmplification: 3, ValAcc: 0.5, Evaluated: true,
				Tiers: map[string]metrics.TierCount{"cpu": {Lookups: 10, Hits: 5}, "device": {Lookups: 5, Hits: 5}}})
		}
		runs[i].Digest = DigestEpochs(eps)
	}
	cmp := NewComparison(runs)
	for _, id := range []string{"amplification", "disk-read-kind", "worker-time"} {
		ch := NewChartOrDie(t, cmp, id)
		series := "pyg+"
		label := "1GiB"
		if ch.Kind == "stack" {
			series, label = ch.Series[0].Name, "pyg+ · 1GiB"
		}
		p := find(t, ch, series, label)
		if p.Y != nil || p.Status != StatusUnmeasured || !strings.Contains(p.Detail, "before metrics version 2") {
			t.Errorf("%s: legacy cell %+v", id, p)
		}
		if ch.Empty != "" || !strings.Contains(ch.Note, "metrics version 2") {
			t.Errorf("%s: empty %q, note %q", id, ch.Empty, ch.Note)
		}
	}
	if p := find(t, NewChartOrDie(t, cmp, "disk-read"), "pyg+", "1GiB"); p.Y == nil || *p.Y != 3 {
		t.Errorf("disk read of legacy runs: %+v", p)
	}
}

// TestLegacyDatabaseStillDisplays opens a database written before metrics
// version 2 and draws every chart of its experiment and run, in every
// export format: the charts of the new metrics say why they are empty,
// the others show the old runs as before.
func TestLegacyDatabaseStillDisplays(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	expID, runID, err := storetest.LegacyDatabase(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cmp, err := LoadComparison(ctx, st, nil, expID)
	if err != nil {
		t.Fatal(err)
	}
	newOnly := map[string]bool{"amplification": true, "disk-read-kind": true, "worker-time": true}
	for _, ch := range cmp.Charts("") {
		if newOnly[ch.ID] {
			if !strings.Contains(ch.Empty, "before metrics version 2") {
				t.Errorf("%s: empty %q", ch.ID, ch.Empty)
			}
			continue
		}
		if ch.Empty != "" {
			continue // not varied in a one-run experiment
		}
		for _, f := range ExportFormats {
			var b bytes.Buffer
			if err := WriteChart(&b, ch, f); err != nil || b.Len() == 0 {
				t.Errorf("%s as %s: %d bytes, %v", ch.ID, f, b.Len(), err)
			}
		}
	}
	if p := find(t, NewChartOrDie(t, cmp, "disk-read"), "pyg+", "all runs"); p.Y == nil || *p.Y != 3 {
		t.Errorf("legacy disk read %+v", p)
	}
	charts, err := LoadRunCharts(ctx, st, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range charts {
		switch ch.ID {
		case "run-reads", "run-workers":
			if !strings.Contains(ch.Empty, "before metrics version 2") {
				t.Errorf("%s: empty %q", ch.ID, ch.Empty)
			}
		case "run-stages":
			if !strings.Contains(ch.Empty, "before metrics version 3") {
				t.Errorf("%s: empty %q", ch.ID, ch.Empty)
			}
		case "run-stage-time", "run-accuracy":
			if ch.Empty != "" || len(ch.Categories)+len(ch.Series) == 0 {
				t.Errorf("%s of a legacy run: empty %q", ch.ID, ch.Empty)
			}
			var b bytes.Buffer
			if err := WriteChart(&b, ch, FigureSVG); err != nil {
				t.Errorf("%s: %v", ch.ID, err)
			}
		}
	}
}
