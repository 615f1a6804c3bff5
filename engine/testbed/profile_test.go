package testbed

import (
	"strings"
	"testing"
	"testing/fstest"
)

// Every testbed this build carries loads, names itself after its file,
// and this-host is among them.
func TestShippedProfiles(t *testing.T) {
	names := Names()
	papers := 0
	for _, n := range names {
		p, err := Load(n)
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind == KindPaper {
			papers++
			if p.Dataset.FeatureBytes.V() < p.Dataset.Nodes.V()*p.Dataset.FeatureDim.V()*featureValueBytes*0.95 {
				t.Errorf("%s: feature bytes %g below nodes × dim × 4 = %g", n, p.Dataset.FeatureBytes.V(), p.Dataset.Nodes.V()*p.Dataset.FeatureDim.V()*4)
			}
		}
	}
	if papers != 5 {
		t.Errorf("%d paper testbeds (%v), want the five papers'", papers, names)
	}
	if p, err := Load(ThisHost); err != nil || p.Kind != KindThisHost {
		t.Errorf("this-host: %v, %v", p, err)
	}
	if _, err := Load("no-such-host"); err == nil || !strings.Contains(err.Error(), "gnndrive-icpp24") {
		t.Errorf("unknown testbed: %v, want an error listing the testbeds", err)
	}
}

func TestForPaper(t *testing.T) {
	for paper, want := range map[string]string{
		"GNNDrive (ICPP'24)":         "gnndrive-icpp24",
		"Ginex (VLDB'22)":            "ginex-vldb22",
		"DiskGNN (arXiv 2405.05231)": "diskgnn-arxiv24",
		"GIDS Fig. 10: CPU buffer":   "gids-vldb24",
		"Helios Fig. 11: pipeline":   "helios-preprint",
	} {
		p, err := ForPaper(paper)
		if err != nil || p.Name != want {
			t.Errorf("%q: %v, %v; want %s", paper, p, err, want)
		}
	}
	if _, err := ForPaper("All variants on medium"); err == nil {
		t.Error("a study of no paper: want an error")
	}
}

// A valid paper profile to break in TestParseRefuses.
const validPaper = `{"format": 1, "name": "x-test", "kind": "paper", "paper": "X (Test'01)", "setup": "§5",
 "gpu": {"model": {"value": "G", "source": "Table 1"}, "memory_bytes": {"value": 1e9, "source": "Table 1"},
   "memory_bytes_per_s": {"value": null, "missing": "not published anywhere"}, "fp32_flops": {"value": 1e12, "source": "sheet", "url": "https://example.org"},
   "pcie_gen": {"value": 4, "source": "Table 1"}, "accel_profile": "g-from-h100-pyg"},
 "host": {"cpu": {"value": "C", "source": "Table 1"}, "cores": {"value": 8, "source": "§5"}, "threads": {"value": 16, "source": "§5"},
   "memory_bytes": {"value": 1e10, "source": "§5"}, "memory_limit_bytes": {"value": 1e10, "source": "§5"}},
 "ssd": {"model": {"value": "S", "source": "§5"}, "count": {"value": 1, "source": "§5"}, "rand_read_iops": {"value": 1e5, "source": "§5"},
   "seq_read_bytes_per_s": {"value": 1e9, "source": "§5"}},
 "dataset": {"name": {"value": "D", "source": "§5"}, "nodes": {"value": 1e6, "source": "§5"}, "feature_dim": {"value": 128, "source": "§5"},
   "feature_bytes": {"value": 5.12e8, "source": "§5"}},
 "run": {"batch": {"value": 1000, "source": "§5"}, "fanout": {"value": [10, 10], "source": "§5"},
   "device_budget_bytes": {"value": null, "missing": "the whole GPU is used"}, "epochs": {"value": 10, "source": "§5"}}}`

func TestParseRefuses(t *testing.T) {
	if _, err := Parse([]byte(validPaper)); err != nil {
		t.Fatalf("the valid profile: %v", err)
	}
	for _, c := range []struct{ old, new, want string }{
		{`"format": 1`, `"format": 2`, "format: 2"},
		{`"name": "x-test"`, `"name": "X Test"`, "lower-case"},
		{`"kind": "paper"`, `"kind": "cluster"`, `kind: "cluster"`},
		{`"setup": "§5"`, `"setup": ""`, "setup: missing"},
		{`"gpu": {"model"`, `"gpux": 1, "gpu": {"model"`, "unknown field"},
		{`"memory_bytes": {"value": 1e9, "source": "Table 1"}`, `"memory_bytes": {"value": 1e9}`, "gpu.memory_bytes: no source"},
		{`"memory_bytes": {"value": 1e9, "source": "Table 1"}`, `"memory_bytes": {"value": null, "missing": "not published anywhere"}`, "gpu.memory_bytes: null, but the mapping needs it"},
		{`{"value": null, "missing": "not published anywhere"}`, `{"value": null}`, "gpu.memory_bytes_per_s: null without the reason"},
		{`{"value": null, "missing": "not published anywhere"}`, `{"value": 5, "source": "x sheet", "missing": "not published anywhere"}`, "has a value and a reason"},
		{`"cores": {"value": 8, "source": "§5"}`, `"cores": {"value": -8, "source": "§5"}`, "host.cores: value -8"},
		{`"pcie_gen": {"value": 4, "source": "Table 1"}`, `"pcie_gen": {"value": 4.5, "source": "Table 1"}`, "gpu.pcie_gen"},
		{`"fanout": {"value": [10, 10], "source": "§5"}`, `"fanout": {"value": []}`, "run.fanout: null without the reason"},
		{`"fanout": {"value": [10, 10], "source": "§5"}`, `"fanout": {"value": [0], "source": "§5"}`, "run.fanout: 0"},
		{`"accel_profile": "g-from-h100-pyg"`, `"accel_profile": ""`, "gpu.accel_profile"},
		{`"ssd": {`, `"ssdx": {`, "unknown field"},
		{`"model": {"value": "G", "source": "Table 1"}`, `"model": {"value": "", "source": "Table 1"}`, "gpu.model: no value"},
	} {
		if !strings.Contains(validPaper, c.old) {
			t.Fatalf("case %q: not in the valid profile", c.old)
		}
		_, err := Parse([]byte(strings.Replace(validPaper, c.old, c.new, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: err %v, want %q", c.old, c.new, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"format": 1, "name": "this-host", "kind": "this-host", "note": "x"}`, "note: missing"},
		{`{"format": 1, "name": "this-host", "kind": "this-host", "note": "this host as it is, nothing emulated", "paper": "X"}`, "emulates nothing"},
		{`{"format": 1, "name": "a", "kind": "paper", "paper": "A", "setup": "§5"}`, "missing"},
		{`{"format": 1} {}`, "data after"},
		{`[`, "testbed profile"},
	} {
		if _, err := Parse([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.in, err, c.want)
		}
	}
}

// FuzzParse: the parser never panics, and what it accepts checks again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(validPaper))
	for _, n := range Names() {
		b, _ := files.ReadFile("profiles/" + n + ".json")
		f.Add(b)
	}
	f.Add([]byte(`{"format":1,"name":"a","kind":"this-host","note":"nothing emulated on this host"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			return
		}
		if err := p.check(); err != nil {
			t.Fatalf("accepted a profile its own check refuses: %v", err)
		}
		if p.Kind == KindPaper {
			for _, nf := range p.figures() {
				if nf.f.Known() && !(nf.f.V() > 0) {
					t.Fatalf("%s: accepted %v", nf.path, nf.f.V())
				}
			}
		}
	})
}

func TestBatchRows(t *testing.T) {
	for _, c := range []struct {
		b     BatchShape
		nodes int64
		want  int64
	}{
		{BatchShape{1000, []int{10, 10, 10}}, 1 << 30, 1_111_000},
		{BatchShape{1000, []int{10, 10, 10}}, 2_097_152, 1_111_000},
		{BatchShape{1000, []int{10, 10, 10}}, 400_000, 400_000}, // capped at every node
		{BatchShape{8000, []int{25, 10}}, 1 << 30, 8000 * (1 + 25 + 250)},
		{BatchShape{1024, []int{10, 15, 20}}, 1 << 30, 1024 * (1 + 10 + 150 + 3000)},
		{BatchShape{1, []int{1}}, 10, 2},
	} {
		if got := BatchRows(c.b, c.nodes); got != c.want {
			t.Errorf("%+v of %d nodes: %d rows, want %d", c.b, c.nodes, got, c.want)
		}
	}
}

func TestGoverningUnits(t *testing.T) {
	for sys, want := range map[string][2]Unit{
		"gnndrive":                       {UnitShare, UnitBatches},
		"gnndrive:feature_buffer=device": {UnitShare, UnitBatches},
		"gids":                           {UnitShare, UnitShare},
		"helios":                         {UnitShare, UnitShare},
		"diskgnn":                        {UnitShare, UnitShare},
		"reference":                      {UnitShare, UnitBatches},
	} {
		if h, d := GoverningUnits(sys); h != want[0] || d != want[1] {
			t.Errorf("%s: %s, %s; want %v", sys, h, d, want)
		}
	}
	if !ThreadPerRequest("ginex") || !ThreadPerRequest("pyg+") || ThreadPerRequest("gnndrive") {
		t.Error("thread-per-request systems are Ginex and PyG+")
	}
}

// A broken or misnamed file's error names the file and the field.
func TestLoadNamesFileAndField(t *testing.T) {
	fsys := fstest.MapFS{
		"profiles/x-test.json":   {Data: []byte(strings.Replace(validPaper, `"cores": {"value": 8, "source": "§5"}`, `"cores": {"value": 8}`, 1))},
		"profiles/misnamed.json": {Data: []byte(validPaper)},
	}
	_, err := loadFrom(fsys, "x-test")
	if err == nil || !strings.Contains(err.Error(), "engine/testbed/profiles/x-test.json") || !strings.Contains(err.Error(), "host.cores: no source") {
		t.Errorf("broken file: %v", err)
	}
	if _, err := loadFrom(fsys, "misnamed"); err == nil || !strings.Contains(err.Error(), `names itself "x-test"`) {
		t.Errorf("misnamed file: %v", err)
	}
}
