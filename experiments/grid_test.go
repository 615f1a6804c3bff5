package experiments

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/store"
)

func TestParseGridAndCells(t *testing.T) {
	g, err := ParseGrid([]byte(`{"name":"x","dataset":"tiny","model":"sage","epochs":1,
		"axes":{"system":["fake","fake2","fake3"],"mem_limit":["256MiB","512MiB","1GiB"],"repeat":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if g.Count() != 18 || g.Name != "x" || g.Dataset != "tiny" {
		t.Fatalf("count %d name %q dataset %q", g.Count(), g.Name, g.Dataset)
	}
	cells := g.Cells()
	if len(cells) != 18 {
		t.Fatalf("%d cells", len(cells))
	}
	// repeat outermost, mem_limit innermost
	if cells[0].Repeat != 0 || cells[9].Repeat != 1 || cells[1].MemLimit != "512MiB" || cells[3].System != "fake2" || cells[0].Model != "sage" {
		t.Fatalf("order: %+v %+v %+v", cells[0], cells[1], cells[3])
	}
	for i, c := range cells {
		if c.Seq != i {
			t.Fatalf("seq %d at %d", c.Seq, i)
		}
	}
	g2, err := ParseGrid([]byte(`{"dataset":"tiny","system":"fake","batch":64,"fanout":"5,5","axes":{"fanout":null}}`))
	if err == nil {
		t.Fatalf("null axis accepted: %+v", g2)
	}
	g3, err := ParseGrid([]byte(`{"dataset":"tiny","system":"fake","batch_size":64,"mem_limit":268435456,"axes":{"fanout":[[5,5],"10,5"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := g3.Cells()
	if len(c) != 2 || c[1].Fanout[0] != 10 || c[0].BatchSize != 64 || c[0].MemLimit != "268435456" || c[0].System != "fake" {
		t.Fatalf("cells %+v", c)
	}
}

func TestParseGridRejects(t *testing.T) {
	for _, tc := range []struct {
		grid, field string
	}{
		{`[1,2]`, "not a JSON object"},
		{`{"axes":{}}`, "dataset"},
		{`{"dataset":"tiny","axes":{"colour":["red"]}}`, "axes.colour"},
		{`{"dataset":"tiny","axes":{"system":[]}}`, "axes.system"},
		{`{"dataset":"tiny","axes":{"system":["a",""]}}`, "axes.system[1]"},
		{`{"dataset":"tiny","axes":{"mem_limit":[true]}}`, "axes.mem_limit[0]"},
		{`{"dataset":"tiny","axes":{"repeat":0}}`, "axes.repeat"},
		{`{"dataset":"tiny","axes":{"fanout":[[]]}}`, "axes.fanout[0]"},
		{`{"dataset":"tiny","system":"fake","axes":{"system":["fake"]}}`, "system"},
		{`{"dataset":"tiny","mem_limit_bytes":5}`, "mem_limit_bytes"},
		{`{"dataset":"tiny","axes":{"repeat":100,"system":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q","r","s","t","u","v","w","x","y","z","aa","bb","cc","dd","ee","ff","gg","hh","ii","jj","kk","ll","mm","nn","oo","pp","qq","rr","ss","tt","uu","vv","ww","xx","yy","zz","a1","b1","c1","d1","e1","f1","g1","h1","i1","j1","k1","l1","m1","n1","o1","p1","q1","r1","s1","t1","u1","v1","w1","x1","y1","z1","a2","b2","c2","d2","e2","f2","g2","h2","i2","j2","k2","l2","m2","n2","o2","p2","q2","r2","s2","t2","u2","v2","w2","x2","y2"]}}`, "axes"},
	} {
		_, err := ParseGrid([]byte(tc.grid))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("grid %s: err %v, want ErrInvalid naming %q", tc.grid, err, tc.field)
		}
	}
}

// TestCreateRejectsBadInput: every kind of bad input is rejected at
// creation with a message naming the field, and nothing is stored.
func TestCreateRejectsBadInput(t *testing.T) {
	h := newHarness(t, nil)
	// An imported dataset, which cannot be regenerated at another dim.
	if _, err := dataset.ImportLINQS(context.Background(), dataset.DatasetsDir(h.dataDir), "mini", filepath.Join("testdata", "linqs"),
		dataset.ImportOptions{Split: "random"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, grid string
		want       []string
	}{
		{"unknown variant", `{"dataset":"tiny","axes":{"system":["fake","nope"]}}`, []string{"axes.system[1]", `unknown variant "nope"`, "fake"}},
		{"unknown variant top", `{"dataset":"tiny","system":"nope"}`, []string{"system:", `"nope"`}},
		{"negative limit", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["1GiB","-5MiB"]}}`, []string{"axes.mem_limit[1]", "negative"}},
		{"zero limit", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["0"]}}`, []string{"axes.mem_limit[0]", "zero"}},
		{"zero number limit", `{"dataset":"tiny","system":"fake","mem_limit":0}`, []string{"mem_limit", "zero"}},
		{"malformed limit", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["12 parsecs"]}}`, []string{"axes.mem_limit[0]", "unit"}},
		{"limit below start", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["1GiB","4MiB"]}}`, []string{"axes.mem_limit[1]", "4MiB is below", "fake needs to start"}},
		{"limit below the variant's floor", `{"dataset":"tiny","system":"fake-floor","axes":{"mem_limit":["1GiB","256MiB"]}}`, []string{"axes.mem_limit[1]", "256MiB is below the 300MiB", "fake-floor needs to start"}},
		{"dataset missing", `{"dataset":"nosuch","system":"fake"}`, []string{"dataset:", `"nosuch" not found`}},
		{"bad dataset name", `{"dataset":"../etc","system":"fake"}`, []string{"dataset:"}},
		{"feature_dim of imported", `{"dataset":"mini","system":"fake","axes":{"feature_dim":[8]}}`, []string{"axes.feature_dim[0]", "imported"}},
		{"feature_dim zero", `{"dataset":"tiny","system":"fake","axes":{"feature_dim":[0]}}`, []string{"axes.feature_dim[0]", "positive"}},
		{"batch negative", `{"dataset":"tiny","system":"fake","axes":{"batch_size":[-1]}}`, []string{"axes.batch_size[0]", "positive"}},
		{"unknown config field", `{"dataset":"tiny","system":"fake","hiden":5}`, []string{"hiden", "not a field"}},
		{"engine validation", `{"dataset":"tiny","system":"fake","lr":-1}`, []string{"lr", "run 0"}},
		{"bad model", `{"dataset":"tiny","system":"fake","axes":{"model":["sage","mlp"]}}`, []string{"model", "mlp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.m.Create(context.Background(), []byte(tc.grid))
			if err == nil || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	list, err := h.st.ListExperiments(context.Background())
	if err != nil || len(list) != 0 {
		t.Fatalf("rejected grids stored experiments: %v %v", list, err)
	}
}

func TestCreateExpandsRuns(t *testing.T) {
	h := newHarness(t, nil)
	e := h.create(`{"name":"g","dataset":"tiny","model":"sage","epochs":1,"hidden":16,
		"axes":{"system":["fake","fake2"],"mem_limit":["256MiB","5000%","none"],"feature_dim":[32,16],"repeat":2}}`)
	if e.Counts.Total != 24 || e.Counts.Queued != 24 {
		t.Fatalf("counts %+v", e.Counts)
	}
	runs, err := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range runs {
		seen[r.Dataset]++
		if r.FeatureDim != 32 && r.FeatureDim != 16 {
			t.Fatalf("run %d feature_dim %d", r.ID, r.FeatureDim)
		}
		if r.Model != "sage" || r.BatchSize != 1000 || r.Fanout != "10,10,10" {
			t.Fatalf("engine defaults not filled: %+v", r)
		}
		if !strings.Contains(string(r.Config), `"hidden":16`) || !strings.Contains(string(r.Config), `"data_dir":"`) {
			t.Fatalf("config %s", r.Config)
		}
	}
	if seen["tiny"] != 12 || seen["tiny-d16"] != 12 {
		t.Fatalf("datasets %v", seen)
	}
	// 50% of tiny's features (8192 x 32 x 4 B = 1 MiB) is 512 KiB, below
	// the start floor: a percentage limit is resolved and checked per dataset.
	_, err = h.m.Create(context.Background(), []byte(`{"dataset":"tiny","system":"fake","axes":{"mem_limit":["50%"]}}`))
	if err == nil || !strings.Contains(err.Error(), "axes.mem_limit[0]") {
		t.Fatalf("50%% of 1 MiB accepted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataset.DatasetsDir(h.dataDir), "tiny-d16")); !os.IsNotExist(err) {
		t.Fatalf("tiny-d16 generated at creation (it is made when its run starts): %v", err)
	}
}
