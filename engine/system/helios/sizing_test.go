package helios

import (
	"testing"

	"outcore/engine/sample"
	"outcore/engine/system/kit"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// medium is the shape of the `medium` preset (2 Mi nodes, 128 dims).
var medium = systest.MediumShape

// parsed parses opts for a run whose device budget holds a tenth of the
// medium feature table on the GPU next to TestPlan's batches in flight.
func parsed(t *testing.T, opts map[string]string) options {
	t.Helper()
	ws := kit.Workspace{BaseBytes: 40 << 20, MaxInputs: 140000, RowBytes: 512}
	o, err := parseOptions(train.Config{Options: opts, DeviceMemBytes: 209715*512 + DeviceOther(ws, 175001, 512, 3)})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestPlan(t *testing.T) {
	const MiB = 1 << 20
	n := medium.Nodes
	ws := kit.Workspace{BaseBytes: 40 * MiB, MaxInputs: 140000, RowBytes: 512}
	heap := 40*MiB + medium.IndicesBytes() + 2*sample.IDMapBytes(n, 140000)
	staging := int64(4 * 128 * 512)
	host := heap + heap/4 + staging
	base := Layout{TopologyBytes: kit.TopologyBytes(medium), MaxBatch: 175001, HeapNeed: heap, Staging: staging, HostBytes: host, Feasible: true}
	with := func(f func(*Layout)) Layout { l := base; f(&l); return l }
	cases := []struct {
		name   string
		budget int64
		opts   map[string]string
		want   Layout
	}{
		{"no budget: the device budget less the batches in flight on the GPU, a tenth of the table on the CPU", 0, nil,
			with(func(l *Layout) { l.GPURows, l.CPURows = 209715, 209715 })},
		{"50% of medium: the CPU tier is what topology, heap, staging, reserve and tier map leave", 512 * MiB, nil,
			with(func(l *Layout) { l.GPURows, l.CPURows = 209715, (512*MiB-host-512*MiB/10-4*n)/512 })},
		{"a CPU tier asked for that the budget cuts", 512 * MiB, map[string]string{"cpu_cache": "200MiB"},
			with(func(l *Layout) { l.GPURows, l.CPURows, l.CPUCut = 209715, (512*MiB-host-512*MiB/10-4*n)/512, true })},
		{"a budget below the topology: infeasible, no CPU tier", 256 * MiB, map[string]string{"gpu_cache": "10MiB"},
			with(func(l *Layout) { l.GPURows, l.Feasible = 20480, false })},
		{"tiers never exceed the nodes: the GPU holds all, the CPU none", 0, map[string]string{"gpu_cache": "4GiB", "cpu_cache": "1GiB"},
			with(func(l *Layout) { l.GPURows = n })},
		{"Helios-NoCache", 512 * MiB, map[string]string{"gpu_cache": "0", "cpu_cache": "0"}, base},
		{"batch buffers follow batch_margin", 0, map[string]string{"batch_margin": "2", "gpu_cache": "0", "cpu_cache": "0"},
			with(func(l *Layout) { l.MaxBatch = 280001 })},
	}
	for _, c := range cases {
		if got := Plan(c.budget, ws, medium, parsed(t, c.opts)); got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
	// a device budget the batches in flight fill: no GPU tier
	o := parsed(t, nil)
	o.device = DeviceOther(ws, 175001, 512, 3)
	if got := Plan(0, ws, medium, o); got.GPURows != 0 {
		t.Errorf("device budget of the batches alone: %d GPU rows", got.GPURows)
	}
}

func TestMinMemory(t *testing.T) {
	cfg := train.DefaultConfig()
	got := MinMemory(medium, cfg)
	ws, o := kit.EstimateWorkspace(medium, cfg), parsed(t, nil)
	if !Plan(got, ws, medium, o).Feasible || Plan(got-1, ws, medium, o).Feasible {
		t.Fatalf("MinMemory %d is not the feasibility boundary", got)
	}
	if floor := int64(kit.RuntimeFloor) + kit.TopologyBytes(medium) + 4*medium.Nodes; got < floor || got <= 256<<20 {
		t.Fatalf("MinMemory %d MiB below the topology floor %d MiB (or medium at 25%% would be accepted)", got>>20, floor>>20)
	}
}
