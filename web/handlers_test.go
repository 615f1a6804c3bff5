package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/experiments"
	"outcore/report"
	"outcore/store"
)

const tinyGrid = `{"name":"tiny grid","dataset":"tiny","model":"sage","epochs":2,
	"axes":{"system":["pyg+","gnndrive"],"mem_limit":["64MiB","128MiB"],"repeat":2}}`

// validForm is a new-experiment form that makes 2 variants × 2 limits × 2 repeats.
func validForm() url.Values {
	return url.Values{
		"name": {"form grid"}, "dataset_mode": {"existing"}, "dataset": {"tiny"},
		"variants": {"pyg+", "gnndrive"}, "mem_limits": {"64MiB, 128MiB"}, "dims": {""},
		"batches": {"512"}, "model": {"sage"}, "fanouts": {"5,5"}, "epochs": {"2"}, "repeats": {"2"},
	}
}

func experimentCount(t *testing.T, e *testEnv) int {
	t.Helper()
	xs, err := e.st.ListExperiments(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(xs)
}

func TestRootRedirects(t *testing.T) {
	e := newEnv(t)
	resp := e.request(httptest.NewRequest(http.MethodGet, "/", nil))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/experiments" {
		t.Fatalf("GET /: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestExperimentListShowsProgressAndExamples(t *testing.T) {
	e := newEnv(t)
	x := e.create(tinyGrid)
	runs := e.runs(x.ID)
	e.play(runs[0], 2, 0.5, store.StatusDone)
	e.play(runs[1], 1, 0.5, store.StatusOOM)
	if _, err := WriteExample(e.dir, "ex.json", []byte(`{"name":"ready one","dataset":"tiny","axes":{"system":["pyg+"]}}`)); err != nil {
		t.Fatal(err)
	}
	code, page := e.get("/experiments")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{`id="exp-` + fmt.Sprint(x.ID) + `"`, "tiny grid", "2/8 runs", "1 OOM", "ready one", `name="example" value="ex.json"`, `sse-connect="/events?scope=experiments&amp;after=`} {
		if !strings.Contains(page, want) {
			t.Errorf("list lacks %q", want)
		}
	}
}

func TestNewExperimentForm(t *testing.T) {
	e := newEnv(t)
	code, page := e.get("/experiments/new")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{`name="variants" value="pyg+"`, `name="variants" value="gnndrive"`, `value="tiny"`, `id="preview-runs"`, `name="_csrf"`} {
		if !strings.Contains(page, want) {
			t.Errorf("form lacks %q", want)
		}
	}
}

func TestPreview(t *testing.T) {
	e := newEnv(t)
	e.login()
	tests := []struct {
		name    string
		change  func(url.Values)
		runs    string
		errID   string // the inline error that must say something
		errText string
	}{
		{"valid", func(url.Values) {}, ">8<", "", ""},
		{"three limits", func(v url.Values) { v.Set("mem_limits", "64MiB,128MiB,9000%") }, ">12<", "", ""},
		{"bad limit", func(v url.Values) { v.Set("mem_limits", "64 parsecs") }, "", "err-mem_limits", "memory limits"},
		{"tiny limit", func(v url.Values) { v.Set("mem_limits", "10KiB") }, "", "err-mem_limits", "below 1MiB"},
		{"no variant", func(v url.Values) { v.Del("variants") }, "", "err-variants", "tick at least one"},
		{"unknown variant", func(v url.Values) { v["variants"] = []string{"pyg+", "bogus"} }, "", "err-variants", `&#34;bogus&#34; is not a variant`},
		{"zero repeats", func(v url.Values) { v.Set("repeats", "0") }, "", "err-repeats", "from 1 to 100"},
		{"bad fanout", func(v url.Values) { v.Set("fanouts", "10,x") }, "", "err-fanouts", "fanout"},
		{"missing dataset", func(v url.Values) { v.Set("dataset", "nope") }, "", "err-dataset", "no dataset named"},
		{"duplicate dims", func(v url.Values) { v.Set("dims", "16,16") }, "", "err-dims", "twice"},
		// generate from preset with every variant ticked: a preset's
		// dataset has no files yet, its floors come from its shape (ginex
		// divided by its zero batches: 500)
		{"generate with every variant", func(v url.Values) {
			v.Set("dataset_mode", "generate")
			v.Set("preset", "tiny")
			v.Set("new_dataset", "fresh")
			v.Set("mem_limits", "1MiB, 64MiB, none")
			v.Set("skip_infeasible", "1")
			v["variants"] = Variants()
		}, fmt.Sprintf(">%d<", 6*len(Variants())), "", ""}, // 3 limits × 2 repeats a variant
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := validForm()
			tc.change(v)
			resp := e.post("/experiments/preview", v)
			page := body(t, resp)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, page)
			}
			if tc.runs != "" && !strings.Contains(page, `id="preview-runs">`+strings.Trim(tc.runs, "<>")+`<`) {
				t.Errorf("run count %s not in %s", tc.runs, page)
			}
			if tc.errID != "" {
				i := strings.Index(page, `id="`+tc.errID+`"`)
				if i < 0 || !strings.Contains(page[i:min(len(page), i+300)], tc.errText) {
					t.Errorf("%s does not say %q: %s", tc.errID, tc.errText, page)
				}
			}
		})
	}
}

func TestCreateFromForm(t *testing.T) {
	e := newEnv(t)
	e.login()
	resp := e.post("/experiments", validForm())
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d: %s", resp.StatusCode, body(t, resp))
	}
	loc := resp.Header.Get("Location")
	var id int64
	if _, err := fmt.Sscanf(loc, "/experiments/%d", &id); err != nil {
		t.Fatalf("Location %q", loc)
	}
	x, err := e.st.Experiment(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if x.Name != "form grid" || x.Dataset != "tiny" || x.Counts.Total != 8 || x.Counts.Queued != 8 {
		t.Errorf("stored %+v", x)
	}
	runs := e.runs(id)
	if runs[0].BatchSize != 512 || runs[0].Fanout != "5,5" || runs[0].MemLimitBytes != 64<<20 {
		t.Errorf("run 0 is %+v", runs[0])
	}
}

func TestCreateRejectsBadInput(t *testing.T) {
	e := newEnv(t)
	e.login()
	tests := []struct {
		name   string
		change func(url.Values)
		want   string
	}{
		{"negative repeats", func(v url.Values) { v.Set("repeats", "-1") }, "repeats: "},
		{"unknown variant", func(v url.Values) { v["variants"] = []string{"nope"} }, "is not a variant"},
		{"unknown model", func(v url.Values) { v.Set("model", "transformer") }, "is not a model"},
		{"missing dataset", func(v url.Values) { v.Set("dataset", "absent") }, "no dataset named"},
		{"bad dataset name for generation", func(v url.Values) {
			v.Set("dataset_mode", "generate")
			v.Set("preset", "tiny")
			v.Set("new_dataset", "../evil")
		}, "new dataset:"},
		{"generated name taken", func(v url.Values) {
			v.Set("dataset_mode", "generate")
			v.Set("preset", "tiny")
			v.Set("new_dataset", "tiny")
		}, "exists already"},
		{"unknown preset", func(v url.Values) {
			v.Set("dataset_mode", "generate")
			v.Set("preset", "galactic")
			v.Set("new_dataset", "g")
		}, "unknown preset"},
		{"limit the variant cannot start in", func(v url.Values) { v.Set("mem_limits", "2MiB") }, "needs to start"},
		{"name too long", func(v url.Values) { v.Set("name", strings.Repeat("x", 101)) }, "at most 100"},
		{"epochs not a number", func(v url.Values) { v.Set("epochs", "many") }, "epochs: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := experimentCount(t, e)
			v := validForm()
			tc.change(v)
			resp := e.post("/experiments", v)
			page := body(t, resp)
			if resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", resp.StatusCode)
			}
			if !strings.Contains(page, tc.want) || !strings.Contains(page, `class="err"`) {
				t.Errorf("page lacks inline error %q", tc.want)
			}
			if n := experimentCount(t, e); n != before {
				t.Errorf("experiments %d -> %d after bad input", before, n)
			}
		})
	}
}

func TestCSRFRejection(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	paths := []string{"/experiments", "/experiments/preview", fmt.Sprintf("/experiments/%d/cancel", x.ID),
		fmt.Sprintf("/experiments/%d/delete", x.ID), fmt.Sprintf("/runs/%d/cancel", e.runs(x.ID)[0].ID),
		fmt.Sprintf("/runs/%d/retry", e.runs(x.ID)[0].ID), "/datasets/generate", "/datasets/import"}
	cases := []struct {
		name  string
		setup func(*http.Request, url.Values)
	}{
		{"no token", func(r *http.Request, v url.Values) {}},
		{"wrong token", func(r *http.Request, v url.Values) { r.Header.Set(CSRFHeader, "forged.token") }},
		{"token of another key", func(r *http.Request, v url.Values) {
			r.Header.Set(CSRFHeader, NewCSRF([]byte("another key, 32 bytes long......")).mint())
		}},
		{"cross-site with token", func(r *http.Request, v url.Values) {
			r.Header.Set(CSRFHeader, e.token)
			r.Header.Set("Sec-Fetch-Site", "cross-site")
		}},
	}
	for _, p := range paths {
		for _, tc := range cases {
			t.Run(tc.name+" "+p, func(t *testing.T) {
				v := validForm()
				req := httptest.NewRequest(http.MethodPost, p, strings.NewReader(v.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				tc.setup(req, v)
				resp := e.request(req)
				if resp.StatusCode != http.StatusForbidden {
					t.Fatalf("status %d, want 403", resp.StatusCode)
				}
			})
		}
	}
	// Nothing changed: one experiment, its runs still queued.
	if n := experimentCount(t, e); n != 1 {
		t.Errorf("%d experiments after forged requests", n)
	}
	for _, r := range e.runs(x.ID) {
		if r.Status != store.StatusQueued {
			t.Errorf("run %d is %s after forged requests", r.ID, r.Status)
		}
	}
	// A cookie without a form token (or the reverse) is not enough either.
	req := httptest.NewRequest(http.MethodPost, "/experiments", strings.NewReader(validForm().Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(CSRFHeader, e.token)
	resp, err := e.srv.App().Test(req, 5000) // no cookie
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("token without cookie: %v %v", resp.StatusCode, err)
	}
	// With the header token (as htmx sends it) the same request passes.
	req = httptest.NewRequest(http.MethodPost, "/experiments/preview", strings.NewReader(validForm().Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(CSRFHeader, e.token)
	if resp := e.request(req); resp.StatusCode != 200 {
		t.Errorf("htmx-style request with header token: %d", resp.StatusCode)
	}
}

func TestCreateFromJSON(t *testing.T) {
	e := newEnv(t)
	e.login()
	send := func(b string) (*http.Response, map[string]any) {
		req := httptest.NewRequest(http.MethodPost, "/experiments", strings.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(CSRFHeader, e.token)
		req.Header.Set("Accept", "application/json")
		resp := e.request(req)
		var m map[string]any
		json.Unmarshal([]byte(body(t, resp)), &m)
		return resp, m
	}
	resp, m := send(tinyGrid)
	if resp.StatusCode != http.StatusCreated || m["runs"] != float64(8) {
		t.Fatalf("valid grid: %d %v", resp.StatusCode, m)
	}
	resp, m = send(`{"dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["-5MiB"]}}`)
	if resp.StatusCode != http.StatusUnprocessableEntity || m["field"] != "mem_limit" || !strings.Contains(fmt.Sprint(m["error"]), "memory limits:") {
		t.Errorf("negative limit: %d %v", resp.StatusCode, m)
	}
	resp, _ = send(`{not json`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad JSON: %d", resp.StatusCode)
	}
}

func TestStartExample(t *testing.T) {
	e := newEnv(t)
	e.login()
	if _, err := WriteExample(e.dir, "ex.json", []byte(tinyGrid)); err != nil {
		t.Fatal(err)
	}
	// Start first says how many runs and how long, and queues nothing.
	resp := e.post("/experiments", url.Values{"example": {"ex.json"}})
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-runs="8"`) || !strings.Contains(string(body), `id="confirm-estimate"`) {
		t.Fatalf("start example: %d %s", resp.StatusCode, body)
	}
	if xs, _ := e.st.ListExperiments(context.Background()); len(xs) != 0 {
		t.Fatalf("the confirmation queued %d experiments", len(xs))
	}
	resp = e.post("/experiments", url.Values{"example": {"ex.json"}, "confirm": {"1"}})
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/experiments/") {
		t.Fatalf("start example: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// A cell below its variant's floor is skipped and listed as refused
	// with its reason, before and after the start.
	if _, err := WriteExample(e.dir, "low.json", []byte(strings.Replace(tinyGrid, `"64MiB"`, `"1MiB"`, 1))); err != nil {
		t.Fatal(err)
	}
	resp = e.post("/experiments", url.Values{"example": {"low.json"}})
	body, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `data-runs="4"`) || !strings.Contains(string(body), `data-refused="4"`) || !strings.Contains(string(body), "needs to start on tiny") {
		t.Fatalf("confirmation of a grid with refused cells: %s", body)
	}
	resp = e.post("/experiments", url.Values{"example": {"low.json"}, "confirm": {"1"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", resp.StatusCode)
	}
	code, page := e.get(resp.Header.Get("Location"))
	if code != http.StatusOK || strings.Count(page, `data-outcome="refused"`) != 4 || !strings.Contains(page, "1MiB is below the") {
		t.Fatalf("experiment page with refused cells: %d", code)
	}
	for _, bad := range []string{"../outcore.db", "missing.json", "ex"} {
		if resp := e.post("/experiments", url.Values{"example": {bad}}); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("example %q: %d, want 400", bad, resp.StatusCode)
		}
	}
}

func TestCreateWithGeneratedDataset(t *testing.T) {
	e := newEnv(t)
	e.login()
	v := validForm()
	v.Set("dataset_mode", "generate")
	v.Set("preset", "tiny")
	v.Set("new_dataset", "fresh")
	resp := e.post("/experiments", v)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/datasets" {
		t.Fatalf("status %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	e.srv.jobs.Wait()
	jobs := e.srv.jobs.List()
	if len(jobs) != 1 || jobs[0].State != JobDone || !strings.HasPrefix(jobs[0].Link, "/experiments/") {
		t.Fatalf("job %+v", jobs)
	}
	xs, _ := e.st.ListExperiments(context.Background())
	if len(xs) != 1 || xs[0].Dataset != "fresh" || xs[0].Counts.Total != 8 {
		t.Errorf("experiments %+v", xs)
	}
	if _, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(e.dir), "fresh")); err != nil {
		t.Error(err)
	}
}

func TestExperimentPage(t *testing.T) {
	e := newEnv(t)
	x := e.create(tinyGrid)
	runs := e.runs(x.ID)
	e.play(runs[0], 2, 1.0, store.StatusDone)
	e.play(runs[1], 0, 1.0, store.StatusOOM)
	e.play(runs[2], 1, 1.0, store.StatusFailed)
	code, page := e.get(fmt.Sprintf("/experiments/%d", x.ID))
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{"tiny grid", fmt.Sprintf(`id="run-%d"`, runs[7].ID), `data-status="oom"`, `data-status="failed"`,
		`data-chart="epoch-vs-mem"`, `data-chart="time-to-accuracy"`, `id="accuracy"`, "/export/epochs.csv",
		fmt.Sprintf(`sse-connect="/events?experiment=%d&amp;after=`, x.ID)} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for path, want := range map[string]int{"/experiments/abc": 400, "/experiments/0": 400, "/experiments/999": 404} {
		if code, _ := e.get(path); code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
	}
}

func TestChartsJSONAndFiles(t *testing.T) {
	e := newEnv(t)
	x := e.create(tinyGrid)
	for i, r := range e.runs(x.ID) {
		switch {
		case r.System == "pyg+" && r.MemLimitBytes == 64<<20:
			e.play(r, 0, 0, store.StatusOOM)
		default:
			e.play(r, 3, 1+float64(i)*0.1, store.StatusDone)
		}
	}
	code, js := e.get(fmt.Sprintf("/experiments/%d/charts.json?baseline=gnndrive", x.ID))
	if code != 200 {
		t.Fatalf("charts.json: %d %s", code, js)
	}
	var got struct{ Charts []report.Chart }
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Charts) != len(report.ChartIDs) {
		t.Fatalf("%d charts, want %d", len(got.Charts), len(report.ChartIDs))
	}
	byID := map[string]report.Chart{}
	for _, ch := range got.Charts {
		byID[ch.ID] = ch
	}
	mem := byID["epoch-vs-mem"]
	if mem.Empty != "" || len(mem.Series) != 2 {
		t.Fatalf("epoch-vs-mem: %+v", mem)
	}
	oomSeen := false
	for _, s := range mem.Series {
		for _, p := range s.Points {
			if s.Name == "pyg+" && p.Label == "64MiB" {
				oomSeen = p.Status == report.StatusOOM && p.Y == nil
			}
			if p.Y != nil && p.N != 2 {
				t.Errorf("%s %s: n = %d, want 2 repeats", s.Name, p.Label, p.N)
			}
		}
	}
	if !oomSeen {
		t.Error("pyg+ at 64 MiB not marked OOM")
	}
	if !strings.Contains(byID["normalised"].Title, "gnndrive") {
		t.Errorf("normalised title %q", byID["normalised"].Title)
	}
	if code, _ := e.get(fmt.Sprintf("/experiments/%d/charts.json?baseline=nope", x.ID)); code != 400 {
		t.Errorf("unknown baseline: %d", code)
	}
	for _, f := range []struct {
		file, ctype, prefix string
	}{
		{"epoch-vs-mem.csv", "text/csv", "chart,series,role,parent,x,x_unit,x_label"},
		{"epoch-vs-mem.svg", "image/svg+xml", "<?xml"},
		{"stages.pdf", "application/pdf", "%PDF-"},
		{"time-to-accuracy.svg", "image/svg+xml", "<?xml"},
	} {
		resp := e.request(httptest.NewRequest(http.MethodGet, fmt.Sprintf("/experiments/%d/charts/%s", x.ID, f.file), nil))
		b := body(t, resp)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), f.ctype) || !strings.HasPrefix(b, f.prefix) {
			t.Errorf("%s: %d %s %.40q", f.file, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	for _, bad := range []string{"nochart.svg", "epoch-vs-mem.png", "epoch-vs-mem"} {
		if code, _ := e.get(fmt.Sprintf("/experiments/%d/charts/%s", x.ID, bad)); code != 404 {
			t.Errorf("%s: %d, want 404", bad, code)
		}
	}
	// A chart without data cannot be a figure.
	y := e.create(tinyGrid)
	if code, _ := e.get(fmt.Sprintf("/experiments/%d/charts/epoch-vs-mem.svg", y.ID)); code != 409 {
		t.Errorf("empty chart figure: %d, want 409", code)
	}
}

func TestExportCSVMatchesStore(t *testing.T) {
	e := newEnv(t)
	x := e.create(tinyGrid)
	runs := e.runs(x.ID)
	e.play(runs[0], 3, 1.5, store.StatusDone)
	e.play(runs[1], 1, 1.5, store.StatusFailed)
	for what, rows := range map[string]int{"runs": 8, "epochs": 4, "samples": 4} {
		resp := e.request(httptest.NewRequest(http.MethodGet, fmt.Sprintf("/experiments/%d/export/%s.csv", x.ID, what), nil))
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("%s: %d %s", what, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		recs, err := csv.NewReader(resp.Body).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(recs)-1 != rows {
			t.Errorf("%s: %d rows, want %d", what, len(recs)-1, rows)
		}
		if recs[0][0] != "run_id" && !contains(recs[0], "run_id") {
			t.Errorf("%s: no run_id column: %v", what, recs[0])
		}
		if what == "runs" {
			col := indexOf(recs[0], "error")
			for _, r := range recs[1:] {
				if col >= 0 && strings.HasPrefix(r[col], "=") {
					t.Errorf("formula cell not escaped: %q", r[col])
				}
			}
		}
	}
	for _, bad := range []string{"everything.csv", "runs.json"} {
		if code, _ := e.get(fmt.Sprintf("/experiments/%d/export/%s", x.ID, bad)); code != 404 {
			t.Errorf("%s: %d, want 404", bad, code)
		}
	}
	if code, _ := e.get("/experiments/77/export/runs.csv"); code != 404 {
		t.Errorf("missing experiment export: %d", code)
	}
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

func TestCancelAndDeleteExperiment(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	e.play(e.runs(x.ID)[0], 1, 1, store.StatusDone)
	resp := e.post(fmt.Sprintf("/experiments/%d/cancel", x.ID), nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body(t, resp))
	}
	c := e.runs(x.ID)
	if c[0].Status != store.StatusDone || c[1].Status != store.StatusCancelled {
		t.Errorf("after cancel: %s, %s", c[0].Status, c[1].Status)
	}
	if resp := e.post("/experiments/99/cancel", nil); resp.StatusCode != 404 {
		t.Errorf("cancel missing: %d", resp.StatusCode)
	}
	if resp := e.post(fmt.Sprintf("/experiments/%d/delete", x.ID), nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if _, err := e.st.Experiment(context.Background(), x.ID); err == nil {
		t.Error("experiment still there after delete")
	}
	if resp := e.post("/experiments/x/delete", nil); resp.StatusCode != 400 {
		t.Errorf("delete bad id: %d", resp.StatusCode)
	}
}

func TestRunPageAndActions(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	runs := e.runs(x.ID)
	e.play(runs[0], 2, 1, store.StatusFailed)
	code, page := e.get(fmt.Sprintf("/runs/%d", runs[0].ID))
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{fmt.Sprintf(`id="epoch-%d-1"`, runs[0].ID), "log line of epoch 1", "panic: boom",
		`data-chart="run-util"`, `data-chart="run-stages"`, "pyg+ · 64MiB"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	code, js := e.get(fmt.Sprintf("/runs/%d/charts.json", runs[0].ID))
	var got struct{ Charts []report.Chart }
	if code != 200 || json.Unmarshal([]byte(js), &got) != nil || len(got.Charts) != len(report.RunChartIDs) {
		t.Fatalf("run charts: %d %s", code, js)
	}
	for _, ch := range got.Charts {
		if ch.Empty != "" {
			t.Errorf("run chart %s empty: %s", ch.ID, ch.Empty)
		}
	}
	for _, f := range []string{"run-util.svg", "run-stages.pdf", "run-memory.csv"} {
		if code, _ := e.get(fmt.Sprintf("/runs/%d/charts/%s", runs[0].ID, f)); code != 200 {
			t.Errorf("%s: %d", f, code)
		}
	}
	if code, _ := e.get(fmt.Sprintf("/runs/%d/charts/epoch-vs-mem.svg", runs[0].ID)); code != 404 {
		t.Errorf("experiment chart on a run: %d", code)
	}
	// Retry the failed run: a new attempt is queued and the page goes there.
	resp := e.post(fmt.Sprintf("/runs/%d/retry", runs[0].ID), nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("retry: %d %s", resp.StatusCode, body(t, resp))
	}
	var nid int64
	fmt.Sscanf(resp.Header.Get("Location"), "/runs/%d", &nid)
	nr, err := e.st.Run(context.Background(), nid)
	if err != nil || nr.Attempt != 2 || nr.Status != store.StatusQueued {
		t.Fatalf("retried run: %+v %v", nr, err)
	}
	// The run page's Retry button (htmx) goes to the new attempt too.
	e.play(nr, 1, 1, store.StatusCancelled)
	hreq := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/runs/%d/retry", nid), nil)
	hreq.Header.Set(CSRFHeader, e.token)
	hreq.Header.Set("HX-Request", "true")
	hresp := e.request(hreq)
	var hid int64
	fmt.Sscanf(hresp.Header.Get("HX-Redirect"), "/runs/%d", &hid)
	if hr, err := e.st.Run(context.Background(), hid); err != nil || hr.RetryOf != nid {
		t.Fatalf("htmx retry of run %d: %d, HX-Redirect %q (run %+v, %v)", nid, hresp.StatusCode, hresp.Header.Get("HX-Redirect"), hr, err)
	}
	nid = hid
	// Retrying a queued run is a conflict; cancelling it works once.
	if resp := e.post(fmt.Sprintf("/runs/%d/retry", nid), nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("retry queued: %d", resp.StatusCode)
	}
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/runs/%d/cancel", nid), nil)
	req.Header.Set(CSRFHeader, e.token)
	req.Header.Set("HX-Request", "true")
	if resp := e.request(req); resp.StatusCode != http.StatusNoContent {
		t.Errorf("htmx cancel: %d", resp.StatusCode)
	}
	if resp := e.post(fmt.Sprintf("/runs/%d/cancel", nid), nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("cancel twice: %d", resp.StatusCode)
	}
	for path, want := range map[string]int{"/runs/0": 400, "/runs/nope": 400, "/runs/12345": 404, "/runs/12345/charts.json": 404} {
		if code, _ := e.get(path); code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
	}
}

func TestDatasetsPageAndGenerate(t *testing.T) {
	e := newEnv(t)
	code, page := e.get("/datasets")
	if code != 200 || !strings.Contains(page, `id="dataset-tiny"`) || !strings.Contains(page, "8,192") {
		t.Fatalf("datasets page: %d", code)
	}
	for _, tc := range []struct {
		vals url.Values
		want string
	}{
		{url.Values{"preset": {"cosmic"}, "name": {"a"}}, "unknown preset"},
		{url.Values{"preset": {"tiny"}, "name": {"../up"}}, "name: "},
		{url.Values{"preset": {"tiny"}, "name": {""}}, "give the dataset a name"},
		{url.Values{"preset": {"tiny"}, "name": {"tiny"}}, "exists already"},
		{url.Values{"preset": {"tiny"}, "name": {"ok"}, "seed": {"-3"}}, "seed: "},
	} {
		resp := e.post("/datasets/generate", tc.vals)
		if b := body(t, resp); resp.StatusCode != 422 || !strings.Contains(b, tc.want) {
			t.Errorf("generate %v: %d, want 422 with %q", tc.vals, resp.StatusCode, tc.want)
		}
	}
	resp := e.post("/datasets/generate", url.Values{"preset": {"tiny"}, "name": {"gen2"}, "seed": {"7"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("generate: %d", resp.StatusCode)
	}
	code, frag := e.get("/datasets/jobs")
	if code != 200 || !strings.Contains(frag, "gen2") {
		t.Errorf("jobs fragment: %d %s", code, frag)
	}
	e.srv.jobs.Wait()
	m, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(e.dir), "gen2"))
	if err != nil || m.Source.Generator == nil || m.Source.Generator.Seed != 7 {
		t.Fatalf("generated meta %+v %v", m, err)
	}
	if _, frag = e.get("/datasets/jobs"); strings.Contains(frag, "hx-trigger") {
		t.Error("finished jobs still poll")
	}
	// The poll that sees the job finished carries the dataset table: the
	// new dataset shows without a reload.
	if !strings.Contains(frag, `<tbody id="dataset-rows" hx-swap-oob="innerHTML">`) || !strings.Contains(frag, `id="dataset-gen2"`) {
		t.Errorf("the jobs poll does not refresh the dataset table:\n%s", frag)
	}
}

// TestDatasetHousekeeping: a reload after a failed form is not a 405, a
// dataset can be verified and deleted from the page, and one that queued
// runs use is not deleted.
func TestDatasetHousekeeping(t *testing.T) {
	e := newEnv(t)
	e.login()
	for _, path := range []string{"/datasets/generate", "/datasets/import", "/experiments/preview"} {
		resp := e.request(httptest.NewRequest(http.MethodGet, path, nil))
		if resp.StatusCode != http.StatusSeeOther {
			t.Errorf("GET %s: %d, want 303", path, resp.StatusCode)
		}
	}
	_, page := e.get("/datasets")
	if !strings.Contains(page, `id="verify-tiny"`) || !strings.Contains(page, `id="delete-tiny"`) || !strings.Contains(page, `data-confirm="Delete dataset tiny`) {
		t.Error("the datasets page has no verify or delete buttons (with confirmation)")
	}
	if resp := e.post("/datasets/tiny/verify", nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("verify: %d %s", resp.StatusCode, body(t, resp))
	}
	e.srv.jobs.Wait()
	_, frag := e.get("/datasets/jobs")
	if !strings.Contains(frag, "ok: 8192 nodes") || !strings.Contains(frag, "no NaN") {
		t.Errorf("verify job:\n%s", frag)
	}
	// A corrupt copy fails verification, naming the problem.
	bad := filepath.Join(dataset.DatasetsDir(e.dir), "bad")
	copyDir(t, tinyDir, bad)
	if err := os.Truncate(filepath.Join(bad, "labels.bin"), 10); err != nil {
		t.Fatal(err)
	}
	e.post("/datasets/bad/verify", nil)
	e.srv.jobs.Wait()
	if _, frag = e.get("/datasets/jobs"); !strings.Contains(frag, `data-status="failed"`) || !strings.Contains(frag, "labels") {
		t.Errorf("verify of a truncated dataset:\n%s", frag)
	}
	// In use by a queued run: refused, naming the run.
	x := e.create(tinyGrid)
	resp := e.post("/datasets/tiny/delete", nil)
	if b := body(t, resp); resp.StatusCode != http.StatusConflict || !strings.Contains(b, fmt.Sprintf("experiment %d", x.ID)) {
		t.Errorf("delete of a dataset in use: %d %s", resp.StatusCode, b)
	}
	e.post(fmt.Sprintf("/experiments/%d/cancel", x.ID), nil)
	if resp := e.post("/datasets/tiny/delete", nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", resp.StatusCode, body(t, resp))
	}
	if _, err := os.Stat(filepath.Join(dataset.DatasetsDir(e.dir), "tiny")); !os.IsNotExist(err) {
		t.Errorf("dataset still there: %v", err)
	}
	if resp := e.post("/datasets/tiny/delete", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("delete of a missing dataset: %d", resp.StatusCode)
	}
	if resp := e.post("/datasets/..%2Fx/delete", nil); resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusNotFound {
		t.Errorf("delete with a bad name: %d", resp.StatusCode)
	}
}

func TestImportConfinedToImportFolder(t *testing.T) {
	e := newEnv(t)
	e.login()
	root := filepath.Join(e.dir, "imports")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
	}{
		{"../datasets/tiny", "outside the import folder"},
		{"a/../../x", "outside the import folder"},
		{outside, "outside the import folder"},
		{"escape", "outside the import folder"},
		{"missing", "no such folder"},
		{"file.txt", "not a folder"},
		{"", "give the source folder"},
	} {
		resp := e.post("/datasets/import", url.Values{"kind": {"linqs"}, "path": {tc.path}, "name": {"imp"}})
		if b := body(t, resp); resp.StatusCode != 422 || !strings.Contains(b, tc.want) {
			t.Errorf("import %q: %d, want 422 with %q", tc.path, resp.StatusCode, tc.want)
		}
	}
	if resp := e.post("/datasets/import", url.Values{"kind": {"csv"}, "path": {"x"}, "name": {"imp"}}); resp.StatusCode != 422 {
		t.Errorf("unknown kind: %d", resp.StatusCode)
	}
	// Cora copied into the import folder imports.
	cora := "/work/shared/datasets/cora"
	if _, err := os.Stat(cora); err != nil {
		t.Skip("Cora not present at " + cora)
	}
	copyDir(t, cora, filepath.Join(root, "cora"))
	resp := e.post("/datasets/import", url.Values{"kind": {"linqs"}, "path": {"cora"}, "name": {"cora"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("import cora: %d %s", resp.StatusCode, body(t, resp))
	}
	e.srv.jobs.Wait()
	if j := e.srv.jobs.List()[0]; j.State != JobDone {
		t.Fatalf("cora job: %+v", j)
	}
	m, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(e.dir), "cora"))
	if err != nil || m.Nodes != 2708 {
		t.Errorf("cora meta %+v %v", m, err)
	}
}

func TestStaticFiles(t *testing.T) {
	e := newEnv(t)
	for path, want := range map[string]int{
		"/static/vendor/htmx-2.0.11.min.js": 200, "/static/vendor/echarts-5.6.0.min.js": 200,
		"/static/js/app.js": 200, "/static/css/app.css": 200, "/static/vendor/VERSIONS": 200,
		"/static/../go.mod": 404, "/static/nothing.js": 404, "/static/": 404,
	} {
		resp := e.request(httptest.NewRequest(http.MethodGet, path, nil))
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
		if want == 200 && strings.HasSuffix(path, ".js") && !strings.Contains(resp.Header.Get("Content-Type"), "javascript") {
			t.Errorf("GET %s: Content-Type %q", path, resp.Header.Get("Content-Type"))
		}
	}
	// Revalidation by ETag.
	resp := e.request(httptest.NewRequest(http.MethodGet, "/static/js/app.js", nil))
	req := httptest.NewRequest(http.MethodGet, "/static/js/app.js", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	if resp := e.request(req); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", resp.StatusCode)
	}
}

func TestEventsBadInput(t *testing.T) {
	e := newEnv(t)
	for _, q := range []string{"", "?experiment=x", "?run=-1", "?scope=everything", "?experiment=1&run=2", "?experiment=1&after=soon"} {
		if code, _ := e.get("/events" + q); code != 400 {
			t.Errorf("GET /events%s: %d, want 400", q, code)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/events?experiment=1", nil)
	req.Header.Set("Last-Event-ID", "yesterday")
	if resp := e.request(req); resp.StatusCode != 400 {
		t.Errorf("bad Last-Event-ID: %d", resp.StatusCode)
	}
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	resp := e.request(httptest.NewRequest(http.MethodGet, "/experiments", nil))
	for h, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s = %q", h, got)
		}
	}
	if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Error("no CSP")
	}
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == CSRFCookie {
			c = k
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("CSRF cookie %+v", c)
	}
	_ = time.Second
}

func TestHostGuard(t *testing.T) {
	e := newEnv(t)
	srv, err := New(context.Background(), Config{Store: e.st, Queue: e.mgr, DataDir: e.dir, CSRFKey: []byte("0123456789abcdef"),
		Hosts: []string{"localhost", "127.0.0.1", "::1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	for host, want := range map[string]int{"127.0.0.1:8080": 200, "localhost:8080": 200, "[::1]:8080": 200, "evil.example:8080": 421, "localhost.evil.example": 421} {
		req := httptest.NewRequest(http.MethodGet, "/experiments", nil)
		req.Host = host
		resp, err := srv.App().Test(req, 5000)
		if err != nil || resp.StatusCode != want {
			t.Errorf("Host %s: %v %v, want %d", host, resp.StatusCode, err, want)
		}
	}
}

// TestSlurmRunFacts: a run handed to Slurm shows its job id, node and
// Slurm state on its page, and the runs CSV carries executor, job_id and
// node.
func TestSlurmRunFacts(t *testing.T) {
	e := newEnvWith(t, t.TempDir(), func(o *experiments.Options) {
		o.Executors = []string{store.ExecutorLocal, "slurm"} // serve --executor local,slurm
	})
	e.login()
	x := e.create(`{"dataset":"tiny","executor":"slurm","epochs":1,"axes":{"system":["pyg+"],"mem_limit":["64MiB"]}}`)
	r := e.runs(x.ID)[0]
	if r.Executor != "slurm" {
		t.Fatalf("run executor %q", r.Executor)
	}
	err := e.st.Update(context.Background(), func(tx *store.Tx) error {
		if ok, err := tx.ClaimRun(r.ID); err != nil || !ok {
			return fmt.Errorf("claim: %v %v", ok, err)
		}
		return tx.SetJob(r.ID, "4711", "node17", "RUNNING")
	})
	if err != nil {
		t.Fatal(err)
	}
	code, page := e.get(fmt.Sprintf("/runs/%d", r.ID))
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{"executor", "slurm", "job state", "4711", "node17", "RUNNING"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	code, csvText := e.get(fmt.Sprintf("/experiments/%d/export/runs.csv", x.ID))
	recs, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if code != 200 || err != nil || len(recs) != 2 {
		t.Fatalf("runs.csv: %d %v %q", code, err, csvText)
	}
	col := map[string]string{}
	for i, h := range recs[0] {
		col[h] = recs[1][i]
	}
	if col["executor"] != "slurm" || col["job_id"] != "4711" || col["node"] != "node17" {
		t.Errorf("runs.csv executor/job_id/node: %q %q %q", col["executor"], col["job_id"], col["node"])
	}
}

// TestCancelledIsNotFailed: cancelled runs are shown, charted and exported
// as cancelled (not failed), the experiment says so, and "requeue" starts
// them again.
func TestCancelledIsNotFailed(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	runs := e.runs(x.ID)
	e.play(runs[0], 2, 1, store.StatusDone)
	if resp := e.post(fmt.Sprintf("/experiments/%d/cancel", x.ID), nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", resp.StatusCode)
	}
	code, page := e.get(fmt.Sprintf("/experiments/%d", x.ID))
	if code != 200 {
		t.Fatalf("page: %d", code)
	}
	cancelled := len(runs) - 1
	for _, want := range []string{
		`data-status="cancelled">cancelled</span>`,                             // the experiment's badge
		fmt.Sprintf(`<div class="v" id="count-cancelled">%d</div>`, cancelled), // the summary's count
		`id="requeue-experiment"`, "Requeue cancelled",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("experiment page lacks %q", want)
		}
	}
	if strings.Contains(page, `data-status="finished"`) {
		t.Error("an experiment with cancelled runs reads finished")
	}
	_, list := e.get("/experiments")
	if !strings.Contains(list, fmt.Sprintf(`id="exp-%d" data-state="cancelled"`, x.ID)) || !strings.Contains(list, fmt.Sprintf("%d cancelled", cancelled)) {
		t.Errorf("list does not show the experiment cancelled")
	}
	// Chart cells and their CSV say cancelled.
	_, csvText := e.get(fmt.Sprintf("/experiments/%d/charts/epoch-vs-mem.csv", x.ID))
	if !strings.Contains(csvText, ",cancelled,") || strings.Contains(csvText, ",failed,") {
		t.Errorf("chart CSV:\n%s", csvText)
	}
	_, runsCSV := e.get(fmt.Sprintf("/experiments/%d/export/runs.csv", x.ID))
	if strings.Count(runsCSV, ",cancelled,") != cancelled {
		t.Errorf("runs CSV has %d cancelled rows, want %d:\n%s", strings.Count(runsCSV, ",cancelled,"), cancelled, runsCSV)
	}
	// Requeue: each cancelled run gets a new queued attempt; the done one stays.
	if resp := e.post(fmt.Sprintf("/experiments/%d/retry", x.ID), nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("requeue: %d %s", resp.StatusCode, body(t, resp))
	}
	after := e.runs(x.ID)
	queued := 0
	for _, r := range after {
		switch {
		case r.ID == runs[0].ID && r.Status != store.StatusDone:
			t.Errorf("the done run became %s", r.Status)
		case r.Status == store.StatusQueued && r.Attempt == 2:
			queued++
		}
	}
	if queued != cancelled {
		t.Errorf("%d runs requeued, want %d", queued, cancelled)
	}
	// The buttons that stop runs ask first.
	_, page = e.get(fmt.Sprintf("/experiments/%d", x.ID))
	if !regexp.MustCompile(`hx-confirm="Cancel the \d+ queued and 0 running run\(s\)[^"]*" id="cancel-experiment"`).MatchString(page) ||
		!strings.Contains(page, `hx-confirm="Cancel run `) {
		t.Error("cancel buttons do not ask for confirmation")
	}
}

// TestFilterTagsAndRename: the list filters by run and experiment keys and
// free text, says what is wrong with a query, sorts; an experiment is
// renamed, tagged and annotated from its page, and its queue filtered.
func TestFilterTagsAndRename(t *testing.T) {
	e := newEnv(t)
	e.login()
	a := e.create(tinyGrid)
	b := e.create(strings.Replace(tinyGrid, `"tiny grid"`, `"second grid"`, 1))
	ra := e.runs(a.ID)
	e.play(ra[0], 0, 1, store.StatusOOM) // pyg+ at 64 MiB
	resp := e.post(fmt.Sprintf("/experiments/%d/meta", a.ID), url.Values{"name": {"Fig 9 sweep"}, "tags": {"paper, fig9"}, "notes": {"pyg+ OOMs at 64 MiB"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("meta: %d %s", resp.StatusCode, body(t, resp))
	}
	x, _ := e.st.Experiment(context.Background(), a.ID)
	if x.Name != "Fig 9 sweep" || strings.Join(x.Tags, ",") != "fig9,paper" || x.Notes != "pyg+ OOMs at 64 MiB" {
		t.Errorf("stored meta %q %v %q", x.Name, x.Tags, x.Notes)
	}
	resp = e.post(fmt.Sprintf("/experiments/%d/meta", a.ID), url.Values{"name": {"x"}, "tags": {"bad!tag"}})
	if b := body(t, resp); resp.StatusCode != 422 || !strings.Contains(b, `id="meta-error"`) || !strings.Contains(b, "bad!tag") || !strings.Contains(b, "is not allowed") {
		t.Errorf("bad tag: %d", resp.StatusCode)
	}
	list := func(q string) (int, string) { return e.get("/experiments?" + q) }
	for _, c := range []struct {
		q        string
		has, not []int64
	}{
		{"q=" + url.QueryEscape("outcome=oom"), []int64{a.ID}, []int64{b.ID}},
		{"q=" + url.QueryEscape("tag=paper"), []int64{a.ID}, []int64{b.ID}},
		{"q=" + url.QueryEscape("system=gnndrive limit<128MiB"), []int64{a.ID, b.ID}, nil},
		{"q=" + url.QueryEscape(`"second"`), []int64{b.ID}, []int64{a.ID}},
		{"q=" + url.QueryEscape("OOMs"), []int64{a.ID}, []int64{b.ID}},
		{"q=" + url.QueryEscape("limit>1GiB"), nil, []int64{a.ID, b.ID}},
	} {
		code, page := list(c.q)
		if code != 200 {
			t.Errorf("%s: %d", c.q, code)
		}
		for _, id := range c.has {
			if !strings.Contains(page, fmt.Sprintf(`id="exp-%d"`, id)) {
				t.Errorf("%s: experiment %d missing", c.q, id)
			}
		}
		for _, id := range c.not {
			if strings.Contains(page, fmt.Sprintf(`id="exp-%d"`, id)) {
				t.Errorf("%s: experiment %d shown", c.q, id)
			}
		}
	}
	code, page := list("q=" + url.QueryEscape("limit<12XB"))
	if code != 400 || !strings.Contains(page, `id="filter-error"`) || !strings.Contains(page, "is not a size") {
		t.Errorf("bad filter: %d", code)
	}
	_, page = list("sort=name")
	if strings.Index(page, fmt.Sprintf(`id="exp-%d"`, a.ID)) > strings.Index(page, fmt.Sprintf(`id="exp-%d"`, b.ID)) {
		t.Error("sort=name: Fig 9 sweep after second grid")
	}
	// The queue filter of one experiment.
	_, page = e.get(fmt.Sprintf("/experiments/%d?runs=%s", a.ID, url.QueryEscape("outcome=oom")))
	if !strings.Contains(page, `id="queue-rows-filtered"`) || !strings.Contains(page, fmt.Sprintf(`id="run-%d"`, ra[0].ID)) ||
		strings.Contains(page, fmt.Sprintf(`id="run-%d"`, ra[1].ID)) || !strings.Contains(page, "1 of 8 runs") {
		t.Error("queue filter outcome=oom")
	}
	_, page = e.get(fmt.Sprintf("/experiments/%d?runs=%s", a.ID, url.QueryEscape("tag=x")))
	if !strings.Contains(page, `id="run-filter-error"`) {
		t.Error("an experiment key in the queue filter is not refused")
	}
}

// TestCompareExperiments: two experiments' runs in one comparison, with
// the changed cells flagged and the charts and files served.
func TestCompareExperiments(t *testing.T) {
	e := newEnv(t)
	e.login()
	a := e.create(tinyGrid)
	b := e.create(tinyGrid)
	for _, r := range e.runs(a.ID) {
		e.play(r, 3, 1, store.StatusDone)
	}
	for _, r := range e.runs(b.ID) {
		secs := 1.0
		if r.System == "gnndrive" {
			secs = 3 // three times as slow: flagged
		}
		e.play(r, 3, secs, store.StatusDone)
	}
	code, page := e.get(fmt.Sprintf("/compare?exp=%d&exp=%d", a.ID, b.ID))
	if code != 200 {
		t.Fatalf("compare: %d", code)
	}
	if n := strings.Count(page, "data-slower"); n != 2 { // gnndrive at 64 and 128 MiB
		t.Errorf("%d cells flagged slower, want 2", n)
	}
	if !strings.Contains(page, `data-chart="epoch-vs-mem"`) || !strings.Contains(page, "+200.0%") {
		t.Error("compare page lacks the charts or the change")
	}
	code, js := e.get(fmt.Sprintf("/compare/charts.json?exp=%d,%d", a.ID, b.ID))
	if code != 200 || !strings.Contains(js, fmt.Sprintf("gnndrive · exp #%d", b.ID)) {
		t.Errorf("charts.json: %d", code)
	}
	if code, csvText := e.get(fmt.Sprintf("/compare/charts/epoch-vs-mem.csv?exp=%d&exp=%d&runs=system%%3Dgnndrive", a.ID, b.ID)); code != 200 || strings.Contains(csvText, "pyg+") {
		t.Errorf("picked cells CSV: %d\n%s", code, csvText)
	}
	if code, _ := e.get(fmt.Sprintf("/compare?exp=%d", a.ID)); code != 400 {
		t.Errorf("one experiment: %d, want 400", code)
	}
	if code, page := e.get("/compare?exp=x"); code != 400 || !strings.Contains(page, "not a whole number") {
		t.Errorf("bad id: %d", code)
	}
	_, list := e.get("/experiments")
	if !strings.Contains(list, `form="compare-form"`) || !strings.Contains(list, `id="compare-selected"`) {
		t.Error("the list cannot tick experiments to compare")
	}
}

// TestRefusedMetaEditKeepsTheStoredName: an edit the store refuses (a bad
// tag) comes back with the typed values in the form only; the heading
// shows the stored name, not the unsaved one.
func TestRefusedMetaEditKeepsTheStoredName(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	resp := e.post(fmt.Sprintf("/experiments/%d/meta", x.ID), url.Values{"name": {"unsaved name"}, "notes": {"typed"}, "tags": {"bad#tag"}})
	body, _ := io.ReadAll(resp.Body)
	page := string(body)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, `id="meta-error"`) {
		t.Fatalf("refused edit: %d", resp.StatusCode)
	}
	if !strings.Contains(page, `<h1 id="experiment-name">tiny grid</h1>`) || strings.Contains(page, `<h1 id="experiment-name">unsaved name`) {
		t.Errorf("the heading shows the unsaved name")
	}
	if !strings.Contains(page, `value="unsaved name"`) {
		t.Errorf("the form lost the typed name")
	}
}

// TestRerunExperiment: "Re-run as new" queues a new experiment from the
// same grid file, named after the first.
func TestRerunExperiment(t *testing.T) {
	e := newEnv(t)
	e.login()
	x := e.create(tinyGrid)
	resp := e.post(fmt.Sprintf("/experiments/%d/rerun", x.ID), url.Values{})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("rerun: %d", resp.StatusCode)
	}
	xs, _ := e.st.ListExperiments(context.Background())
	if len(xs) != 2 || xs[0].ID == x.ID || xs[0].Counts.Total != x.Counts.Total || xs[0].Name != fmt.Sprintf("tiny grid (re-run of #%d)", x.ID) {
		t.Fatalf("experiments %+v", xs)
	}
	if !strings.Contains(string(xs[0].Grid), `"pyg+","gnndrive"`) {
		t.Errorf("grid %s", xs[0].Grid)
	}
	if got := rerunName(strings.Repeat("x", 300), 7); len([]rune(got)) != store.MaxNameLen || !strings.HasSuffix(got, "(re-run of #7)") {
		t.Errorf("long name %q", got)
	}
}

// TestRunsAcrossExperiments: /runs lists every experiment's runs, newest
// first, filtered by run keys.
func TestRunsAcrossExperiments(t *testing.T) {
	e := newEnv(t)
	e.login()
	a := e.create(tinyGrid)
	b := e.create(`{"name":"other","dataset":"tiny","system":"ginex","mem_limit":"128MiB","epochs":1}`)
	code, page := e.get("/runs")
	if code != http.StatusOK || strings.Count(page, `<tr data-status="queued">`) != a.Counts.Total+b.Counts.Total {
		t.Fatalf("runs page: %d", code)
	}
	if i, j := strings.Index(page, ">other</a>"), strings.Index(page, ">tiny grid</a>"); i < 0 || j < 0 || i > j {
		t.Errorf("not newest first (other at %d, tiny grid at %d)", i, j)
	}
	code, page = e.get("/runs?q=system%3Dginex")
	if code != http.StatusOK || strings.Count(page, `<tr data-status=`) != 1 {
		t.Errorf("filtered: %d, %d rows", code, strings.Count(page, `<tr data-status=`))
	}
	if code, _ := e.get("/runs?q=nokey%3D1"); code != http.StatusBadRequest {
		t.Errorf("bad filter: %d", code)
	}
}
