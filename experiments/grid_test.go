package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/experiments/grid"
	"outcore/store"
)

func TestParseGridAndCells(t *testing.T) {
	g, err := grid.ParseGrid([]byte(`{"name":"x","dataset":"tiny","model":"sage","epochs":1,
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
	g2, err := grid.ParseGrid([]byte(`{"dataset":"tiny","system":"fake","batch":64,"fanout":"5,5","axes":{"fanout":null}}`))
	if err == nil {
		t.Fatalf("null axis accepted: %+v", g2)
	}
	g3, err := grid.ParseGrid([]byte(`{"dataset":"tiny","system":"fake","batch_size":64,"mem_limit":268435456,"axes":{"fanout":[[5,5],"10,5"]}}`))
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
		{`null`, "not a JSON object"},
		{`{"axes":{}}`, "dataset: missing"},
		{`{"dataset":"tiny","axes":{"colour":["red"]}}`, `axes: "colour" is not an axis`},
		{`{"dataset":"tiny","axes":{"system":[]}}`, "variants: want a non-empty list"},
		{`{"dataset":"tiny","axes":{"system":["a",""]}}`, "variants: an empty name"},
		{`{"dataset":"tiny","axes":{"mem_limit":[true]}}`, "memory limits: true is not a size"},
		{`{"dataset":"tiny","axes":{"repeat":0}}`, "repeats: 0 is not a whole number from 1 to 100"},
		{`{"dataset":"tiny","axes":{"fanout":[[]]}}`, "fanouts: an empty fanout"},
		{`{"dataset":"tiny","system":"fake","axes":{"system":["fake"]}}`, "variants: given both"},
		{`{"dataset":"tiny","mem_limit_bytes":5}`, "mem_limit_bytes: set by the runner"},
		{`{"dataset":"tiny","axes":{"repeat":100,"system":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q","r","s","t","u","v","w","x","y","z","aa","bb","cc","dd","ee","ff"],"batch_size":[1,2,3,4]}}`, "the grid makes 12800 runs; at most 10000"},
	} {
		_, err := grid.ParseGrid([]byte(tc.grid))
		if err == nil || !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("grid %s: err %v, want ErrInvalid saying %q", tc.grid, err, tc.field)
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
		{"unknown variant", `{"dataset":"tiny","axes":{"system":["fake","nope"]}}`, []string{"variants:", `"nope" is not a variant`, "fake"}},
		{"unknown variant top", `{"dataset":"tiny","system":"nope"}`, []string{"variants:", `"nope"`}},
		{"negative limit", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["1GiB","-5MiB"]}}`, []string{"memory limits:", "negative"}},
		{"zero limit", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["0"]}}`, []string{"memory limits:", "zero"}},
		{"zero number limit", `{"dataset":"tiny","system":"fake","mem_limit":0}`, []string{"memory limits:", "zero"}},
		{"malformed limit", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["12 parsecs"]}}`, []string{"memory limits:", "unit"}},
		{"huge limit", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["1e30"]}}`, []string{"memory limits:", "above the largest memory limit, 1 PiB"}},
		{"limit below start", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["1GiB","2MiB"]}}`, []string{"memory limits:", `"2MiB" is 2MiB, below`, "fake needs to start"}},
		{"limit below 1 MiB", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["1KiB"]}}`, []string{"memory limits:", "below 1MiB"}},
		{"limit below the variant's floor", `{"dataset":"tiny","system":"fake-floor","axes":{"mem_limit":["1GiB","256MiB"]}}`, []string{"memory limits:", `"256MiB" is 256MiB, below the 300MiB`, "fake-floor needs to start"}},
		{"same limit twice", `{"dataset":"tiny","system":"fake","axes":{"mem_limit":["64MiB","67108864"]}}`, []string{"memory limits:", "are the same limit"}},
		{"limit below the sampled floor", `{"dataset":"tiny","system":"fake-probe","axes":{"mem_limit":["1GiB","20MiB"]}}`, []string{"memory limits:", `"20MiB" is 20MiB, below`, "fake-probe needs to start"}},
		{"dataset missing", `{"dataset":"nosuch","system":"fake"}`, []string{"dataset:", `"nosuch" not found`}},
		{"bad dataset name", `{"dataset":"../etc","system":"fake"}`, []string{"dataset:"}},
		{"feature_dim of imported", `{"dataset":"mini","system":"fake","axes":{"feature_dim":[8]}}`, []string{"feature dimensions:", "imported"}},
		{"mem_share_of unknown", `{"dataset":"tiny","system":"fake","mem_share_of":"dataset","axes":{"feature_dim":[8]}}`, []string{"mem_share_of:", `want "run"`, `or "base"`}},
		{"mem_share_of not a string", `{"dataset":"tiny","system":"fake","mem_share_of":true}`, []string{"mem_share_of:"}},
		{"feature_dim zero", `{"dataset":"tiny","system":"fake","axes":{"feature_dim":[0]}}`, []string{"feature dimensions:", "from 1 to 65536"}},
		{"batch negative", `{"dataset":"tiny","system":"fake","axes":{"batch_size":[-1]}}`, []string{"batch sizes:", "from 1 to"}},
		{"unknown config field", `{"dataset":"tiny","system":"fake","hiden":5}`, []string{"hiden: not a setting of a run", "hidden"}},
		{"range", `{"dataset":"tiny","system":"fake","lr":-1}`, []string{"lr: -1 is not a number from 0 (excluded) to 10"}},
		{"engine validation", `{"dataset":"tiny","system":"fake","model":"gat","hidden":10,"heads":3}`, []string{"heads", "run 0"}},
		{"bad model", `{"dataset":"tiny","system":"fake","axes":{"model":["sage","mlp"]}}`, []string{"models:", "mlp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.m.Create(context.Background(), []byte(tc.grid))
			if err == nil || !errors.Is(err, grid.ErrInvalid) {
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

// TestMemShareOfBase: a share limit is of each run's own dataset by
// default, so under a feature_dim axis it moves with the dimension; with
// "mem_share_of": "base" every dimension runs under the same bytes, the
// share of the grid's dataset, and the run's configuration carries those
// bytes (not the share, which the run would resolve against its own
// features).
func TestMemShareOfBase(t *testing.T) {
	h := newHarness(t, nil)
	const tinyFeatures = 8192 * 32 * 4 // tiny: 8192 nodes, 32 dims, float32
	for _, tc := range []struct {
		of        string
		want16    int64
		wantShare bool // the run's config keeps "5000%"
	}{
		{"", 50 * tinyFeatures / 2, true},
		{`"mem_share_of":"run",`, 50 * tinyFeatures / 2, true},
		{`"mem_share_of":"base",`, 50 * tinyFeatures, false},
	} {
		e := h.create(`{"dataset":"tiny","system":"fake","epochs":1,` + tc.of + `"axes":{"feature_dim":[32,16],"mem_limit":["5000%"]}}`)
		runs, err := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 {
			t.Fatalf("%s: %d runs", tc.of, len(runs))
		}
		for _, r := range runs {
			want := int64(50 * tinyFeatures)
			if r.FeatureDim == 16 {
				want = tc.want16
			}
			if r.MemLimitBytes != want {
				t.Errorf("%s: run on %s (%d dims): limit %d bytes, want %d", tc.of, r.Dataset, r.FeatureDim, r.MemLimitBytes, want)
			}
			var cfg struct {
				MemLimit      string `json:"mem_limit"`
				MemLimitBytes int64  `json:"mem_limit_bytes"`
			}
			if err := json.Unmarshal(r.Config, &cfg); err != nil {
				t.Fatal(err)
			}
			if cfg.MemLimitBytes != want || (cfg.MemLimit == "5000%") != tc.wantShare {
				t.Errorf("%s: run on %s: config mem_limit %q, mem_limit_bytes %d (want %d)", tc.of, r.Dataset, cfg.MemLimit, cfg.MemLimitBytes, want)
			}
		}
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
	if err == nil || !strings.Contains(err.Error(), "memory limits:") {
		t.Fatalf("50%% of 1 MiB accepted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataset.DatasetsDir(h.dataDir), "tiny-d16")); !os.IsNotExist(err) {
		t.Fatalf("tiny-d16 generated at creation (it is made when its run starts): %v", err)
	}
}
