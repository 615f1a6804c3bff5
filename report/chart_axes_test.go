package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"outcore/store"
)

// TestChartUnitsAndLogAxes: every chart of the table says the unit of its
// y values as its y label names it (seconds get a log toggle on line
// charts, MiB binary ticks), and the JSON the browser reads carries the
// axes it may switch to a log scale.
func TestChartUnitsAndLogAxes(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	// yUnit is the unit a y label names: seconds, or MiB.
	yUnit := func(label string) string {
		switch {
		case strings.Contains(label, "(s)") || strings.Contains(label, "seconds"):
			return "s"
		case strings.Contains(label, "MiB"):
			return "MiB"
		}
		return ""
	}
	var charts []Chart
	for _, id := range ChartIDs {
		ch, _ := cmp.Chart(id, "")
		charts = append(charts, ch)
	}
	run := store.Run{ID: 1, MemLimitBytes: 128 << 20}
	charts = append(charts, RunCharts(run, nil, nil)...)
	units := map[string]int{}
	logs := map[string]int{}
	for _, ch := range charts {
		if want := yUnit(ch.YLabel); ch.YUnit != want {
			t.Errorf("%s: y unit %q, its label %q says %q", ch.ID, ch.YUnit, ch.YLabel, want)
		}
		units[ch.YUnit]++
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
		if back.ID != ch.ID || back.YUnit != ch.YUnit || !slices.Equal(back.LogAxes, ch.LogAxes()) || len(back.Series) != len(ch.Series) {
			t.Errorf("%s: JSON %s", ch.ID, b)
		}
		for _, ax := range back.LogAxes {
			logs[ax]++
		}
	}
	// the catalogue has time, size and unitless charts, and both log toggles
	if units["s"] == 0 || units["MiB"] == 0 || units[""] == 0 || logs["x"] == 0 || logs["y"] == 0 {
		t.Errorf("units %v, log axes %v", units, logs)
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
