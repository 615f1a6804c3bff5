package report

import "testing"

// TestCellLabelNamesPathAxes: runs that differ only on a grid's path axis
// ("options.window") are labelled by its value.
func TestCellLabelNamesPathAxes(t *testing.T) {
	var runs []RunData
	for i, w := range []string{"0", "4", "8"} {
		runs = append(runs, RunData{ID: int64(i + 1), System: "gids", MemLimit: 1 << 30, Batch: 100, Model: "sage", Fanout: "10,10",
			Compute: "cpu", Status: RunDone, Cell: "options.window=" + w})
	}
	c := NewComparison(runs)
	if got := c.cellLabel(c.runs[1]); got != "options.window=4" {
		t.Errorf("cellLabel = %q, want options.window=4", got)
	}
}
