package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestFormOptionAxis: the form offers each variant's options as axes; a
// comma-separated list under gids's window makes one run per value, each
// configured with it (issue 34 item 4), and a value the option does not
// take is refused naming the axis.
func TestFormOptionAxis(t *testing.T) {
	e := newEnv(t)
	e.login()
	_, page := e.get("/experiments/new")
	if !strings.Contains(page, `name="axis.options.window"`) {
		t.Fatal("the form offers no field for gids's window option")
	}
	v := validForm()
	v["variants"] = []string{"gids"}
	v.Set("mem_limits", "none")
	v.Set("repeats", "1")
	v.Set("axis.options.window", "0, 4, 8")
	resp := e.post("/experiments", v)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d: %s", resp.StatusCode, body(t, resp))
	}
	var id int64
	fmt.Sscanf(resp.Header.Get("Location"), "/experiments/%d", &id)
	runs := e.runs(id)
	var windows []string
	for _, r := range runs {
		var cfg struct {
			Options map[string]string `json:"options"`
		}
		json.Unmarshal(r.Config, &cfg)
		windows = append(windows, cfg.Options["window"])
	}
	slices.Sort(windows)
	if !slices.Equal(windows, []string{"0", "4", "8"}) {
		t.Errorf("runs' windows %v, want 0 4 8", windows)
	}
	// the runs page and the CSV show each run's cell
	if _, p := e.get(fmt.Sprintf("/experiments/%d", id)); !strings.Contains(p, "options.window=4") {
		t.Error("the experiment page does not show a run's option value")
	}
	if _, csv := e.get(fmt.Sprintf("/experiments/%d/export/runs.csv", id)); !strings.Contains(csv, `"{""options.window"":""8""}"`) {
		t.Errorf("runs.csv has no cell column with the window: %.300s", csv)
	}

	v.Set("axis.options.window", "0, -3")
	resp = e.post("/experiments", v)
	if b := body(t, resp); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(b, `options.window`) || !strings.Contains(b, "-3") {
		t.Errorf("a window of -3: status %d", resp.StatusCode)
	}
	v["variants"] = []string{"gids", "pyg+"}
	v.Set("axis.options.window", "0, 4")
	resp = e.post("/experiments", v)
	if b := body(t, resp); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(b, `pyg+ has no option`) {
		t.Errorf("window with pyg+: status %d", resp.StatusCode)
	}
}
