package web

import (
	"strings"
	"testing"

	"outcore/engine/testbed"
)

// TestFormTestbed: the form's testbed select (DESIGN §13) puts one paper
// testbed into the grid's "testbed" key, several into a testbed axis
// (each its own runs, named in the preview), this-host alone into
// nothing; an unknown one is refused on its field; epochs 0 (the
// mapping's) is refused on this host and taken under a paper's testbed.
func TestFormTestbed(t *testing.T) {
	env := formEnvFor(t)
	in := goodInput()
	// A paper testbed's cell with no limit of its own takes the mapping's
	// host memory, on tiny far below every floor, and is refused
	// (TestFormTestbedNoLimitRefused); here every limit is given.
	in.MemLimits = "64MiB, 8000%, 1GiB"
	in.Testbeds = []string{"gids-vldb24"}
	g, errs := ValidateForm(in, env)
	if len(errs) != 0 || string(g.Base["testbed"]) != `"gids-vldb24"` || g.Count() != 2*3*2*2*2 {
		t.Fatalf("one testbed: %v, base %s, %d runs", errs, g.Base["testbed"], g.Count())
	}
	if p := previewFor(g, errs); !strings.Contains(p, "under testbed gids-vldb24") {
		t.Errorf("preview %q names no testbed", p)
	}
	in.Testbeds = []string{testbed.ThisHost, "ginex-vldb22"}
	g, errs = ValidateForm(in, env)
	if len(errs) != 0 || g.Count() != 2*2*3*2*2*2 || g.Base["testbed"] != nil {
		t.Fatalf("two testbeds: %v, %d runs", errs, g.Count())
	}
	var seen []string
	for _, c := range g.Cells() {
		cfg, err := g.CellConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(seen, " "), cfg.Testbed) {
			seen = append(seen, cfg.Testbed)
		}
	}
	if strings.Join(seen, " ") != "this-host ginex-vldb22" {
		t.Errorf("cells' testbeds %v", seen)
	}
	if p := previewFor(g, errs); !strings.Contains(p, "under testbeds this-host, ginex-vldb22") {
		t.Errorf("preview %q", p)
	}
	in.Testbeds = []string{testbed.ThisHost}
	if g, errs = ValidateForm(in, env); len(errs) != 0 || g.Base["testbed"] != nil || len(g.Axes.Extra) != 0 {
		t.Errorf("this-host alone: %v %s", errs, g.JSON())
	}
	in.Testbeds = []string{"mars-1"}
	if _, errs = ValidateForm(in, env); !strings.Contains(errs[TestbedField], `unknown testbed "mars-1"`) {
		t.Errorf("unknown testbed: %v", errs)
	}
	in.Testbeds, in.Epochs = nil, "0"
	if _, errs = ValidateForm(in, env); !strings.Contains(errs["epochs"], "asks for a paper testbed's epochs") {
		t.Errorf("epochs 0 on this host: %v", errs)
	}
	in.Testbeds = []string{"helios-preprint"}
	if g, errs = ValidateForm(in, env); len(errs) != 0 || string(g.Base["epochs"]) != "0" {
		t.Errorf("epochs 0 under helios-preprint: %v", errs)
	}
	// the select offers this-host first, chosen by default, then every paper's
	opts := testbedOptions(nil)
	if len(opts) != len(testbed.Names()) || opts[0].Value != testbed.ThisHost || !opts[0].Selected || opts[1].Selected {
		t.Errorf("options %+v", opts)
	}
}

// TestFormTestbedNoLimitRefused: under a paper's testbed a cell with no
// limit of its own ("none") runs at the mapping's host memory; on tiny
// that is below the variants' floors, so the form refuses those cells on
// the limits' field, naming the testbed's host memory, instead of
// queueing runs that fail in the child.
func TestFormTestbedNoLimitRefused(t *testing.T) {
	in := goodInput() // its limits end with "none"
	in.Testbeds = []string{"gids-vldb24"}
	_, errs := ValidateForm(in, formEnvFor(t))
	if !strings.Contains(errs["mem_limits"], `"testbed gids-vldb24's host memory" is`) || !strings.Contains(errs["mem_limits"], "skip_infeasible") {
		t.Errorf("no limit under a paper's testbed on tiny: %v", errs)
	}
}
