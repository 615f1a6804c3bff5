package examples_test

import (
	"strings"
	"testing"

	"outcore/engine/dataset"
	_ "outcore/engine/system/all"
	"outcore/experiments/examples"
	"outcore/experiments/grid"
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
		g, err := grid.ParseGrid(b)
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
			if _, err := g.CellConfig(c); err != nil {
				t.Fatalf("%s, run %d: %v", name, c.Seq, err)
			}
		}
	}
}
