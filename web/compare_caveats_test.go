package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"outcore/store"
	"outcore/store/storetest"
)

// /compare refuses experiments on different data unless asked, then flags
// them; different hosts and busy hosts are flagged.
func TestCompareRefusesMixedDataFlagsHosts(t *testing.T) {
	e := newEnv(t)
	e.login()
	ctx := context.Background()
	mk := func(name string, r storetest.Run) int64 {
		r.System, r.MemLimit, r.Epochs, r.EpochS, r.Outcome = "pyg+", 64<<20, 2, 1, store.StatusDone
		x, _, err := storetest.Experiment(ctx, e.st, name, []storetest.Run{r})
		if err != nil {
			t.Fatal(err)
		}
		return x.ID
	}
	tiny := mk("tiny", storetest.Run{Host: "a"})
	def := mk("default", storetest.Run{Dataset: "default", Dim: 64, Host: "a"})
	other := mk("tiny elsewhere", storetest.Run{Host: "b", Busy: true})

	code, page := e.get(fmt.Sprintf("/compare?exp=%d&exp=%d", tiny, def))
	if code != 409 || !strings.Contains(page, "different data") || !strings.Contains(page, "tiny (dim 32)") ||
		!strings.Contains(page, "default (dim 64)") || !strings.Contains(page, `id="compare-mixed"`) || strings.Contains(page, `data-chart="epoch-vs-mem"`) {
		t.Errorf("mixed datasets: %d, want 409 naming both and a link to compare anyway", code)
	}
	for _, u := range []string{"/compare/charts.json", "/compare/charts/epoch-vs-mem.svg"} {
		if code, body := e.get(fmt.Sprintf("%s?exp=%d&exp=%d", u, tiny, def)); code != 409 || !strings.Contains(body, "different data") {
			t.Errorf("%s of mixed datasets: %d", u, code)
		}
	}
	code, page = e.get(fmt.Sprintf("/compare?exp=%d&exp=%d&mixed=ok", tiny, def))
	if code != 200 || !strings.Contains(page, "Compared as asked although") || !strings.Contains(page, "mixed=ok") {
		t.Errorf("mixed datasets asked for: %d, want the comparison with a caveat", code)
	}
	if code, js := e.get(fmt.Sprintf("/compare/charts.json?exp=%d&exp=%d&mixed=ok", tiny, def)); code != 200 || !strings.Contains(js, `"mixed_data":"the experiments ran on different data`) {
		t.Errorf("charts.json asked for: %d %.200s", code, js)
	}

	code, page = e.get(fmt.Sprintf("/compare?exp=%d&exp=%d", tiny, other))
	if code != 200 || !strings.Contains(page, "measured on different hosts: a (2 cores) in #") || !strings.Contains(page, "1 of 2 runs were measured on a busy host") {
		t.Errorf("hosts: %d, want the different hosts and the busy run flagged", code)
	}
}

// The experiment's runs view: one line per run, grouped as asked.
func TestRunsViewJSON(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	for _, r := range e.runs(x.ID) {
		e.play(r, 2, 1, store.StatusDone)
	}
	code, page := e.get(fmt.Sprintf("/experiments/%d", x.ID))
	if code != 200 || !strings.Contains(page, fmt.Sprintf(`data-runs-url="/experiments/%d/runs.json"`, x.ID)) || !strings.Contains(page, `id="group-by"`) {
		t.Fatalf("experiment page lacks the runs view: %d", code)
	}
	code, js := e.get(fmt.Sprintf("/experiments/%d/runs.json?group=mem_limit", x.ID))
	var v struct {
		GroupBy string `json:"group_by"`
		Lines   []struct{ Values []any }
		Groups  []struct {
			Key  string
			Runs int
		}
		Dims []struct{ Key string }
	}
	if code != 200 || json.Unmarshal([]byte(js), &v) != nil {
		t.Fatalf("runs.json: %d %s", code, js)
	}
	if v.GroupBy != "mem_limit" || len(v.Lines) != 8 || len(v.Groups) != 2 || v.Groups[0].Key != "64MiB" || v.Groups[0].Runs != 4 {
		t.Errorf("runs view %+v", v)
	}
	if code, body := e.get(fmt.Sprintf("/experiments/%d/runs.json?group=colour", x.ID)); code != 400 || !strings.Contains(body, "want one of") {
		t.Errorf("bad grouping: %d %s", code, body)
	}
	if code, _ := e.get("/experiments/999/runs.json"); code != 404 {
		t.Errorf("missing experiment: %d", code)
	}
}

// An experiment's charts say when runs were measured on a busy host.
func TestExperimentChartsFlagBusyHost(t *testing.T) {
	e := newEnv(t)
	e.login()
	x, _, err := storetest.Experiment(context.Background(), e.st, "busy", []storetest.Run{
		{System: "pyg+", MemLimit: 64 << 20, Epochs: 2, EpochS: 1, Outcome: store.StatusDone, Busy: true},
		{System: "pyg+", MemLimit: 64 << 20, Repeat: 1, Epochs: 2, EpochS: 1, Outcome: store.StatusDone}})
	if err != nil {
		t.Fatal(err)
	}
	code, js := e.get(fmt.Sprintf("/experiments/%d/charts.json", x.ID))
	var got struct{ Caveats []string }
	if code != 200 || json.Unmarshal([]byte(js), &got) != nil || len(got.Caveats) != 1 || !strings.Contains(got.Caveats[0], "1 of 2 runs were measured on a busy host") {
		t.Errorf("charts.json: %d, caveats %q", code, got.Caveats)
	}
	if _, page := e.get(fmt.Sprintf("/experiments/%d", x.ID)); !strings.Contains(page, `id="chart-caveats"`) {
		t.Error("the experiment page has no place for the caveats")
	}
}

// The form's run order reaches the grid (recorded) and the runs' order;
// repeats get distinct seeds; a run order there is not is refused.
func TestFormRunOrder(t *testing.T) {
	e := newEnv(t)
	e.login()
	v := validForm()
	v.Set("run_order", "interleave")
	resp := e.post("/experiments", v)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d: %s", resp.StatusCode, body(t, resp))
	}
	var id int64
	fmt.Sscanf(resp.Header.Get("Location"), "/experiments/%d", &id)
	x, err := e.st.Experiment(context.Background(), id)
	if err != nil || !strings.Contains(string(x.Grid), `"run_order":"interleave"`) {
		t.Fatalf("grid %s %v", x.Grid, err)
	}
	runs := e.runs(id)
	if runs[0].System == runs[1].System || runs[0].MemLimitBytes != runs[1].MemLimitBytes {
		t.Errorf("interleaved: run 0 %s %d, run 1 %s %d", runs[0].System, runs[0].MemLimitBytes, runs[1].System, runs[1].MemLimitBytes)
	}
	seeds := map[int]string{}
	for _, r := range runs {
		s := seedOf(r.Config)
		if prev, ok := seeds[r.Repeat]; ok && prev != s {
			t.Errorf("repeat %d has seeds %s and %s", r.Repeat, prev, s)
		}
		seeds[r.Repeat] = s
	}
	if seeds[0] == seeds[1] || seeds[0] == "–" {
		t.Errorf("repeats share seed %s", seeds[0])
	}
	v.Set("run_order", "sorted")
	if resp := e.post("/experiments", v); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body(t, resp), "run order") {
		t.Errorf("unknown run order: %d", resp.StatusCode)
	}
}

// TestCompareLikeWithLike: one experiment's single cold epochs are not set
// against another's later epochs and called a regression: the row says
// what each measured and compares nothing; runs of one kind are compared.
func TestCompareLikeWithLike(t *testing.T) {
	e := newEnv(t)
	e.login()
	ctx := context.Background()
	mk := func(name string, epochs int, secs float64) int64 {
		r := storetest.Run{System: "pyg+", MemLimit: 64 << 20, Epochs: epochs, EpochS: secs, Outcome: store.StatusDone, Host: "a"}
		x, _, err := storetest.Experiment(ctx, e.st, name, []storetest.Run{r})
		if err != nil {
			t.Fatal(err)
		}
		return x.ID
	}
	cold := mk("cold", 1, 10)
	later := mk("later", 3, 12.2)
	again := mk("again", 3, 12.2)
	code, page := e.get(fmt.Sprintf("/compare?exp=%d&exp=%d&exp=%d", cold, later, again))
	if code != 200 {
		t.Fatalf("compare: %d", code)
	}
	if strings.Contains(page, "+22.0%") || strings.Contains(page, ">slower<") {
		t.Errorf("a cold epoch was set against warm ones and called slower")
	}
	for _, want := range []string{"data-unlike", fmt.Sprintf("#%d cold, #%d warm", cold, later), "not compared", "+0.0%", "(n=1)"} {
		if !strings.Contains(page, want) {
			t.Errorf("compare page lacks %q", want)
		}
	}
}
