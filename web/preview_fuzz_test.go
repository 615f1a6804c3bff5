package web

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/web/views"
)

// previewSeeds are form bodies as the browser sends them: the form's
// first grid, generate from every preset with every variant ticked (the
// floors of a dataset that does not exist yet), and odd values.
func previewSeeds() []string {
	var out []string
	base := url.Values{"name": {"x"}, "dataset_mode": {"existing"}, "dataset": {"tiny"}, "variants": {"pyg+", "ginex"},
		"mem_limits": {"12MiB, 50%, none"}, "batches": {"1024"}, "model": {"sage"}, "fanouts": {"10,5"}, "epochs": {"2"}, "repeats": {"1"}}
	out = append(out, base.Encode())
	for _, p := range dataset.PresetNames() {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		v.Set("dataset_mode", "generate")
		v.Set("preset", p)
		v.Set("new_dataset", "n-"+p)
		v.Set("skip_infeasible", "1")
		v["variants"] = Variants()
		out = append(out, v.Encode())
	}
	out = append(out,
		"dataset_mode=generate&preset=tiny&new_dataset=g&variants=ginex&mem_limits=1%25&batches=1&fanouts=-1,-1&epochs=1&repeats=1",
		"dataset_mode=existing&dataset=tiny&variants=gids&mem_limits=none&batches=100000000&fanouts=1000,1000,1000&epochs=1&repeats=1&frontier=1",
		"dataset_mode=existing&dataset=tiny&variants=diskgnn&mem_limits=&batches=&fanouts=&epochs=&repeats=&dims=1,4096",
		"a=%zz&&=&variants")
	return out
}

// FuzzPreview: whatever body POST /experiments/preview gets is answered:
// a body that is no form with an error naming the form, any other with a
// preview (a valid grid's run count, or its problems in words), never a
// panic. It runs the preview's whole path (previewOf: decode, the form's
// checks with the real queue's Check on a data directory holding the
// tiny dataset, the cells that cannot start by each variant's floor, the
// estimate, the limits offered), which is also what the submit checks
// before it creates or starts generating a preset's dataset.
func FuzzPreview(f *testing.F) {
	for _, s := range previewSeeds() {
		f.Add(false, []byte(s))
	}
	_, mp := multipartBody(f, [][2]string{{"dataset_mode", "generate"}, {"preset", "tiny"}, {"new_dataset", "m"}, {"variants", "ginex"}, {"mem_limits", "64MiB"}, {"batches", "512"}, {"fanouts", "5"}, {"epochs", "1"}, {"repeats", "1"}})
	f.Add(true, mp)
	e := newEnv(f)
	h := &ExperimentsHandler{Store: e.st, Queue: e.mgr, DataDir: e.dir}
	f.Fuzz(func(t *testing.T, multi bool, body []byte) {
		ct := "application/x-www-form-urlencoded"
		if multi {
			ct = "multipart/form-data; boundary=" + boundaryOf(body)
		}
		pf, err := h.previewOf(context.Background(), ct, body)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "form: ") {
				t.Fatalf("error without the form: prefix: %v", err)
			}
			return
		}
		checkPreview(t, pf)
	})
}

// checkPreview holds a preview to what it promises: a valid grid has
// runs, an invalid one says what to fix, each cell marked as unable to
// start says why.
func checkPreview(t *testing.T, pf views.ExperimentForm) {
	t.Helper()
	pv := pf.Preview
	if len(pf.Errors) == 0 && (pv.Problem != "" || pv.Runs <= 0) {
		t.Fatalf("a form without errors previews %d runs, problem %q", pv.Runs, pv.Problem)
	}
	if len(pf.Errors) > 0 && pv.Problem == "" {
		t.Fatalf("errors %v and no problem in the preview", pf.Errors)
	}
	for field, msg := range pf.Errors {
		if msg == "" {
			t.Fatalf("field %q refused without a reason", field)
		}
	}
	if pv.Cells != nil {
		for _, r := range pv.Cells.Rows {
			for _, c := range r.Cells {
				if c.Impossible && !strings.HasPrefix(c.Title, "cannot start: ") {
					t.Fatalf("%s: a cell marked as unable to start without the reason: %q", r.Variant, c.Title)
				}
			}
		}
	}
}

// FuzzExampleStart: an example's grid file (the data directory's
// examples/, written by outcore serve and edited by researchers) is
// previewed on the experiment list and its Start page (run count, refused
// cells, estimate, or the dataset to generate first) without a panic: a
// file that is no grid is refused naming the example.
func FuzzExampleStart(f *testing.F) {
	f.Add([]byte(`{"name":"e","dataset":"tiny","epochs":2,"skip_infeasible":true,"axes":{"system":["pyg+","ginex","gids"],"mem_limit":["12MiB","50%","none"],"batch_size":[1024],"fanout":["10,5"],"repeat":2}}`))
	f.Add([]byte(`{"name":"g","dataset":"small","axes":{"system":["ginex","diskgnn"],"mem_limit":["25%"]}}`))
	f.Add([]byte(`{"dataset":"tiny","system":"helios","mem_limit":"1%","batch_size":1,"fanout":"-1"}`))
	f.Add([]byte(`{"dataset":"nope","axes":{"system":["pyg+"]}}`))
	f.Add([]byte(`not json`))
	e := newEnv(f)
	h := &ExperimentsHandler{Store: e.st, Queue: e.mgr, DataDir: e.dir}
	if err := os.MkdirAll(ExamplesDir(e.dir), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		if err := os.WriteFile(filepath.Join(ExamplesDir(e.dir), "fz.json"), file, 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := h.exampleGrid("fz.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fz.json") {
				t.Fatalf("a bad example refused without its name: %v", err)
			}
			return
		}
		ex := h.annotateExample(context.Background(), views.Example{File: "fz.json", Name: g.Name, Dataset: g.Dataset, Runs: g.Count()}, g)
		if ex.Problem == "" && ex.Generate == "" && ex.Refused > ex.Runs {
			t.Fatalf("%d of %d runs refused", ex.Refused, ex.Runs)
		}
		_ = h.Queue.Refusals(g, nil)
	})
}
