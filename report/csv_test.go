package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"testing"
)

func TestCSVEscapesFormulasNotNumbers(t *testing.T) {
	var b bytes.Buffer
	w := NewCSVWriter(&b)
	y := -2.5
	if err := w.Row("=SUM(A1)", "+1", "-x", "@cmd", "\tx", "plain", -3, int64(-4), -0.5, &y, math.NaN(), nil, true); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rec, err := csv.NewReader(&b).Read()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"'=SUM(A1)", "'+1", "'-x", "'@cmd", "'\tx", "plain", "-3", "-4", "-0.5", "-2.5", "", "", "true"}
	for i := range want {
		if rec[i] != want[i] {
			t.Errorf("cell %d = %q, want %q", i, rec[i], want[i])
		}
	}
}

func TestChartCSVIsTidy(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	for _, id := range []string{"epoch-vs-mem", "stages", "accuracy"} {
		ch, _ := cmp.Chart(id, "")
		ch.Series[0].Name = "=danger"
		var b bytes.Buffer
		if err := WriteChartCSV(&b, ch); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		n := 0
		for _, s := range ch.Series {
			for _, p := range s.Points {
				if p.Status != StatusNone {
					n++
				}
			}
		}
		if len(recs) != n+1 || len(recs[0]) != len(ChartCSVHeader) {
			t.Fatalf("%s: %d rows of %d columns, want %d of %d", id, len(recs), len(recs[0]), n+1, len(ChartCSVHeader))
		}
		if recs[1][col["series"]] != "'=danger" {
			t.Errorf("%s: series cell %q not escaped", id, recs[1][1])
		}
		var oom bool
		for _, r := range recs[1:] {
			if r[col["status"]] == StatusOOM {
				oom = r[col["y_mean"]] == "" && r[col["n"]] == "0"
			}
			// x is never a category index: memory limits in bytes, or empty for a category without units.
			if x := r[col["x"]]; id == "epoch-vs-mem" && x != r[col["mem_limit_bytes"]] {
				t.Errorf("%s: x %q is not the memory limit %q", id, x, r[col["mem_limit_bytes"]])
			}
			if x := r[col["x"]]; id != "epoch-vs-mem" && x != "" {
				t.Errorf("%s: x %q on a category axis without units", id, x)
			}
			if r[col["variant"]] == "" || r[col["mem_limit_bytes"]] == "" {
				t.Errorf("%s: row without its grid point: %v", id, r)
			}
		}
		if !oom {
			t.Errorf("%s: no OOM row with an empty mean and n = 0", id)
		}
		if id == "epoch-vs-mem" && recs[1][col["x_unit"]] != "bytes" {
			t.Errorf("x_unit %q", recs[1][col["x_unit"]])
		}
	}
}
