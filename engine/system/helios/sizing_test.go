package helios

import (
	"testing"

	"outcore/engine/train"
)

var medium = train.DatasetShape{Nodes: 2097152, Edges: 31486938, FeatureDim: 128, Classes: 32, Train: 104841}

func TestMinMemory(t *testing.T) {
	want := int64(12<<20 + 8*(2097152+1) + 8*31486938 + 4*2097152)
	got := MinMemory(medium, train.Config{})
	if got != want {
		t.Fatalf("MinMemory %d, want %d", got, want)
	}
	work := int64(12<<20) + 4*medium.Nodes
	if !Plan(LayoutInput{Shape: medium, Budget: got, HostWork: work, CPUCache: -1}).Feasible || Plan(LayoutInput{Shape: medium, Budget: got - 1, HostWork: work, CPUCache: -1}).Feasible {
		t.Fatalf("MinMemory %d is not the feasibility boundary", got)
	}
}

func TestPlan(t *testing.T) {
	const MiB = 1 << 20
	topo := TopologyBytes(medium)
	n := int64(2097152)
	cases := []struct {
		name string
		in   LayoutInput
		want Layout
	}{
		{"no budget: the GPU tier asked for, a tenth of the table on the CPU",
			LayoutInput{Shape: medium, GPUCache: 100 * MiB, CPUCache: -1},
			Layout{GPURows: 204800, CPURows: 209715, TopologyBytes: topo, Feasible: true}},
		{"a budget: the CPU tier takes what the topology, work and reserve leave",
			LayoutInput{Shape: medium, Budget: 512 * MiB, HostWork: 60 * MiB, Reserve: 51 * MiB, GPUCache: 100 * MiB, CPUCache: -1},
			Layout{GPURows: 204800, CPURows: (512*MiB - topo - 111*MiB - 4*n) / 512, TopologyBytes: topo, Feasible: true}},
		{"a CPU tier asked for that the budget cuts",
			LayoutInput{Shape: medium, Budget: 400 * MiB, HostWork: 60 * MiB, Reserve: 40 * MiB, CPUCache: 200 * MiB},
			Layout{CPURows: (400*MiB - topo - 100*MiB - 4*n) / 512, CPUCut: true, TopologyBytes: topo, Feasible: true}},
		{"a budget below the topology: no CPU tier",
			LayoutInput{Shape: medium, Budget: 100 * MiB, GPUCache: 10 * MiB, CPUCache: -1},
			Layout{GPURows: 20480, TopologyBytes: topo, Feasible: false}},
		{"tiers never exceed the nodes: the GPU holds all, the CPU none",
			LayoutInput{Shape: medium, GPUCache: 4 << 30, CPUCache: 1 << 30},
			Layout{GPURows: n, CPURows: 0, TopologyBytes: topo, Feasible: true}},
		{"no caches (Helios-NoCache)",
			LayoutInput{Shape: medium, Budget: 512 * MiB, GPUCache: 0, CPUCache: 0},
			Layout{TopologyBytes: topo, Feasible: true}},
	}
	for _, c := range cases {
		if got := Plan(c.in); got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}
