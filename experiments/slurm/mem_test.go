package slurm

import (
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/train"
)

func TestJobMemoryBytes(t *testing.T) {
	meta := dataset.Meta{Nodes: 100_000, FeatureDim: 128, Classes: 10, Train: 60_000,
		Files: map[string]int64{"features.bin": 51_200_000, "indices.bin": 8_000_000}}
	cfg := func(model string, batch, hidden int, fanout ...int) train.Config {
		return train.Config{Model: model, Batch: batch, Hidden: hidden, Heads: 4, Fanout: fanout}
	}
	base := StepAllowance(cfg("sage", 1000, 64, 10, 5), meta)
	// 1000 seeds, 11 000 at hop 1, 66 000 at hop 2 (all below the node count):
	// layer 0: 11 000 dst × (2·128 + 3·64) + 66 000 × 128 floats,
	// layer 1: 1000 × (2·64 + 3·10) + 11 000 × 64; params 2·(128·64 + 64·10) + 2·(64+10).
	floats := int64(11_000*(2*128+3*64)+66_000*128) + int64(1000*(2*64+3*10)+11_000*64)
	arena := floats * 4
	arena += arena / 8
	arena += arena / 8
	params := int64(2*(128*64+64*10) + 2*(64+10))
	if want := arena + params*16 + matrixLibBytes; base != want {
		t.Fatalf("StepAllowance = %d, want %d", base, want)
	}
	for _, compute := range []string{"none", "model:h100-pyg"} {
		c := cfg("sage", 1000, 64, 10, 5)
		c.Compute = compute
		if a := StepAllowance(c, meta); a != 0 {
			t.Errorf("compute %s runs no model step, StepAllowance = %d", compute, a)
		}
	}
	dev := meta.FeatureBytes() / 10 // the default device budget, 10 % of the features
	for _, c := range []struct {
		name     string
		cfg      train.Config
		budget   int64
		override int64
		want     func(int64) bool
	}{
		{"budget + estimate + overhead", cfg("sage", 1000, 64, 10, 5), 32 << 20, 0,
			func(v int64) bool { return v == 32<<20+base+dev+JobOverheadBytes }},
		{"given allowance", cfg("sage", 1000, 64, 10, 5), 32 << 20, 256 << 20,
			func(v int64) bool { return v == 32<<20+256<<20+dev+JobOverheadBytes }},
		{"no budget: the dataset's files", cfg("sage", 1000, 64, 10, 5), 0, 0,
			func(v int64) bool { return v == 59_200_000+base+dev+JobOverheadBytes }},
		{"wider fanout asks for more", cfg("sage", 1000, 64, 25, 10), 32 << 20, 0,
			func(v int64) bool { return v > 32<<20+base+dev+JobOverheadBytes }},
		{"all neighbours: capped at the node count", cfg("sage", 1000, 64, -1, -1), 32 << 20, 0,
			func(v int64) bool {
				return v == 32<<20+StepAllowance(cfg("sage", 1000, 64, 1000, 1000), meta)+dev+JobOverheadBytes
			}},
		{"gat counts attention", cfg("gat", 1000, 64, 10, 5), 32 << 20, 0,
			func(v int64) bool { return v > 32<<20+base+dev+JobOverheadBytes }},
		{"full batch", cfg("sage", 0, 64, 10, 5), 32 << 20, 0,
			func(v int64) bool { return v > 32<<20+base+dev+JobOverheadBytes }},
		{"no device budget", train.Config{Model: "sage", Batch: 1000, Hidden: 64, Heads: 4, Fanout: []int{10, 5}, DeviceMem: "none"}, 32 << 20, 0,
			func(v int64) bool { return v == 32<<20+base+JobOverheadBytes }},
		{"a device budget of 1 GiB", train.Config{Model: "sage", Batch: 1000, Hidden: 64, Heads: 4, Fanout: []int{10, 5}, DeviceMem: "1GiB"}, 32 << 20, 0,
			func(v int64) bool { return v == 32<<20+base+1<<30+JobOverheadBytes }},
	} {
		if got := JobMemoryBytes(c.cfg, meta, c.budget, c.override); !c.want(got) {
			t.Errorf("%s: %d bytes", c.name, got)
		}
	}
}
