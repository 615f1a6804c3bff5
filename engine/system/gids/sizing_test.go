package gids

import (
	"testing"

	"outcore/engine/sample"
	"outcore/engine/system/kit"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// defaultOptions parses opts; a gpu_cache not given is 10 % of the table
// (the automatic cache, sized from the device budget in Prepare, is
// DeviceCacheLines's: TestDeviceCacheLines).
func defaultOptions(t *testing.T, opts map[string]string) options {
	t.Helper()
	return systest.Options(t, parseOptions, train.Config{}, map[string]string{"gpu_cache": "10%"}, opts)
}

func TestPlan(t *testing.T) {
	const MiB = 1 << 20
	// a profiled workspace: 40 MiB of base besides the indices, 140 K
	// input nodes, the model step outside the budget
	ws := kit.Workspace{BaseBytes: 40 * MiB, MaxInputs: 140000, RowBytes: 512}
	heap := 40*MiB + systest.MediumShape.IndicesBytes() + 2*sample.IDMapBytes(systest.MediumShape.Nodes, 140000)
	staging := int64(4 * 128 * 512 * 2)
	host := heap + heap/4 + staging
	topo := kit.TopologyBytes(systest.MediumShape)
	base := Layout{LineBytes: 512, Lines: 2097152, TopologyBytes: topo, HeapNeed: heap, Staging: staging, HostBytes: host, Feasible: true}
	with := func(f func(*Layout)) Layout { l := base; f(&l); return l }
	cases := []systest.SizingCase[Layout]{
		{Name: "unlimited: 10% buffer and 10% cache of one-row lines", Budget: 0, Opts: nil,
			Want: with(func(l *Layout) { l.CacheLines = 209715; l.CPUBufferRows = 209715 })},
		{Name: "4 KiB lines as in the paper's micro-benchmarks", Budget: 0, Opts: map[string]string{"line": "4096", "gpu_cache": "64MiB", "cpu_buffer": "0"},
			Want: with(func(l *Layout) {
				l.LineBytes, l.Lines, l.CacheLines = 4096, 262144, 16384
				l.Staging = 4 * 128 * 4096 * 2
				l.HostBytes = heap + heap/4 + l.Staging
			})},
		{Name: "a budget that holds the buffer", Budget: 1 << 30, Opts: map[string]string{"cpu_buffer": "100MiB"},
			Want: with(func(l *Layout) { l.CacheLines = 209715; l.CPUBufferRows = 204800 })},
		{Name: "50% of medium: the buffer cut to what topology, heap, staging, reserve and slot map leave", Budget: 512 * MiB, Opts: nil,
			Want: with(func(l *Layout) {
				l.CacheLines = 209715
				l.CPUBufferRows = (512*MiB - host - 512*MiB/10 - 4*systest.MediumShape.Nodes) / 512
				l.CPUBufferCut = true
			})},
		{Name: "a budget that holds the process but no buffer", Budget: host + 48*MiB, Opts: nil,
			Want: with(func(l *Layout) { l.CacheLines = 209715; l.CPUBufferCut = true })},
		{Name: "a budget below the pinned topology: infeasible", Budget: 256 * MiB, Opts: map[string]string{"gpu_cache": "0"},
			Want: with(func(l *Layout) { l.CPUBufferCut = true; l.Feasible = false })},
		{Name: "a cache larger than the file holds the file", Budget: 0, Opts: map[string]string{"gpu_cache": "4GiB", "cpu_buffer": "0"},
			Want: with(func(l *Layout) { l.CacheLines = 2097152 })},
	}
	systest.CheckSizing(t, cases, func(c systest.SizingCase[Layout]) Layout {
		return Plan(kit.Sizing[options, kit.NoProfile]{Budget: c.Budget, WS: ws, Shape: systest.MediumShape, Opt: defaultOptions(t, c.Opts)})
	})
	// rows of 100 floats straddle 512 B lines
	shape := train.DatasetShape{Nodes: 1000, FeatureDim: 100}
	if l := Plan(kit.Sizing[options, kit.NoProfile]{WS: ws, Shape: shape, Opt: defaultOptions(t, map[string]string{"gpu_cache": "10240"})}); l.LineBytes != 512 || l.Lines != 782 || l.CacheLines != 20 {
		t.Errorf("100-dim rows: %+v", l)
	}
}

func TestMinMemory(t *testing.T) {
	for _, shape := range []train.DatasetShape{systest.MediumShape, {Nodes: 8192, Edges: 81920, FeatureDim: 32, Train: 800}} {
		cfg := train.DefaultConfig()
		got := minMemory(shape, cfg)
		o := defaultOptions(t, nil)
		ws := kit.EstimateWorkspace(shape, cfg)
		if !Plan(kit.Sizing[options, kit.NoProfile]{Budget: got, WS: ws, Shape: shape, Opt: o}).Feasible || Plan(kit.Sizing[options, kit.NoProfile]{Budget: got - 1, WS: ws, Shape: shape, Opt: o}).Feasible {
			t.Errorf("%+v: MinMemory %d is not the feasibility boundary", shape, got)
		}
		// it holds at least the runtime, the pinned topology and the labels
		if floor := int64(kit.RuntimeFloor) + kit.TopologyBytes(shape) + 4*shape.Nodes; got < floor {
			t.Errorf("%+v: MinMemory %d below the topology floor %d", shape, got, floor)
		}
	}
	// medium's floor: the pinned topology makes 25% (256 MiB) impossible
	if got := minMemory(systest.MediumShape, train.DefaultConfig()); got <= 256<<20 || got > 512<<20 {
		t.Errorf("medium: MinMemory %d MiB", got>>20)
	}
}

// gpu_cache auto: the lines that fit, with their metadata, in the device
// budget the batch buffers and the window leave.
func TestDeviceCacheLines(t *testing.T) {
	l := Layout{LineBytes: 512, Lines: 1000}
	for _, c := range []struct {
		device, other, want int64
	}{
		{0, 0, 0},
		{8000, 0, 0},                   // the per-line slot map alone
		{8000 + 525*10, 0, 10},         // ten lines of 512 + 13 bytes
		{8000 + 525*10 + 100, 100, 10}, // the others first
		{8000 + 525*10, 1, 9},          // one byte short of ten
		{1 << 30, 0, 1000},             // at most the file
		{1 << 30, 1 << 31, 0},          // the others take it all
	} {
		if got := DeviceCacheLines(c.device, c.other, l); got != c.want {
			t.Errorf("device %d, other %d: %d lines, want %d", c.device, c.other, got, c.want)
		}
	}
	o, err := parseOptions(train.Config{})
	if err != nil || o.gpuCache != gpuCacheAuto {
		t.Fatalf("default gpu_cache %q (%v), want auto", o.gpuCache, err)
	}
}

// minMemory is the floor Register gives the variant: its sizing's.
var minMemory = kit.Sizer[options, kit.NoProfile, Layout](Plan).MinMemory(parseOptions)
