package diskgnn

import (
	"testing"

	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

// sizingBase: 1 M nodes of 512 B, 800 K accessed, batches of up to 100 K
// inputs; a cache of c rows leaves 100 K − c/10 of them cold.
func sizingBase() sizingInput {
	return sizingInput{
		Base: 40 << 20, Reserve: 32 << 20, Nodes: 1_000_000, RowBytes: 512, Accessed: 800_000,
		MaxInputs: 100_000, MaxGraphBytes: 5 << 20, Queue: 2, ReaderBytes: 24 << 20,
		PartBytes: 64 << 20, IDQuota: 16 << 20, GPURows: -1, CPURows: -1,
		MaxCold: func(c int64) int64 { return max(0, 100_000-c/10) },
	}
}

func TestPlanMemoryTable(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(*sizingInput)
		want   plan // zero fields are not checked
		feasib bool
	}{
		{
			// the artifact's split of one total (host + device budget):
			// the device budget holds 400 K rows next to the four
			// complete inputs, the host caches the other 400 K accessed
			name: "roomy", edit: func(in *sizingInput) { in.Budget = 2 << 30; in.Device = 400_000*512 + 4*100_000*512 },
			want:   plan{CPURows: 400_000, GPURows: 400_000, HostTrain: 391_608_224, HostPrepare: 484_041_152, Device: 409_600_000, Buffers: 4},
			feasib: true,
		},
		{
			name: "unlimited, no device budget: the host caches everything", edit: func(in *sizingInput) {},
			want:   plan{CPURows: 800_000, GPURows: 0},
			feasib: true,
		},
		{
			name: "unlimited host: the device budget's rows on the GPU, the rest on the host", edit: func(in *sizingInput) { in.Device = 4*100_000*512 + 1000*512 },
			want:   plan{CPURows: 799_000, GPURows: 1000},
			feasib: true,
		},
		{
			// the complete inputs are working memory: a device budget
			// they fill leaves no GPU cache
			name: "device budget of the inputs alone", edit: func(in *sizingInput) { in.Budget = 2 << 30; in.Device = 4*100_000*512 + 511 },
			want:   plan{CPURows: 800_000, GPURows: 0},
			feasib: true,
		},
		{
			// four partial inputs of every cold row do not fit 100 MiB; the
			// least budget is the plan without caches
			name: "cannot fit", edit: func(in *sizingInput) { in.Budget = 100 << 20 },
			want:   plan{MinBudget: 350_648_224},
			feasib: false,
		},
		{
			name: "explicit device cache", edit: func(in *sizingInput) { in.Budget = 2 << 30; in.GPURows = 700_000 },
			want:   plan{CPURows: 100_000, GPURows: 700_000},
			feasib: true,
		},
		{
			name: "explicit host cache", edit: func(in *sizingInput) { in.Budget = 2 << 30; in.CPURows = 1000; in.GPURows = 0 },
			want:   plan{CPURows: 1000, GPURows: 0},
			feasib: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := sizingBase()
			c.edit(&in)
			p := planMemory(in)
			if p.Feasible != c.feasib {
				t.Fatalf("feasible %v, want %v: %s", p.Feasible, c.feasib, p)
			}
			check := func(name string, got, want int64) {
				if want != 0 && got != want {
					t.Errorf("%s %d, want %d", name, got, want)
				}
			}
			check("cpu rows", p.CPURows, c.want.CPURows)
			if c.want.CPURows != 0 || c.want.GPURows != 0 {
				check("gpu rows", p.GPURows, c.want.GPURows)
				if c.want.GPURows == 0 && p.GPURows != 0 {
					t.Errorf("gpu rows %d, want 0", p.GPURows)
				}
			}
			check("host train", p.HostTrain, c.want.HostTrain)
			check("host prepare", p.HostPrepare, c.want.HostPrepare)
			check("device", p.Device, c.want.Device)
			check("min budget", p.MinBudget, c.want.MinBudget)
			check("buffers", int64(p.Buffers), int64(c.want.Buffers))
			if p.Feasible && in.Budget > 0 && max(p.HostTrain, p.HostPrepare) > in.Budget {
				t.Errorf("feasible plan needs %d > budget %d", max(p.HostTrain, p.HostPrepare), in.Budget)
			}
		})
	}
}

// TestPlanMemoryTight: under a tight budget the plan is the largest host
// cache that fits: one step more does not. The device cache is the device
// budget's, whatever the host budget.
func TestPlanMemoryTight(t *testing.T) {
	for _, budget := range []int64{380 << 20, 420 << 20, 512 << 20} {
		in := sizingBase()
		in.Budget = budget
		in.Device = 4*100_000*512 + 100_000*512 // 100 K rows next to the inputs
		p := planMemory(in)
		if !p.Feasible || max(p.HostTrain, p.HostPrepare) > budget || p.GPURows != 100_000 || p.Device != in.Device {
			t.Fatalf("budget %d MiB: %s (feasible %v)", budget>>20, p, p.Feasible)
		}
		most := in.Accessed - p.GPURows
		step := most / 256
		next := in.at(p.CPURows + step)
		if p.CPURows+step <= most && next.Feasible {
			t.Fatalf("budget %d MiB: %d host rows fit, but the plan keeps %d", budget>>20, next.CPURows, p.CPURows)
		}
		if p.MinBudget > budget {
			t.Fatalf("budget %d MiB fits, but the least budget is %d", budget>>20, p.MinBudget)
		}
	}
}

// TestPlanMemoryCountsEpochHeap: what the epochs keep on the Go heap —
// the base, each buffer's decoded degrees and chunk header, the disk-cache
// readers' bookkeeping — is the heap the collector's limit is set from
// (HeapNeed), and the host peak counts it with the quarter the collector
// lets it grow: at a fixed host cache, the readers' bookkeeping raises the
// peak by itself and a quarter, and the base is in the heap.
func TestPlanMemoryCountsEpochHeap(t *testing.T) {
	in := sizingBase()
	in.Budget = 2 << 30
	in.CPURows = 100_000
	without := planMemory(in)
	in.ReaderHeap = 4 * diskCallRows * storage.PlanBytesPerRow
	with := planMemory(in)
	if d := with.HostTrain - without.HostTrain; d != in.ReaderHeap+in.ReaderHeap/heapSlack {
		t.Fatalf("reader bookkeeping %d B raised the host peak by %d B, want %d", in.ReaderHeap, d, in.ReaderHeap+in.ReaderHeap/heapSlack)
	}
	perBuffer := int64(4+partialHeapPerInput) * in.MaxInputs
	if want := in.Base + int64(with.Buffers)*perBuffer + in.ReaderHeap; with.HeapNeed != want {
		t.Fatalf("heap need %d, want base %d + %d buffers × %d + readers %d = %d", with.HeapNeed, in.Base, with.Buffers, perBuffer, in.ReaderHeap, want)
	}
}

// TestMinMemory: the floor on the medium preset's shape (2 M nodes, 128-dim
// features, batches of 1000, no probed batch): kit.EstimateWorkspace's base
// (runtime floor, indptr, labels), the 32 MiB reserve, and the larger of
// pre-processing (its sequential readers, 12 bytes per node, the run's
// id quota and packing partition) and training (q + 2 partial inputs of
// every input row the 10 % device cache does not hold, the disk-cache
// readers). It does not depend on the limit asked.
func TestMinMemory(t *testing.T) {
	shape := train.DatasetShape{Nodes: 2_097_152, Edges: 31_486_938, FeatureDim: 128, Classes: 32, Train: 104_841}
	cfg := train.DefaultConfig()
	cfg.Batch = 1000
	for _, limit := range []int64{512 << 20, 0} {
		cfg.MemLimitBytes = limit
		if got := minMemory(shape, cfg); got != 122_842_376 {
			t.Errorf("limit %d: MinMemory %d, want 122842376", limit, got)
		}
	}
	cfg.Options = map[string]string{"io_threads": "0"}
	if got := minMemory(shape, cfg); got != 0 {
		t.Errorf("invalid options: %d, want 0 (Validate reports them)", got)
	}
}

// TestPlanMemoryQueues: a budget that holds the pipeline only with queues
// of one batch gets a plan for one (not for the paper's two, which would not
// fit), unless the depth was chosen; a budget that holds two keeps two; one
// that holds neither is refused with the least budget of one.
func TestPlanMemoryQueues(t *testing.T) {
	in := sizingBase()
	in.Queue = 2
	in.PartBytes, in.IDQuota = 1<<20, 1<<20 // the pipeline's buffers bind, not pre-processing
	two, one := in, in
	one.Queue = 1
	// least budgets of the two depths, found by kit.MinBudget's bisection
	least := func(s sizingInput) int64 {
		return kit.MinBudget(func(b int64) bool { s.Budget = b; return planMemory(s).Feasible })
	}
	l2, l1 := least(two), least(one)
	if l1 >= l2 {
		t.Fatalf("queues of one need %d MiB, of two %d MiB: want fewer", l1>>20, l2>>20)
	}
	mid := (l1 + l2) / 2
	cases := []struct {
		budget    int64
		fixed     bool
		feasible  bool
		wantQueue int
	}{
		{l2, false, true, 2},
		{l2 + 64<<20, false, true, 2},
		{mid, false, true, 1},
		{l1, false, true, 1},
		{mid, true, false, 2},
		{l1 - 1<<20, false, false, 2},
	}
	for _, c := range cases {
		s := in
		s.Budget = c.budget
		p, q, _ := planMemoryQueues(s, c.fixed)
		if p.Feasible != c.feasible || q != c.wantQueue {
			t.Errorf("budget %d MiB fixed %v: feasible %v queue %d, want %v %d (%s)", c.budget>>20, c.fixed, p.Feasible, q, c.feasible, c.wantQueue, p)
		}
		if p.Feasible && (p.Buffers != q+2 || max(p.HostTrain, p.HostPrepare) > c.budget) {
			t.Errorf("budget %d MiB: plan %s does not match queue %d or exceeds the budget", c.budget>>20, p, q)
		}
	}
}

// minMemory is the floor Register gives DiskGNN: its sizing's.
var minMemory = kit.Sizer[options, profile, plan](size).MinMemory(parseOptions)
