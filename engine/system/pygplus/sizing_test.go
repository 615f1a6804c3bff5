package pygplus

import (
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

const mib = int64(1) << 20

func TestSizing(t *testing.T) {
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Train: 105000}
	// base 40 MiB, one batch of 1 MiB, M_b 20,480 rows of 512 B = 10 MiB;
	// with the gather thread two batches and their inputs are held (62
	// MiB), without it one (51 MiB)
	ws := kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, BatchBytes: mib, RowBytes: 512}
	host := ws
	host.ArenaBytes, host.StepExtra = 30*mib, 2*mib // the step charged to the budget (model_mem host)
	cases := []struct {
		name   string
		budget int64
		ws     kit.Workspace
		batch  int
		fanout []int
		inline bool // overlap=false
		want   plan
	}{
		// 1000 × (1 + 5 + 25) input nodes at most
		{"fanout bound", 0, ws, 1000, []int{5, 5}, false, plan{xRows: 31000, inputs: 2, need: 62 * mib, feasible: true}},
		// 1000 × (1 + 10 + 100 + 1000) exceeds the graph: every node
		{"graph bound", 0, ws, 1000, []int{10, 10, 10}, false, plan{xRows: 1 << 20, inputs: 2, need: 62 * mib, feasible: true}},
		// all neighbours: every node
		{"full neighbourhood", 0, ws, 1000, []int{-1}, false, plan{xRows: 1 << 20, inputs: 2, need: 62 * mib, feasible: true}},
		// batch 0 = the whole training split as one batch
		{"whole split", 0, ws, 0, []int{1}, false, plan{xRows: 210000, inputs: 2, need: 62 * mib, feasible: true}},
		{"fits exactly", 62 * mib, ws, 1000, []int{5, 5}, false, plan{xRows: 31000, inputs: 2, need: 62 * mib, feasible: true}},
		{"cannot fit", 62*mib - 1, ws, 1000, []int{5, 5}, false, plan{xRows: 31000, inputs: 2, need: 62 * mib, feasible: false}},
		{"inline gather fits", 51 * mib, ws, 1000, []int{5, 5}, true, plan{xRows: 31000, inputs: 1, need: 51 * mib, feasible: true}},
		{"step charged to the budget", 64 * mib, host, 1000, []int{5, 5}, false, plan{xRows: 31000, inputs: 2, need: 94 * mib, feasible: false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := train.Config{Batch: c.batch, Fanout: c.fanout}
			if c.inline {
				cfg.Options = map[string]string{"overlap": "false"}
			}
			opt, err := parseOptions(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := size(kit.Sizing[options, kit.NoProfile]{Budget: c.budget, WS: c.ws, Shape: shape, Cfg: cfg, Opt: opt}); got != c.want {
				t.Errorf("plan %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestMinMemory: PyG+'s floor is the estimated base (runtime floor,
// indptr, labels) and two batches of seeds with their rows (the gather
// thread's and the trainer's).
func TestMinMemory(t *testing.T) {
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Train: 105000}
	cfg := train.DefaultConfig() // batch 1000
	want := kit.RuntimeFloor + 8*(int64(1<<20)+1) + 4*int64(1<<20) + 2*(1000*8+1000*512)
	if got := minMemory(shape, cfg); got != want {
		t.Fatalf("MinMemory %d, want %d", got, want)
	}
}

// minMemory is the floor Register gives PyG+: its sizing's.
var minMemory = kit.Sizer[options, kit.NoProfile, plan](size).MinMemory(parseOptions)
