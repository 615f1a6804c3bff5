package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"outcore/report"
	"outcore/store/storetest"
)

// TestLegacyRunStillRenders serves a database written before metrics
// version 2: the experiment page, its charts (JSON and files), the run page
// with its epoch table and charts, and the epochs CSV all render; the new
// metrics' cells say they were not measured instead of showing the old
// bytes_read / bytes_needed as a read amplification.
func TestLegacyRunStillRenders(t *testing.T) {
	dir := t.TempDir()
	expID, runID, err := storetest.LegacyDatabase(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvIn(t, dir)
	e.login()
	code, page := e.get(fmt.Sprintf("/experiments/%d", expID))
	if code != 200 || !strings.Contains(page, `data-chart="amplification"`) {
		t.Fatalf("experiment page: %d", code)
	}
	code, js := e.get(fmt.Sprintf("/experiments/%d/charts.json", expID))
	var got struct{ Charts []report.Chart }
	if code != 200 || json.Unmarshal([]byte(js), &got) != nil || len(got.Charts) == 0 {
		t.Fatalf("charts: %d %s", code, js)
	}
	for _, ch := range got.Charts {
		if ch.ID == "amplification" && !strings.Contains(ch.Empty, "before metrics version 2") {
			t.Errorf("amplification of legacy runs: empty %q", ch.Empty)
		}
		if ch.ID == "stages" && !strings.Contains(ch.Empty, "before metrics version 3") {
			t.Errorf("stage breakdown of legacy runs: empty %q", ch.Empty)
		}
	}
	for _, f := range []string{"disk-read.svg", "disk-read.csv", "stage-time.pdf"} {
		if code, body := e.get(fmt.Sprintf("/experiments/%d/charts/%s", expID, f)); code != 200 {
			t.Errorf("%s: %d %s", f, code, body)
		}
	}
	code, page = e.get(fmt.Sprintf("/runs/%d", runID))
	if code != 200 {
		t.Fatalf("run page: %d", code)
	}
	for _, want := range []string{fmt.Sprintf(`id="epoch-%d-2"`, runID), "Feat MiB",
		"recorded before metrics version 2: not measured (bytes read / bytes needed was 3"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	code, js = e.get(fmt.Sprintf("/runs/%d/charts.json", runID))
	if code != 200 || json.Unmarshal([]byte(js), &got) != nil || len(got.Charts) != len(report.RunChartIDs) {
		t.Fatalf("run charts: %d %s", code, js)
	}
	for _, ch := range got.Charts {
		legacyEmpty := strings.Contains(ch.Empty, "before metrics version 2")
		if (ch.ID == "run-reads" || ch.ID == "run-workers") != legacyEmpty {
			t.Errorf("run chart %s: empty %q", ch.ID, ch.Empty)
		}
	}
	code, csv := e.get(fmt.Sprintf("/experiments/%d/export/epochs.csv", expID))
	if code != 200 || !strings.Contains(csv, "bytes_read_per_byte_needed") || strings.Count(csv, "\n") != 4 {
		t.Fatalf("epochs CSV: %d\n%s", code, csv)
	}
}
