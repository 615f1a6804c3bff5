package examples_test

import (
	"encoding/json"
	"strings"
	"testing"

	"outcore/engine/dataset"
	_ "outcore/engine/system/all"
	"outcore/engine/train"
	"outcore/experiments"
	"outcore/experiments/examples"
)

// Every embedded file is a grid the queue accepts in shape, and every run
// it expands into is a valid configuration of a registered variant with
// options the variant declares.
func TestExamplesAreValidGrids(t *testing.T) {
	names := examples.Names()
	if len(names) == 0 {
		t.Fatal("no example grid embedded")
	}
	for _, name := range names {
		b, err := examples.File(name)
		if err != nil {
			t.Fatal(err)
		}
		g, err := experiments.ParseGrid(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// the micro-experiments run on the dashboard's default dataset;
		// the variants benchmark on the preset it is measured on
		_, presetErr := dataset.Preset(g.Dataset)
		if g.Name == "" || (g.Dataset != "default" && presetErr != nil) || !strings.HasSuffix(name, ".json") {
			t.Fatalf("%s: name %q, dataset %q", name, g.Name, g.Dataset)
		}
		for _, c := range g.Cells() {
			cfg := train.DefaultConfig()
			for k, v := range g.Base {
				one, _ := json.Marshal(map[string]json.RawMessage{k: v})
				if err := json.Unmarshal(one, &cfg); err != nil {
					t.Fatalf("%s: %s: %v", name, k, err)
				}
			}
			cfg.Dataset = g.Dataset
			if c.System != "" {
				e, err := experiments.ParseSystemEntry(c.System)
				if err != nil {
					t.Fatalf("%s, run %d: %v", name, c.Seq, err)
				}
				cfg.System = e.Variant
				for k, v := range e.Options {
					if cfg.Options == nil {
						cfg.Options = map[string]string{}
					}
					cfg.Options[k] = v
				}
			}
			if c.Model != "" {
				cfg.Model = c.Model
			}
			if c.BatchSize != 0 {
				cfg.Batch = c.BatchSize
			}
			if c.Fanout != nil {
				cfg.Fanout = c.Fanout
			}
			cfg.Layers = len(cfg.Fanout)
			if err := cfg.Validate(); err != nil {
				t.Fatalf("%s, run %d: %v", name, c.Seq, err)
			}
		}
	}
}
