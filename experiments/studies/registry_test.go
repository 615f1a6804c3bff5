package studies

import (
	"encoding/json"
	"strings"
	"testing"

	"outcore/engine/dataset"
	_ "outcore/engine/system/all"
	"outcore/experiments/grid"
)

// TestRegistry: every embedded study file parses; every grid is one the
// queue accepts, each run of it a valid configuration of a registered
// variant with options the variant declares; a reproduction study's
// experiment name leads back to it, an example's does not.
func TestRegistry(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatal(err)
	}
	if len(Papers()) == 0 || len(Examples()) == 0 || len(Papers())+len(Examples()) != len(All()) {
		t.Fatalf("%d paper studies, %d examples, %d in all", len(Papers()), len(Examples()), len(All()))
	}
	for _, s := range All() {
		b, err := s.Grid("")
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		g, err := grid.ParseGrid(b)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		// the examples run on the dashboard's default dataset or a preset
		// (variants-medium on medium), the paper studies on a preset
		if _, perr := dataset.Preset(g.Dataset); perr != nil && (s.IsPaper() || g.Dataset != "default") {
			t.Errorf("%s: dataset %q", s.ID, g.Dataset)
		}
		if g.Name == "" || g.Name != s.ExperimentName() {
			t.Errorf("%s: grid name %q, experiment name %q", s.ID, g.Name, s.ExperimentName())
		}
		for _, c := range g.Cells() {
			if _, err := g.CellConfig(c); err != nil {
				t.Fatalf("%s, run %d: %v", s.ID, c.Seq, err)
			}
		}
		got, ok := ByExperiment(s.ExperimentName())
		if ok != s.IsPaper() || (ok && got.ID != s.ID) {
			t.Errorf("%s: the experiment name %q leads to %q (%v)", s.ID, s.ExperimentName(), got.ID, ok)
		}
		if !s.IsPaper() {
			continue
		}
		// on another dataset: the same grid there, named for the study
		b, err = s.Grid("small")
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || m["dataset"] != "small" || m["name"] != s.ExperimentName() {
			t.Errorf("%s: grid %s", s.ID, b)
		}
		if len(s.Differ) == 0 || s.Metric == "" || strings.Contains(strings.Join(s.Differ, "|"), "$") {
			t.Errorf("%s: differ %q, metric %q", s.ID, s.Differ, s.Metric)
		}
	}
	if _, ok := ByExperiment("limits on tiny"); ok {
		t.Error("an ordinary experiment name matched a study")
	}
	if _, ok := Lookup("no-such-study"); ok {
		t.Error("an unknown id found a study")
	}
}

// An example's file as `outcore serve` writes it is its grid, readable,
// with the same content.
func TestGridFile(t *testing.T) {
	for _, s := range Examples() {
		f := s.GridFile()
		var a, b any
		own, _ := s.Grid("")
		if json.Unmarshal(f, &a) != nil || json.Unmarshal(own, &b) != nil || !strings.HasSuffix(string(f), "}\n") || !strings.Contains(string(f), "\n  \"") {
			t.Fatalf("%s: %s", s.ID, f)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: the written file differs from the grid", s.ID)
		}
	}
}
