package helios

import (
	"testing"

	"outcore/engine/sample"
	"outcore/engine/system/kit"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// parsed parses opts for a run whose device budget holds a tenth of the
// medium feature table on the GPU next to TestPlan's batches in flight.
func parsed(t *testing.T, opts map[string]string) options {
	t.Helper()
	ws := kit.Workspace{BaseBytes: 40 << 20, MaxInputs: 140000, RowBytes: 512}
	return systest.Options(t, parseOptions, train.Config{DeviceMemBytes: 209715*512 + DeviceOther(ws, 175001, 512, 3)}, nil, opts)
}

func TestPlan(t *testing.T) {
	const MiB = 1 << 20
	n := systest.MediumShape.Nodes
	ws := kit.Workspace{BaseBytes: 40 * MiB, MaxInputs: 140000, RowBytes: 512}
	heap := 40*MiB + systest.MediumShape.IndicesBytes() + 2*sample.IDMapBytes(n, 140000)
	staging := int64(4 * 128 * 512)
	host := heap + heap/4 + staging
	base := Layout{TopologyBytes: kit.TopologyBytes(systest.MediumShape), MaxBatch: 175001, HeapNeed: heap, Staging: staging, HostBytes: host, Feasible: true}
	with := func(f func(*Layout)) Layout { l := base; f(&l); return l }
	cases := []systest.SizingCase[Layout]{
		{Name: "no budget: the device budget less the batches in flight on the GPU, a tenth of the table on the CPU", Budget: 0, Opts: nil,
			Want: with(func(l *Layout) { l.GPURows, l.CPURows = 209715, 209715 })},
		{Name: "50% of medium: the CPU tier is what topology, heap, staging, reserve and tier map leave", Budget: 512 * MiB, Opts: nil,
			Want: with(func(l *Layout) { l.GPURows, l.CPURows = 209715, (512*MiB-host-512*MiB/10-4*n)/512 })},
		{Name: "a CPU tier asked for that the budget cuts", Budget: 512 * MiB, Opts: map[string]string{"cpu_cache": "200MiB"},
			Want: with(func(l *Layout) { l.GPURows, l.CPURows, l.CPUCut = 209715, (512*MiB-host-512*MiB/10-4*n)/512, true })},
		{Name: "a budget below the topology: infeasible, no CPU tier", Budget: 256 * MiB, Opts: map[string]string{"gpu_cache": "10MiB"},
			Want: with(func(l *Layout) { l.GPURows, l.Feasible = 20480, false })},
		{Name: "tiers never exceed the nodes: the GPU holds all, the CPU none", Budget: 0, Opts: map[string]string{"gpu_cache": "4GiB", "cpu_cache": "1GiB"},
			Want: with(func(l *Layout) { l.GPURows = n })},
		{Name: "Helios-NoCache", Budget: 512 * MiB, Opts: map[string]string{"gpu_cache": "0", "cpu_cache": "0"}, Want: base},
		{Name: "batch buffers follow batch_margin", Budget: 0, Opts: map[string]string{"batch_margin": "2", "gpu_cache": "0", "cpu_cache": "0"},
			Want: with(func(l *Layout) { l.MaxBatch = 280001 })},
	}
	systest.CheckSizing(t, cases, func(c systest.SizingCase[Layout]) Layout {
		return Plan(kit.Sizing[options, kit.NoProfile]{Budget: c.Budget, WS: ws, Shape: systest.MediumShape, Opt: parsed(t, c.Opts)})
	})
	// a device budget the batches in flight fill: no GPU tier
	o := parsed(t, nil)
	o.device = DeviceOther(ws, 175001, 512, 3)
	if got := Plan(kit.Sizing[options, kit.NoProfile]{WS: ws, Shape: systest.MediumShape, Opt: o}); got.GPURows != 0 {
		t.Errorf("device budget of the batches alone: %d GPU rows", got.GPURows)
	}
}

func TestMinMemory(t *testing.T) {
	cfg := train.DefaultConfig()
	got := minMemory(systest.MediumShape, cfg)
	ws, o := kit.EstimateWorkspace(systest.MediumShape, cfg), parsed(t, nil)
	if !Plan(kit.Sizing[options, kit.NoProfile]{Budget: got, WS: ws, Shape: systest.MediumShape, Opt: o}).Feasible || Plan(kit.Sizing[options, kit.NoProfile]{Budget: got - 1, WS: ws, Shape: systest.MediumShape, Opt: o}).Feasible {
		t.Fatalf("MinMemory %d is not the feasibility boundary", got)
	}
	if floor := int64(kit.RuntimeFloor) + kit.TopologyBytes(systest.MediumShape) + 4*systest.MediumShape.Nodes; got < floor || got <= 256<<20 {
		t.Fatalf("MinMemory %d MiB below the topology floor %d MiB (or medium at 25%% would be accepted)", got>>20, floor>>20)
	}
}

// minMemory is the floor Register gives the variant: its sizing's.
var minMemory = kit.Sizer[options, kit.NoProfile, Layout](Plan).MinMemory(parseOptions)
