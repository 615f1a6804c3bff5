package web

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"outcore/report"
	"outcore/store"
)

// TestTimeToAccuracyServed: the experiment page has the time-to-accuracy
// card; charts.json draws a line per variant and grid point with a point
// per evaluated epoch, its CSV has the chart table's header and a row per
// point, its SVG and PDF render; an experiment whose runs have one
// evaluated epoch gets the reason instead, and no figure (409).
func TestTimeToAccuracyServed(t *testing.T) {
	e := newEnv(t)
	x := e.create(tinyGrid) // pyg+, gnndrive × 64, 128 MiB × 2 repeats
	for _, r := range e.runs(x.ID) {
		e.play(r, 3, 1+0.5*float64(r.Repeat), store.StatusDone)
	}
	if _, page := e.get(fmt.Sprintf("/experiments/%d", x.ID)); !strings.Contains(page, `data-chart="time-to-accuracy"`) {
		t.Fatal("the experiment page has no time-to-accuracy card")
	}
	chartOf := func(id int64) report.Chart {
		t.Helper()
		code, js := e.get(fmt.Sprintf("/experiments/%d/charts.json", id))
		if code != 200 {
			t.Fatalf("charts.json: %d %s", code, js)
		}
		var got struct{ Charts []report.Chart }
		if err := json.Unmarshal([]byte(js), &got); err != nil {
			t.Fatal(err)
		}
		for _, ch := range got.Charts {
			if ch.ID == "time-to-accuracy" {
				return ch
			}
		}
		t.Fatal("charts.json has no time-to-accuracy")
		return report.Chart{}
	}
	ch := chartOf(x.ID)
	if ch.Empty != "" || len(ch.Series) != 4 {
		t.Fatalf("time-to-accuracy: empty %q, %d series, want 4", ch.Empty, len(ch.Series))
	}
	for _, s := range ch.Series {
		if len(s.Points) != 3 {
			t.Fatalf("%s: %d points, want one per epoch", s.Name, len(s.Points))
		}
		// storetest's epoch k ends at (k+1) × its seconds: 1 s and 1.5 s
		// per epoch in the two repeats, accuracy 0.4 + 0.1 k in both.
		p := s.Points[1]
		if p.Label != "epoch 1" || p.N != 2 || p.X != (2*1+2*1.5)/2.0 || *p.Y < 0.5-1e-12 || *p.Y > 0.5+1e-12 {
			t.Errorf("%s epoch 1: %+v", s.Name, p)
		}
	}
	code, body := e.get(fmt.Sprintf("/experiments/%d/charts/time-to-accuracy.csv", x.ID))
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if code != 200 || err != nil {
		t.Fatalf("csv: %d %v", code, err)
	}
	if strings.Join(rows[0], ",") != strings.Join(report.ChartCSVHeader, ",") || len(rows) != 1+4*3 {
		t.Errorf("csv: header %v, %d rows, want 12", rows[0], len(rows)-1)
	}
	for _, f := range []struct{ file, prefix string }{{"time-to-accuracy.svg", "<?xml"}, {"time-to-accuracy.pdf", "%PDF-"}} {
		if code, b := e.get(fmt.Sprintf("/experiments/%d/charts/%s", x.ID, f.file)); code != 200 || !strings.HasPrefix(b, f.prefix) {
			t.Errorf("%s: %d %.40q", f.file, code, b)
		}
	}

	y := e.create(tinyGrid)
	for _, r := range e.runs(y.ID) {
		e.play(r, 1, 1, store.StatusDone)
	}
	if ch := chartOf(y.ID); !strings.Contains(ch.Empty, "after one epoch only") {
		t.Errorf("one evaluated epoch: empty %q", ch.Empty)
	}
	if code, b := e.get(fmt.Sprintf("/experiments/%d/charts/time-to-accuracy.svg", y.ID)); code != 409 || !strings.Contains(b, "one epoch only") {
		t.Errorf("empty figure: %d %.200q", code, b)
	}
}
