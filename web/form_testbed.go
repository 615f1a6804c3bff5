package web

// The new-experiment form's testbed field (DESIGN §13): a multiple
// select of this-host and the papers' testbeds. One chosen is the grid's
// "testbed" key (none for this-host alone, the default); several are a
// "testbed" axis, each its own runs.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"outcore/engine/testbed"
	"outcore/experiments/grid"
	"outcore/web/views"
)

// TestbedField is the form field of the testbed select.
const TestbedField = "testbed"

// formTestbeds puts the chosen testbeds into the grid's base or axes, or
// returns what is wrong with them ("" when fine).
func formTestbeds(chosen []string, base map[string]any, axes *grid.Axes) string {
	names := testbed.Names()
	picked, unknown := pickKnown(chosen, names)
	if unknown != "" {
		return fmt.Sprintf("testbed: unknown testbed %q (have %s)", unknown, strings.Join(names, ", "))
	}
	switch {
	case len(picked) == 1 && picked[0] != testbed.ThisHost:
		base["testbed"] = picked[0]
	case len(picked) > 1:
		ax := grid.PathAxis{Path: "testbed"}
		for _, p := range picked {
			b, _ := json.Marshal(p)
			ax.Values = append(ax.Values, b)
		}
		axes.Extra = append(axes.Extra, ax)
	}
	return ""
}

// pickKnown is the distinct non-empty values of a multiple-choice field,
// in the order chosen, or the first that is not one of known.
func pickKnown(chosen, known []string) (picked []string, unknown string) {
	for _, c := range chosen {
		c = strings.TrimSpace(c)
		if c == "" || slices.Contains(picked, c) {
			continue
		}
		if !slices.Contains(known, c) {
			return nil, c
		}
		picked = append(picked, c)
	}
	return picked, ""
}

// testbedOptions are the select's options: this-host first (the
// default), then the papers' testbeds with their paper.
func testbedOptions(chosen []string) []views.FormOption {
	var out []views.FormOption
	for _, n := range testbed.Names() {
		label, note := n, "this host as it is: no emulation"
		if n != testbed.ThisHost {
			if p, err := testbed.Load(n); err == nil {
				label, note = n+" — "+p.Paper, "runs under the mapping of "+p.Paper+"'s testbed (compute, step dilation, epochs when 0, device budget, I/O depth)"
			}
		}
		sel := slices.Contains(chosen, n) || len(chosen) == 0 && n == testbed.ThisHost
		opt := views.FormOption{Value: n, Label: label, Note: note, Selected: sel}
		if n == testbed.ThisHost {
			out = append([]views.FormOption{opt}, out...)
		} else {
			out = append(out, opt)
		}
	}
	return out
}

// testbedsOf names the testbeds a grid runs under, for the preview:
// "under gids-vldb24", "under testbeds this-host, ginex-vldb22" ("" on
// this host alone).
func testbedsOf(g *grid.Grid) string {
	for _, ax := range g.Axes.Extra {
		if ax.Path != "testbed" {
			continue
		}
		var names []string
		for _, v := range ax.Values {
			var s string
			if json.Unmarshal(v, &s) == nil {
				names = append(names, s)
			}
		}
		return "under testbeds " + strings.Join(names, ", ") + " (one run each)"
	}
	var s string
	if b, ok := g.Base["testbed"]; ok && json.Unmarshal(b, &s) == nil && s != "" && s != testbed.ThisHost {
		return "under testbed " + s
	}
	return ""
}
