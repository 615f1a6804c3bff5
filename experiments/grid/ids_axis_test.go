package grid

import (
	"context"
	"strings"
	"testing"

	"outcore/engine/dataset"
)

// TestIDsAxisPlan: each value of the ids axis runs on the grid's dataset
// renumbered — its twin <dataset>-ids-<numbering>, planned from the
// base's generator config (GenConfig.WithIDs) for the runner to make, or
// the base itself when it is already so numbered on the structured
// generator — and the axis takes only its two values, not beside
// feature_dim.
func TestIDsAxisPlan(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	cfg, err := dataset.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Generate(ctx, dataset.DatasetsDir(dir), "plain", cfg, nil); err != nil {
		t.Fatal(err)
	}
	local := cfg
	local.CommunitySizeExponent, local.IDLocality, local.LocalShare = 1, true, 0.3
	if _, err := dataset.Generate(ctx, dataset.DatasetsDir(dir), "loc", local, nil); err != nil {
		t.Fatal(err)
	}
	plan := func(src string) ([]RunSpec, map[string]DatasetInfo, ProblemList) {
		t.Helper()
		g, err := ParseGrid([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		specs, ds, ps, _ := Plan(g, World{DataDir: dir}, true)
		return specs, ds, ps
	}
	for _, c := range []struct {
		base    string
		want    []string // the datasets of the cells, in grid order
		derived map[string]bool
	}{
		{"plain", []string{"plain-ids-scattered", "plain-ids-local", "plain-ids-scattered", "plain-ids-local"}, map[string]bool{"plain-ids-scattered": false, "plain-ids-local": true}},
		{"loc", []string{"loc-ids-scattered", "loc", "loc-ids-scattered", "loc"}, map[string]bool{"loc-ids-scattered": false}},
	} {
		specs, ds, ps := plan(`{"dataset":"` + c.base + `","system":"fake","epochs":1,"axes":{"mem_limit":["none"],"ids":["scattered","local"],"batch_size":[64,128]}}`)
		if len(ps) > 0 {
			t.Fatalf("%s: %v", c.base, ps)
		}
		var got []string
		for _, sp := range specs {
			got = append(got, sp.Dataset)
			if sp.Config.Dataset != sp.Dataset {
				t.Errorf("%s: run on %s configured for dataset %s", c.base, sp.Dataset, sp.Config.Dataset)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: cells run on %v, want %v", c.base, got, c.want)
		}
		for name, isLocal := range c.derived {
			info, ok := ds[name]
			if !ok || info.Exists {
				t.Fatalf("%s: %s planned as %+v, want a twin to generate", c.base, name, info)
			}
			g := info.Meta.Source.Generator
			if g == nil || !g.Structured() || g.IDLocality != isLocal || g.Nodes != cfg.Nodes || g.Seed != cfg.Seed {
				t.Errorf("%s: %s would be generated from %+v", c.base, name, g)
			}
		}
	}
	for _, c := range []struct{ grid, want string }{
		{`{"dataset":"plain","system":"fake","axes":{"ids":["scattered","random"]}}`, `node numberings: "random" is not one`},
		{`{"dataset":"plain","system":"fake","axes":{"ids":["local","local"]}}`, `node numberings: "local" is listed twice`},
		{`{"dataset":"plain","system":"fake","axes":{"ids":["local"],"feature_dim":[16]}}`, `not together with feature dimensions`},
	} {
		g, err := ParseGrid([]byte(c.grid))
		if err == nil {
			err = ProblemList(g.Problems()).Err()
			if err == nil {
				t.Errorf("%s: no problem; want one saying %q", c.grid, c.want)
				continue
			}
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to say %q", c.grid, err, c.want)
		}
	}
	// a twin left on disk that is not the renumbered graph is refused
	if _, err := dataset.Generate(ctx, dataset.DatasetsDir(dir), "plain-ids-local", cfg, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, ps := plan(`{"dataset":"plain","system":"fake","epochs":1,"axes":{"ids":["local"]}}`); len(ps) == 0 || !strings.Contains(ps[0].Message, `dataset "plain-ids-local" exists but was not made as plain with local ids`) {
		t.Errorf("a wrong twin on disk: problems %v", ps)
	}
}
