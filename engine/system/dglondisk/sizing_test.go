package dglondisk

import (
	"strings"
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

// TestRefusal: a plan that does not fit is refused with its reason (not
// run on towards an OOM kill), and one that fits plans its heap.
func TestRefusal(t *testing.T) {
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Train: 105000}
	ws := kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, BatchBytes: mib, RowBytes: 512}
	cfg := train.Config{Batch: 1000, Fanout: []int{5, 5}}
	opt, err := parseOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, least := kit.Size(size, kit.Sizing[options, kit.NoProfile]{Budget: 200 * mib, WS: ws, Shape: shape, Cfg: cfg, Opt: opt})
	if least != 211*mib {
		t.Errorf("least budget %d MiB, want 211", least>>20)
	}
	if m := p.memory(200*mib, least); m.Fits || m.Refusal == nil || !strings.Contains(m.Refusal.Error(), "graph structure") {
		t.Errorf("plan at 200 MiB: fits %v, refusal %v", m.Fits, m.Refusal)
	}
	if m := size(kit.Sizing[options, kit.NoProfile]{Budget: 300 * mib, WS: ws, Shape: shape, Cfg: cfg, Opt: opt}).memory(300*mib, least); !m.Fits || m.Refusal != nil || m.Heap == nil || m.Heap.HeapNeed != 179*mib {
		t.Errorf("plan at 300 MiB: %+v", m)
	}
}
