package cli

import (
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"
)

// TestExpExportTimeToAccuracy: `exp export ID --figure time-to-accuracy`
// writes the chart as SVG, and its data as CSV: one row per evaluated
// epoch of each line (the storetest grid: gnndrive at two limits and pyg+
// at 256 MiB, three epochs each; pyg+ at 128 MiB ran out of memory).
func TestExpExportTimeToAccuracy(t *testing.T) {
	dir, id, _ := exportFixture(t)
	svg := filepath.Join(t.TempDir(), "tta.svg")
	if code, _, stderr := runCLI("exp", "export", id, "--figure", "time-to-accuracy", "--format", "svg", "--out", svg, "--data-dir", dir); code != 0 {
		t.Fatalf("svg: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := runCLI("exp", "export", id, "--figure", "time-to-accuracy", "--format", "csv", "--out", "-", "--data-dir", dir)
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if code != 0 || err != nil {
		t.Fatalf("csv: exit %d, %v, %s", code, err, stderr)
	}
	if len(recs) != 1+3*3 {
		t.Fatalf("csv: %d rows, want 9 (3 lines × 3 epochs):\n%s", len(recs)-1, stdout)
	}
	for _, r := range recs[1:] {
		if r[0] != "time-to-accuracy" || r[5] != "s" || !strings.HasPrefix(r[6], "epoch ") || strings.HasPrefix(r[1], "pyg+ · 128MiB") {
			t.Errorf("row %v", r)
		}
	}
}
