package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"outcore/store"
	"outcore/store/storetest"
)

// ttaStore is a real store holding one experiment of runs: gnndrive at
// 256 MiB twice (four epochs of 1 s and 1.5 s, evaluated after every
// second epoch and the last: epochs 1 and 3), pyg+ at 256 MiB failing
// after two epochs of 2 s (evaluated after epoch 1) and pyg+ at 128 MiB
// running out of memory after two epochs.
func ttaStore(t *testing.T, runs []storetest.Run) (*Comparison, []store.Run) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e, stored, err := storetest.Experiment(ctx, st, "tta", runs)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := LoadComparison(ctx, st, nil, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	return cmp, stored
}

func ttaRuns() []storetest.Run {
	return []storetest.Run{
		{System: "gnndrive", MemLimit: 256 << 20, Repeat: 0, Outcome: store.StatusDone, Epochs: 4, EpochS: 1, EvalEvery: 2},
		{System: "gnndrive", MemLimit: 256 << 20, Repeat: 1, Outcome: store.StatusDone, Epochs: 4, EpochS: 1.5, EvalEvery: 2},
		{System: "pyg+", MemLimit: 256 << 20, Outcome: store.StatusFailed, Epochs: 2, EpochS: 2, EvalEvery: 2},
		{System: "pyg+", MemLimit: 128 << 20, Outcome: store.StatusOOM, Epochs: 2, EpochS: 2, EvalEvery: 2},
	}
}

// wallAt is storetest's wall_s at the end of epoch ep of a run of secs per
// epoch, computed as storetest computes it.
func wallAt(ep int, secs float64) float64 {
	return float64(ep+1) * (secs * (1 + 0.01*float64(ep)))
}

// TestTimeToAccuracyFromStore: from epochs stored in a real store, each
// line is a variant's grid point, each point an evaluated epoch (skipped
// evaluations left out, not zero), x the mean wall_s and y the mean
// validation accuracy over the repeats that evaluated that epoch; OOM runs
// are left out.
func TestTimeToAccuracyFromStore(t *testing.T) {
	cmp, runs := ttaStore(t, ttaRuns())
	ch := NewChartOrDie(t, cmp, "time-to-accuracy")
	if ch.Empty != "" {
		t.Fatalf("empty: %s", ch.Empty)
	}
	type want struct {
		label string
		x, y  float64
		n     int
		runs  []int64
	}
	gd := []int64{runs[0].ID, runs[1].ID}
	wants := map[string][]want{
		"gnndrive · 256MiB": {
			{"epoch 1", (wallAt(1, 1) + wallAt(1, 1.5)) / 2, 0.5, 2, gd},
			{"epoch 3", (wallAt(3, 1) + wallAt(3, 1.5)) / 2, 0.7, 2, gd},
		},
		"pyg+ · 256MiB": {{"epoch 1", wallAt(1, 2), 0.5, 1, []int64{runs[2].ID}}},
	}
	if len(ch.Series) != len(wants) {
		t.Fatalf("%d series, want %d (the OOM run's left out): %+v", len(ch.Series), len(wants), ch.Series)
	}
	for _, s := range ch.Series {
		w, ok := wants[s.Name]
		if !ok {
			t.Fatalf("unexpected series %q", s.Name)
		}
		if len(s.Points) != len(w) {
			t.Fatalf("%s: %d points, want %d: %+v", s.Name, len(s.Points), len(w), s.Points)
		}
		for i, p := range s.Points {
			if p.Label != w[i].label || p.X != w[i].x || p.Y == nil || math.Abs(*p.Y-w[i].y) > 1e-12 || p.N != w[i].n ||
				p.SD != 0 || fmt.Sprint(p.Runs) != fmt.Sprint(w[i].runs) || p.Cell == nil || p.Cell.MemLimit != 256<<20 {
				t.Errorf("%s point %d: %+v (y %v), want %+v", s.Name, i, p, p.Y, w[i])
			}
		}
	}

	// The tidy CSV: the table's header, a row per point with the grid
	// point in real units and the runs it averages.
	var buf bytes.Buffer
	if err := WriteChartCSV(&buf, ch); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != strings.Join(ChartCSVHeader, ",") {
		t.Errorf("header %v", rows[0])
	}
	x1 := csvCell((wallAt(1, 1) + wallAt(1, 1.5)) / 2)
	wantRow := []string{"time-to-accuracy", "gnndrive · 256MiB", "line", "", x1, "s", "epoch 1",
		"gnndrive", "268435456", "32", "1024", "sage", "10,5", "0.5", "0", "0.5", "0.5", "2", StatusOK, "",
		fmt.Sprintf("%d %d", runs[0].ID, runs[1].ID)}
	if len(rows) != 4 {
		t.Fatalf("%d CSV rows, want the header and 3 points:\n%v", len(rows), rows)
	}
	if strings.Join(rows[1], "|") != strings.Join(wantRow, "|") {
		t.Errorf("first row\n%v\nwant\n%v", rows[1], wantRow)
	}
	if rows[3][1] != "pyg+ · 256MiB" || rows[3][6] != "epoch 1" || rows[3][17] != "1" {
		t.Errorf("pyg+ row %v", rows[3])
	}

	// The figures render, with the chart's title and time axis.
	for _, format := range []string{FigureSVG, FigurePDF} {
		var fig bytes.Buffer
		if err := WriteChart(&fig, ch, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		text := fig.String()
		if format == FigurePDF {
			if text, err = PDFText(fig.Bytes()); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range []string{"Time to accuracy", "wall-clock time since the run started", "validation accuracy"} {
			if !strings.Contains(text, s) {
				t.Errorf("%s figure lacks %q", format, s)
			}
		}
	}
}

// TestTimeToAccuracyEmptySaysWhy: runs with one evaluated epoch each draw
// no curve, and the chart says why; its figure is refused as empty.
func TestTimeToAccuracyEmptySaysWhy(t *testing.T) {
	cmp, _ := ttaStore(t, []storetest.Run{
		{System: "gnndrive", MemLimit: 256 << 20, Outcome: store.StatusDone, Epochs: 3, EpochS: 1, EvalEvery: 5},
		{System: "pyg+", MemLimit: 256 << 20, Outcome: store.StatusDone, Epochs: 1, EpochS: 1},
	})
	ch := NewChartOrDie(t, cmp, "time-to-accuracy")
	if !strings.Contains(ch.Empty, "after one epoch only") || len(ch.Series) != 0 {
		t.Errorf("empty %q, series %v", ch.Empty, ch.Series)
	}
	if err := WriteChart(&bytes.Buffer{}, ch, FigureSVG); !errors.Is(err, ErrNoData) {
		t.Errorf("empty figure: %v", err)
	}
}

func TestTTAEmpty(t *testing.T) {
	for _, c := range []struct {
		st   ttaState
		want string
	}{
		{ttaState{}, "No epoch has finished yet."},
		{ttaState{oom: 2}, "Only runs that ran out of memory"},
		{ttaState{runs: 3}, "train no model"},
		{ttaState{runs: 3, trains: true}, "No finished epoch has been evaluated yet"},
		{ttaState{runs: 3, trains: true, most: 1}, "after one epoch only"},
	} {
		if got := ttaEmpty(c.st); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
}
