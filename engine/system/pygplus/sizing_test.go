package pygplus

import (
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

const mib = int64(1) << 20

func TestSizing(t *testing.T) {
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Train: 105000}
	// base 40 MiB, one batch of 1 MiB, M_b 20,480 rows of 512 B = 10 MiB
	ws := kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, BatchBytes: mib, RowBytes: 512}
	host := ws
	host.ArenaBytes, host.StepExtra = 30*mib, 2*mib // the step charged to the budget (model_mem host)
	cases := []struct {
		name   string
		budget int64
		ws     kit.Workspace
		batch  int
		fanout []int
		want   plan
	}{
		// 1000 × (1 + 5 + 25) input nodes at most
		{"fanout bound", 0, ws, 1000, []int{5, 5}, plan{xRows: 31000, need: 51 * mib, feasible: true}},
		// 1000 × (1 + 10 + 100 + 1000) exceeds the graph: every node
		{"graph bound", 0, ws, 1000, []int{10, 10, 10}, plan{xRows: 1 << 20, need: 51 * mib, feasible: true}},
		// all neighbours: every node
		{"full neighbourhood", 0, ws, 1000, []int{-1}, plan{xRows: 1 << 20, need: 51 * mib, feasible: true}},
		// batch 0 = the whole training split as one batch
		{"whole split", 0, ws, 0, []int{1}, plan{xRows: 210000, need: 51 * mib, feasible: true}},
		{"fits exactly", 51 * mib, ws, 1000, []int{5, 5}, plan{xRows: 31000, need: 51 * mib, feasible: true}},
		{"cannot fit", 51*mib - 1, ws, 1000, []int{5, 5}, plan{xRows: 31000, need: 51 * mib, feasible: false}},
		{"step charged to the budget", 64 * mib, host, 1000, []int{5, 5}, plan{xRows: 31000, need: 83 * mib, feasible: false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := train.Config{Batch: c.batch, Fanout: c.fanout}
			if got := size(c.budget, c.ws, shape, cfg); got != c.want {
				t.Errorf("plan %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestMinMemory: PyG+'s floor is the estimated base (runtime floor,
// indptr, labels) and a batch of seeds with their rows.
func TestMinMemory(t *testing.T) {
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Train: 105000}
	cfg := train.DefaultConfig() // batch 1000
	want := kit.RuntimeFloor + 8*(int64(1<<20)+1) + 4*int64(1<<20) + 1000*8 + 1000*512
	if got := minMemory(shape, cfg); got != want {
		t.Fatalf("MinMemory %d, want %d", got, want)
	}
}
