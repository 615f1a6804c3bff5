package systest

import (
	"maps"
	"testing"

	"outcore/engine/train"
)

// MiB is the unit of the sizing tables.
const MiB = int64(1) << 20

// Options parses the options of a sizing table's row with parse, a
// variant's option parser: opts over defaults, in cfg (whose other fields,
// the device budget for one, the row sets). A parse error fails t.
func Options[O any](t testing.TB, parse func(train.Config) (O, error), cfg train.Config, defaults, opts map[string]string) O {
	t.Helper()
	all := maps.Clone(defaults)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, opts)
	cfg.Options = all
	o, err := parse(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// CheckMinBudget fails t unless every budget from least up to 4 GiB (in
// 7 MiB steps) is feasible and minMemory, the variant's
// train.Variant.MinMemory, estimates shape's minimum under the default
// configuration as a lower bound in (0, least].
func CheckMinBudget(t testing.TB, feasible func(int64) bool, least int64, minMemory func(train.DatasetShape, train.Config) int64, shape train.DatasetShape) {
	t.Helper()
	for b := least; b < 4096*MiB; b += 7 * MiB {
		if !feasible(b) {
			t.Fatalf("budget %d above the minimum %d is infeasible", b, least)
		}
	}
	if m := minMemory(shape, train.DefaultConfig()); m <= 0 || m > least {
		t.Fatalf("MinMemory %d, want a lower bound in (0, %d]", m, least)
	}
}

// FixtureShape is the small fixture of the sizing tables: 2^20 nodes (a
// sampler's dense id map is 8 MiB), 16 Mi edges (128 MiB of indices),
// 128 dims (512-byte rows), 32 classes and trainNodes training nodes.
func FixtureShape(trainNodes int64) train.DatasetShape {
	return train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Classes: 32, Train: trainNodes}
}

// SizingCase is a row of a sizing table: a host budget (0: none) and
// options, and the plan P the variant's sizing must make of them.
type SizingCase[P any] struct {
	Name   string
	Budget int64
	Opts   map[string]string
	Want   P
}

// CheckSizing fails t for every row of cases whose plan (what the
// variant's sizing makes of the row) is not the row's Want.
func CheckSizing[P comparable](t *testing.T, cases []SizingCase[P], plan func(SizingCase[P]) P) {
	t.Helper()
	for _, c := range cases {
		if got := plan(c); got != c.Want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.Name, got, c.Want)
		}
	}
}
