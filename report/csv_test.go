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
	ch, _ := NewComparison(fixtureRuns()).Chart("epoch-vs-mem", "")
	ch.Series[0].Name = "=danger"
	var b bytes.Buffer
	if err := WriteChartCSV(&b, ch); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range ch.Series {
		n += len(s.Points)
	}
	if len(recs) != n+1 || len(recs[0]) != 12 {
		t.Fatalf("%d rows of %d columns, want %d of 12", len(recs), len(recs[0]), n+1)
	}
	if recs[1][1] != "'=danger" {
		t.Errorf("series cell %q not escaped", recs[1][1])
	}
	var oom bool
	for _, r := range recs[1:] {
		if r[9] == StatusOOM {
			oom = r[4] == "" && r[8] == "0"
		}
	}
	if !oom {
		t.Error("no OOM row with an empty mean and n = 0")
	}
}
