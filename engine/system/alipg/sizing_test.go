package alipg

import (
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

const mib = int64(1) << 20

func TestSizing(t *testing.T) {
	// 1 Mi nodes of 512 B; base 40 MiB, batches of 1 MiB with 20,480
	// input rows (10 MiB): PyG+'s need is 40 + 2 × 11 = 62 MiB
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Train: 105000}
	ws := kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, BatchBytes: mib, RowBytes: 512}
	const need = 62 * mib
	const slots = 4 * mib // 4 B a node
	cases := []struct {
		name   string
		budget int64
		share  string
		want   plan
	}{
		{"no budget: PyG+ alone", 0, "25", plan{xRows: 31000, need: need, row: 512, feasible: true}},
		// reserve 32 MiB: 94 MiB is the least
		{"nothing to split", 94 * mib, "25", plan{xRows: 31000, need: need, row: 512, feasible: true}},
		{"below the floor", 94*mib - 1, "25", plan{xRows: 31000, need: need, row: 512}},
		// 1000 MiB: reserve 100, available 838
		// 500 MiB: reserve 50, available 388 = 97 + 291
		{"25:75", 500 * mib, "25", plan{xRows: 31000, need: need, row: 512, available: 388 * mib, ncBytes: 97 * mib, fcBytes: 291 * mib, fcRows: (291*mib - slots) / 512, slots: slots, feasible: true}},
		{"0:100, capped at every node", 1000 * mib, "0", plan{xRows: 31000, need: need, row: 512, available: 838 * mib, fcBytes: 838 * mib, fcRows: 1 << 20, slots: slots, feasible: true}},
		{"100:0, no feature cache", 1000 * mib, "100", plan{xRows: 31000, need: need, row: 512, available: 838 * mib, ncBytes: 838 * mib, feasible: true}},
		// available 6 MiB at 0:100 is 4 MiB of slots and 2 MiB of rows
		{"slots first", 100 * mib, "0", plan{xRows: 31000, need: need, row: 512, available: 6 * mib, fcBytes: 6 * mib, fcRows: 2 * mib / 512, slots: slots, feasible: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := train.Config{Batch: 1000, Fanout: []int{5, 5}, Options: map[string]string{"nc_share": c.share}}
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

// TestSplitsAreThePapers: nc_share takes Ginex §5.1's five splits and
// refuses any other, naming them.
func TestSplitsAreThePapers(t *testing.T) {
	for _, s := range splits {
		if _, err := parseOptions(train.Config{Options: map[string]string{"nc_share": s}}); err != nil {
			t.Errorf("nc_share=%s: %v", s, err)
		}
	}
	if _, err := parseOptions(train.Config{Options: map[string]string{"nc_share": "30"}}); err == nil {
		t.Error("nc_share=30 accepted")
	}
}
