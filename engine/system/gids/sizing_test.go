package gids

import (
	"testing"

	"outcore/engine/train"
)

// medium is the shape of the `medium` preset (2 Mi nodes, 128 dims).
var medium = train.DatasetShape{Nodes: 2097152, Edges: 31486938, FeatureDim: 128, Classes: 32, Train: 104841}

func TestMinMemory(t *testing.T) {
	cases := []struct {
		shape train.DatasetShape
		want  int64
	}{
		// runtime + indptr (8·(N+1)) + indices (8·E) + labels (4·N)
		{medium, 12<<20 + 8*(2097152+1) + 8*31486938 + 4*2097152},
		{train.DatasetShape{Nodes: 8192, Edges: 81920, FeatureDim: 32}, 12<<20 + 8*8193 + 8*81920 + 4*8192},
	}
	for _, c := range cases {
		got := MinMemory(c.shape, train.Config{})
		if got != c.want {
			t.Errorf("%+v: MinMemory %d, want %d", c.shape, got, c.want)
		}
		// the smallest feasible budget with the runtime and labels as work
		work := int64(12<<20) + 4*c.shape.Nodes
		if !Plan(LayoutInput{Shape: c.shape, Budget: got, HostWork: work}).Feasible || Plan(LayoutInput{Shape: c.shape, Budget: got - 1, HostWork: work}).Feasible {
			t.Errorf("%+v: MinMemory %d is not the feasibility boundary", c.shape, got)
		}
	}
}

func TestPlan(t *testing.T) {
	const MiB = 1 << 20
	topo := TopologyBytes(medium)
	cases := []struct {
		name string
		in   LayoutInput
		want Layout
	}{
		{"unlimited: the buffer and cache asked for, one 512 B row per line",
			LayoutInput{Shape: medium, CPUBuffer: 100 * MiB, GPUCache: 64 * MiB},
			Layout{LineBytes: 512, Lines: 2097152, CacheLines: 131072, CPUBufferRows: 204800, TopologyBytes: topo, Feasible: true}},
		{"4 KiB lines as in the paper's micro-benchmarks",
			LayoutInput{Shape: medium, CPUBuffer: 0, GPUCache: 64 * MiB, Line: 4096},
			Layout{LineBytes: 4096, Lines: 262144, CacheLines: 16384, TopologyBytes: topo, Feasible: true}},
		{"a budget that holds the buffer",
			LayoutInput{Shape: medium, Budget: 512 * MiB, HostWork: 60 * MiB, Reserve: 51 * MiB, CPUBuffer: 100 * MiB},
			Layout{LineBytes: 512, Lines: 2097152, CPUBufferRows: 204800, TopologyBytes: topo, Feasible: true}},
		{"a budget that cuts it: what is left after topology, work, reserve and the slot map",
			LayoutInput{Shape: medium, Budget: 400 * MiB, HostWork: 60 * MiB, Reserve: 40 * MiB, CPUBuffer: 100 * MiB},
			Layout{LineBytes: 512, Lines: 2097152, CPUBufferRows: (400*MiB - topo - 100*MiB - 2097152*4) / 512, CPUBufferCut: true, TopologyBytes: topo, Feasible: true}},
		{"a budget below the topology: no buffer",
			LayoutInput{Shape: medium, Budget: 200 * MiB, CPUBuffer: 100 * MiB},
			Layout{LineBytes: 512, Lines: 2097152, CPUBufferRows: 0, CPUBufferCut: true, TopologyBytes: topo, Feasible: false}},
		{"a cache larger than the file holds the file",
			LayoutInput{Shape: medium, GPUCache: 4 << 30},
			Layout{LineBytes: 512, Lines: 2097152, CacheLines: 2097152, TopologyBytes: topo, Feasible: true}},
		{"100-dim rows straddle 512 B lines",
			LayoutInput{Shape: train.DatasetShape{Nodes: 1000, FeatureDim: 100}, GPUCache: 10240},
			Layout{LineBytes: 512, Lines: 782, CacheLines: 20, TopologyBytes: 8 * 1001, Feasible: true}},
	}
	for _, c := range cases {
		if got := Plan(c.in); got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}
