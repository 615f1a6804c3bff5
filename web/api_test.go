package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
)

// api sends a JSON request with the env's CSRF token and decodes the answer.
func (e *testEnv) api(method, path, body string) (int, map[string]any) {
	e.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(CSRFHeader, e.token)
	resp := e.request(req)
	var m map[string]any
	if err := json.Unmarshal([]byte(bodyOf(e.t, resp)), &m); err != nil {
		e.t.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	return resp.StatusCode, m
}

func bodyOf(t testing.TB, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// TestJSONAPI walks docs/API.md: create (and refuse), list with a filter,
// read an experiment, its runs, a run, its epochs and samples, edit,
// cancel, retry; errors are JSON with the reason.
func TestJSONAPI(t *testing.T) {
	e := newEnv(t)
	e.login()
	code, m := e.api("POST", "/api/experiments", tinyGrid)
	if code != http.StatusCreated || m["dataset"] != "tiny" {
		t.Fatalf("create: %d %v", code, m)
	}
	id := int64(m["id"].(float64))
	code, m = e.api("POST", "/api/experiments", `{"dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["-5MiB"]}}`)
	if ps, _ := m["problems"].([]any); code != http.StatusUnprocessableEntity || m["field"] != "mem_limit" || len(ps) != 1 || !strings.Contains(fmt.Sprint(m["error"]), "is negative") {
		t.Errorf("invalid grid: %d %v", code, m)
	}
	runs := e.runs(id)
	e.play(runs[0], 2, 1, store.StatusDone)
	code, m = e.api("GET", "/api/experiments?q="+strings.ReplaceAll("outcome=done", "=", "%3D"), "")
	if code != 200 || len(m["experiments"].([]any)) != 1 {
		t.Errorf("list: %d %v", code, m)
	}
	code, m = e.api("GET", fmt.Sprintf("/api/experiments/%d", id), "")
	if code != 200 || m["counts"].(map[string]any)["done"] != float64(1) || m["grid"] == nil {
		t.Errorf("experiment: %d %v", code, m)
	}
	code, m = e.api("GET", fmt.Sprintf("/api/experiments/%d/runs?runs=system%%3Dpyg%%2B", id), "")
	if code != 200 || len(m["runs"].([]any)) != 4 {
		t.Errorf("runs of pyg+: %d %v", code, m)
	}
	code, m = e.api("GET", fmt.Sprintf("/api/runs/%d", runs[0].ID), "")
	if code != 200 || m["status"] != "done" || m["config"] == nil {
		t.Errorf("run: %d %v", code, m)
	}
	if m["testbed"] != "this-host" {
		t.Errorf("run's testbed %v, want this-host (its config names none)", m["testbed"])
	}
	// a grid under a paper's testbed: its runs name it, in a list and alone
	code, m = e.api("POST", "/api/experiments", `{"dataset":"tiny","testbed":"gids-vldb24","epochs":1,"axes":{"system":["pyg+"],"mem_limit":["64MiB"]}}`)
	if code != http.StatusCreated {
		t.Fatalf("create under a testbed: %d %v", code, m)
	}
	tbID := int64(m["id"].(float64))
	code, m = e.api("GET", fmt.Sprintf("/api/experiments/%d/runs", tbID), "")
	if rs, _ := m["runs"].([]any); code != 200 || len(rs) != 1 || rs[0].(map[string]any)["testbed"] != "gids-vldb24" {
		t.Errorf("runs under gids-vldb24: %d %v", code, m)
	}
	code, m = e.api("GET", fmt.Sprintf("/api/runs/%d", e.runs(tbID)[0].ID), "")
	if code != 200 || m["testbed"] != "gids-vldb24" {
		t.Errorf("run under gids-vldb24: %d testbed %v", code, m["testbed"])
	}
	code, m = e.api("GET", fmt.Sprintf("/api/runs/%d/epochs", runs[0].ID), "")
	if eps, _ := m["epochs"].([]any); code != 200 || len(eps) != 2 || eps[1].(map[string]any)["epoch_s"] == nil {
		t.Errorf("epochs: %d %v", code, m)
	}
	code, m = e.api("GET", fmt.Sprintf("/api/runs/%d/samples?limit=1", runs[0].ID), "")
	if ss, _ := m["samples"].([]any); code != 200 || len(ss) != 1 {
		t.Errorf("samples: %d %v", code, m)
	}
	code, m = e.api("POST", fmt.Sprintf("/api/experiments/%d/meta", id), `{"tags":["paper"],"notes":"n"}`)
	if code != 200 || fmt.Sprint(m["tags"]) != "[paper]" || m["name"] != "tiny grid" {
		t.Errorf("edit: %d %v", code, m)
	}
	code, m = e.api("POST", fmt.Sprintf("/api/experiments/%d/meta", id), `{"tags":["no way"]}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(m["error"]), "not allowed") {
		t.Errorf("bad tag: %d %v", code, m)
	}
	code, m = e.api("POST", fmt.Sprintf("/api/experiments/%d/cancel", id), "")
	if code != 200 || m["counts"].(map[string]any)["cancelled"] != float64(len(runs)-1) || m["state"] != "cancelled" {
		t.Errorf("cancel: %d %v", code, m)
	}
	code, m = e.api("POST", fmt.Sprintf("/api/experiments/%d/retry", id), "")
	if code != 200 || m["counts"].(map[string]any)["queued"] != float64(len(runs)-1) {
		t.Errorf("retry: %d %v", code, m)
	}
	code, m = e.api("POST", fmt.Sprintf("/api/runs/%d/retry", runs[0].ID), "")
	if code != http.StatusCreated || m["attempt"] != float64(2) {
		t.Errorf("retry run: %d %v", code, m)
	}
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/api/experiments/999", 404}, {"GET", "/api/runs/x", 400}, {"GET", "/api/nothing", 404},
		{"GET", "/api/experiments?q=colour%3Dred", 400}, {"GET", fmt.Sprintf("/api/runs/%d/samples?from=-1", runs[0].ID), 400},
	} {
		code, m := e.api(c.method, c.path, "")
		if code != c.code || m["error"] == nil || m["status"] != float64(c.code) {
			t.Errorf("%s %s: %d %v, want %d with an error", c.method, c.path, code, m, c.code)
		}
	}
}

func TestQueueOrder(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	runs := e.runs(x.ID)
	e.play(runs[2], 2, 3, store.StatusDone)
	e.play(runs[5], 2, 1, store.StatusDone)
	_, page := e.get(fmt.Sprintf("/experiments/%d?rsort=epoch_s", x.ID))
	a, b := strings.Index(page, fmt.Sprintf(`id="run-%d"`, runs[5].ID)), strings.Index(page, fmt.Sprintf(`id="run-%d"`, runs[2].ID))
	if a < 0 || b < 0 || a > b || !strings.Contains(page, `id="queue-rows-filtered"`) {
		t.Error("the queue is not ordered fastest epoch first")
	}
	code, m := e.api("GET", fmt.Sprintf("/api/experiments/%d/runs?sort=-epoch_s", x.ID), "")
	if rs, _ := m["runs"].([]any); code != 200 || len(rs) != 8 || rs[0].(map[string]any)["id"] != float64(runs[2].ID) {
		t.Errorf("API runs by -epoch_s: %d %v", code, m)
	}
	if code, _ := e.api("GET", fmt.Sprintf("/api/experiments/%d/runs?sort=colour", x.ID), ""); code != 400 {
		t.Errorf("unknown sort: %d", code)
	}
}

// TestThinSamples: samples?limit=N thins over the whole run (first and
// last kept, evenly spaced), not the first N.
func TestThinSamples(t *testing.T) {
	var ss []store.Sample
	for i := 0; i < 100; i++ {
		ss = append(ss, store.Sample{SampleRecord: metrics.SampleRecord{T: float64(i)}})
	}
	for _, c := range []struct {
		n    int
		want []float64
	}{
		{0, nil}, {200, nil}, {1, []float64{0}}, {2, []float64{0, 99}}, {4, []float64{0, 33, 66, 99}},
	} {
		got := thinSamples(ss, c.n)
		if c.want == nil {
			if len(got) != len(ss) {
				t.Errorf("limit %d: %d samples, want all", c.n, len(got))
			}
			continue
		}
		var ts []float64
		for _, s := range got {
			ts = append(ts, s.T)
		}
		if fmt.Sprint(ts) != fmt.Sprint(c.want) {
			t.Errorf("limit %d: t %v, want %v", c.n, ts, c.want)
		}
	}
}
