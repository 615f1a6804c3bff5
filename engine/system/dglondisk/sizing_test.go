package dglondisk

import (
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

const mib = int64(1) << 20

func TestSizing(t *testing.T) {
	// indices 16 Mi edges × 8 B = 128 MiB; base 40, batch 1, 20,480 rows
	// of 512 B = 10 MiB: 179 MiB without the reserve
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Train: 105000}
	ws := kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, BatchBytes: mib, RowBytes: 512}
	const need = 179 * mib
	cases := []struct {
		name   string
		budget int64
		want   plan
	}{
		{"no budget", 0, plan{need: need, heap: need, feasible: true}},
		// reserve max(budget/10, 32 MiB)
		{"fits with the reserve", 211 * mib, plan{need: need, heap: need, feasible: true}},
		{"reserve missing", 211*mib - 1, plan{need: need, heap: need, feasible: false}},
		{"large budget, reserve a tenth", 2000 * mib, plan{need: need, heap: need, feasible: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := train.Config{Batch: 1000, Fanout: []int{5, 5}}
			opt, err := parseOptions(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := size(kit.Sizing[options, kit.NoProfile]{Budget: c.budget, WS: ws, Shape: shape, Cfg: cfg, Opt: opt}); got != c.want {
				t.Errorf("plan %+v, want %+v", got, c.want)
			}
		})
	}
}
