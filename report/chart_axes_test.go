package report

import (
	"encoding/json"
	"slices"
	"testing"

	"outcore/store"
)

// TestChartUnitsAndLogAxes: every chart says the unit of its y values
// (seconds get a log toggle on line charts, MiB binary ticks), and the JSON
// the browser reads carries the axes it may switch to a log scale.
func TestChartUnitsAndLogAxes(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	want := map[string]struct {
		yunit string
		log   []string
	}{
		"epoch-vs-mem":     {"s", []string{"y"}},
		"epoch-vs-dim":     {"s", []string{"y"}},
		"epoch-vs-batch":   {"s", []string{"y"}},
		"normalised":       {"", nil},
		"stages":           {"s", nil}, // stacked: no log
		"stage-time":       {"s", nil},
		"hit-vs-mem":       {"", nil},
		"tier-hits":        {"", nil},
		"disk-read":        {"MiB", nil},
		"disk-read-kind":   {"MiB", nil},
		"amplification":    {"", nil},
		"io-efficiency":    {"", nil},
		"worker-time":      {"s", nil},
		"memory":           {"MiB", nil},
		"time-to-accuracy": {"", []string{"x"}},
		"accuracy":         {"", nil},
	}
	for _, id := range ChartIDs {
		ch, _ := cmp.Chart(id, "")
		w, ok := want[id]
		if !ok {
			t.Errorf("%s: no expectation", id)
			continue
		}
		if ch.YUnit != w.yunit || !slices.Equal(ch.LogAxes(), w.log) {
			t.Errorf("%s: y unit %q, log axes %q; want %q, %q", id, ch.YUnit, ch.LogAxes(), w.yunit, w.log)
		}
		b, err := json.Marshal(ch)
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			ID      string   `json:"id"`
			YUnit   string   `json:"y_unit"`
			LogAxes []string `json:"log_axes"`
			Series  []Series `json:"series"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.ID != id || back.YUnit != w.yunit || !slices.Equal(back.LogAxes, w.log) || len(back.Series) != len(ch.Series) {
			t.Errorf("%s: JSON %s", id, b)
		}
	}
	run := store.Run{ID: 1, MemLimitBytes: 128 << 20}
	for _, ch := range RunCharts(run, nil, nil) {
		var yunit string
		var log []string
		switch ch.ID {
		case "run-stages", "run-stage-time", "run-workers":
			yunit = "s"
		case "run-reads", "run-memory":
			yunit = "MiB"
		}
		if ch.XUnit == "s" {
			log = []string{"x"}
		}
		if ch.YUnit != yunit || !slices.Equal(ch.LogAxes(), log) {
			t.Errorf("%s: y unit %q, log axes %q; want %q, %q", ch.ID, ch.YUnit, ch.LogAxes(), yunit, log)
		}
	}
}

// TestLogAxesTable: LogAxes from the chart's units, scale and kind.
func TestLogAxesTable(t *testing.T) {
	for _, c := range []struct {
		ch   Chart
		want []string
	}{
		{Chart{XUnit: "s", XType: "value", YUnit: "s", Kind: "line"}, []string{"x", "y"}},
		{Chart{XUnit: "s", XType: "category", YUnit: "s", Kind: "stack"}, nil},
		{Chart{XUnit: "bytes", XType: "log", YUnit: "s", Kind: "line"}, []string{"y"}},
		{Chart{XUnit: "bytes", XType: "value", YUnit: "s", Kind: "bar"}, nil},
		{Chart{XUnit: "s", XType: "value", YUnit: "MiB", Kind: "line"}, []string{"x"}},
		{Chart{YUnit: "s", Kind: "scatter"}, []string{"y"}},
	} {
		if got := c.ch.LogAxes(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.ch, got, c.want)
		}
	}
}
