package alipg

import (
	"strings"
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

const mib = int64(1) << 20

func TestSizing(t *testing.T) {
	// 1 Mi nodes of 512 B; base 40 MiB, batches of 1 MiB with 20,480
	// input rows (10 MiB); 2 samplers × prefetch 2: six sampled batches
	// held (four dispatched ahead, one gathered, one trained) and two
	// inputs: PyG+'s need is 40 + 6 × 1 + 2 × 10 = 66 MiB. Beside the
	// reserve (a tenth, at least 32 MiB) the plan keeps as much again as
	// page cache for the mappings.
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Train: 105000}
	ws := kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, BatchBytes: mib, RowBytes: 512}
	const need = 66 * mib
	const slots = 4 * mib // 4 B a node
	base := plan{xRows: 31000, heldBatches: 6, inputs: 20 * mib, need: need, row: 512}
	with := func(p plan, f func(*plan)) plan { f(&p); return p }
	cases := []struct {
		name   string
		budget int64
		share  string
		want   plan
	}{
		{"no budget: PyG+ alone", 0, "25", with(base, func(p *plan) { p.feasible = true })},
		// 66 + reserve 32 + page cache 32: 130 MiB is the least
		{"nothing to split", 130 * mib, "25", with(base, func(p *plan) { p.pageCache, p.feasible = 32*mib, true })},
		{"below the floor", 130*mib - 1, "25", with(base, func(p *plan) { p.pageCache = 32 * mib })},
		// 500 MiB: reserve 50, page cache 50, available 334 = 83.5 + 250.5
		{"25:75", 500 * mib, "25", with(base, func(p *plan) {
			p.pageCache, p.available, p.ncBytes, p.fcBytes = 50*mib, 334*mib, 334*mib/4, 334*mib-334*mib/4
			p.fcRows, p.slots, p.feasible = (p.fcBytes-slots)/512, slots, true
		})},
		// 1000 MiB: reserve 100, page cache 100, available 734
		{"0:100, capped at every node", 1000 * mib, "0", with(base, func(p *plan) {
			p.pageCache, p.available, p.fcBytes, p.fcRows, p.slots, p.feasible = 100*mib, 734*mib, 734*mib, 1<<20, slots, true
		})},
		{"100:0, no feature cache", 1000 * mib, "100", with(base, func(p *plan) {
			p.pageCache, p.available, p.ncBytes, p.feasible = 100*mib, 734*mib, 734*mib, true
		})},
		// available 6 MiB at 0:100 is 4 MiB of slots and 2 MiB of rows
		{"slots first", 136 * mib, "0", with(base, func(p *plan) {
			p.pageCache, p.available, p.fcBytes, p.fcRows, p.slots, p.feasible = 32*mib, 6*mib, 6*mib, 2*mib/512, slots, true
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := train.Config{Batch: 1000, Fanout: []int{5, 5}, Options: map[string]string{"nc_share": c.share, "samplers": "2", "prefetch": "2"}}
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

// TestRefusalNamesTheLeastBudget: a plan that does not fit is refused
// (not run on towards an OOM kill), its error naming what it holds, and
// the least budget is the one the sizing first fits at.
func TestRefusalNamesTheLeastBudget(t *testing.T) {
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Train: 105000}
	ws := kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, BatchBytes: mib, RowBytes: 512}
	cfg := train.Config{Batch: 1000, Fanout: []int{5, 5}, Options: map[string]string{"samplers": "2", "prefetch": "2"}}
	opt, err := parseOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, least := kit.Size(size, kit.Sizing[options, kit.NoProfile]{Budget: 100 * mib, WS: ws, Shape: shape, Cfg: cfg, Opt: opt})
	if least != 130*mib {
		t.Errorf("least budget %d MiB, want 130", least>>20)
	}
	m := p.memory(100*mib, least)
	if m.Fits || m.Refusal == nil || !strings.Contains(m.Refusal.Error(), "page cache of the mappings (32 MiB)") {
		t.Errorf("plan at 100 MiB: fits %v, refusal %v", m.Fits, m.Refusal)
	}
	ok := size(kit.Sizing[options, kit.NoProfile]{Budget: 500 * mib, WS: ws, Shape: shape, Cfg: cfg, Opt: opt}).memory(500*mib, least)
	if !ok.Fits || ok.Refusal != nil || ok.Heap == nil || ok.Heap.KeepCached != 50*mib {
		t.Errorf("plan at 500 MiB: %+v", ok)
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
