package ginex

import (
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

const mib = int64(1) << 20

// The sizing fixture: 2^20 nodes (a sampler's id map is dense: 8 MiB),
// 16 Mi edges, 512-byte rows (features 512 MiB + a 4 MiB address table;
// topology 8 + 136 = 144 MiB); 105 iterations per epoch; profiled M_b
// 20,480 input nodes (a batch input of M_b + a tenth = 22,528 rows = 11
// MiB), 20,000 on average; 1 MiB per sampled batch; base 40 MiB; the model
// step held outside; 4 samplers. The main loop's heap is 40 + 4 × 1
// (prefetched runtime files) + 8192 × 512 B (a read chunk) + 4 MiB (the
// cache's address table) = 52 MiB, its peak 52 × 1.25 + 2 × 11 = 87 MiB
// (76 with one buffer) plus the reserve. The sample stage's heap is 40 +
// 4 × (8 + 1) MiB + the changeset workspace of 105 × 20,000 accesses
// (4 + 4 MiB + 8,400,004 bytes) = 96,480,388 bytes.
var (
	fixtureShape = train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Classes: 32, Train: 105000}
	fixtureWS    = kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, MeanInputs: 20000, BatchBytes: mib, RowBytes: 512}
)

func fixtureOptions(t *testing.T, opts map[string]string) options {
	t.Helper()
	all := map[string]string{"samplers": "4"}
	for k, v := range opts {
		all[k] = v
	}
	o, err := parseOptions(train.Config{Options: all})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestSizing(t *testing.T) {
	const (
		sampleHeap = 96480388
		mainHeap   = 52 * mib
		topoBytes  = 144 * mib
		featBytes  = 516 * mib
	)
	cases := []struct {
		name   string
		budget int64
		opts   map[string]string
		want   plan
	}{
		{
			// no budget: both caches hold everything
			name: "unlimited",
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: sampleHeap + sampleHeap/4 + 32*mib,
				mainPeak: 119 * mib, xBuffers: 2, ncBytes: topoBytes, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
		{
			// 1 GiB, reserve a tenth (107,374,182): both caches capped by
			// what the graph has
			name: "roomy", budget: 1024 * mib,
			want: plan{superbatch: 105, reserve: 107374182, sampleHeap: sampleHeap, samplePeak: 227974667,
				mainPeak: 87*mib + 107374182, xBuffers: 2, ncBytes: topoBytes, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
		{
			// 256 MiB: neighbour cache 256 MiB − 154,154,917, feature cache
			// 256 − 119 MiB = 137 MiB: (137 − 4) MiB / 512 B rows
			name: "budgeted", budget: 256 * mib,
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: 154154917,
				mainPeak: 119 * mib, xBuffers: 2, ncBytes: 256*mib - 154154917, fcBytes: 137 * mib, fcEntries: 272384, feasible: true},
		},
		{
			// 115 MiB: two batch inputs (119 MiB) do not fit, one (108 MiB)
			// does; 7 MiB of feature cache, no neighbour cache
			name: "one buffer for the budget", budget: 115 * mib,
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: 154154917,
				mainPeak: 108 * mib, xBuffers: 1, oneBuffer: oneBufferBudget, fcBytes: 7 * mib, fcEntries: 6144, feasible: true},
		},
		{
			// 100 MiB: one batch input next to the main loop's heap fits,
			// not with the collection slack and the reserve (the run warns)
			name: "reserve not kept", budget: 100 * mib,
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: 154154917,
				mainPeak: 108 * mib, xBuffers: 1, oneBuffer: oneBufferBudget, overReserve: true, feasible: true},
		},
		{
			// 60 MiB: not even the main loop's heap (52 MiB) and one batch
			// input (11 MiB)
			name: "cannot fit", budget: 60 * mib,
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: 154154917,
				mainPeak: 108 * mib, xBuffers: 1, oneBuffer: oneBufferBudget, overReserve: true, feasible: false},
		},
		{
			// x_buffers=1 asked: one buffer even where two fit
			name: "one buffer asked", budget: 1024 * mib, opts: map[string]string{"x_buffers": "1"},
			want: plan{superbatch: 105, reserve: 107374182, sampleHeap: sampleHeap, samplePeak: 227974667,
				mainPeak: 76*mib + 107374182, xBuffers: 1, oneBuffer: oneBufferAsked, ncBytes: topoBytes, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
		{
			// x_buffers=2 forced where they do not fit with the reserve
			name: "two buffers forced", budget: 115 * mib, opts: map[string]string{"x_buffers": "2"},
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: 154154917,
				mainPeak: 119 * mib, xBuffers: 2, overReserve: true, minNeed: 74 * mib, feasible: true},
		},
		{
			// x_buffers=2 forced below the heap and two batch inputs
			name: "two buffers forced cannot fit", budget: 70 * mib, opts: map[string]string{"x_buffers": "2"},
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: 154154917,
				mainPeak: 119 * mib, xBuffers: 2, overReserve: true, minNeed: 74 * mib, feasible: false},
		},
		{
			// 10 MiB of runtime files hold two superbatches of 10
			// iterations (20,000 × 24 bytes each): a smaller changeset
			// workspace (200,000 accesses)
			name: "superbatch cut", budget: 256 * mib, opts: map[string]string{"runfile_budget": "10MiB"},
			want: plan{superbatch: 10, superbatchCut: true, reserve: 32 * mib, sampleHeap: 88880388, samplePeak: 144654917,
				mainPeak: 119 * mib, xBuffers: 2, ncBytes: 256*mib - 144654917, fcBytes: 137 * mib, fcEntries: 272384, feasible: true},
		},
		{
			// explicit cache sizes win over the budget (capped by the graph)
			name: "explicit caches", budget: 256 * mib, opts: map[string]string{"neighbor_cache": "1MiB", "feature_cache": "2GiB"},
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: 154154917,
				mainPeak: 119 * mib, xBuffers: 2, ncBytes: mib, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.want.maxBatch, c.want.xBytes, c.want.mainHeap = 22528, 11*mib, mainHeap
			if c.want.minNeed == 0 {
				c.want.minNeed = 63 * mib // the main loop's heap and one batch input
			}
			got := size(sizingInput{budget: c.budget, ws: fixtureWS, shape: fixtureShape, batches: 105, opt: fixtureOptions(t, c.opts)})
			if got != c.want {
				t.Errorf("plan\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestMinBudget: the smallest feasible budget of the fixture holds the
// main loop's heap (52 MiB) and one batch input (11 MiB).
func TestMinBudget(t *testing.T) {
	opt := fixtureOptions(t, nil)
	feasible := func(b int64) bool {
		return size(sizingInput{budget: b, ws: fixtureWS, shape: fixtureShape, batches: 105, opt: opt}).feasible
	}
	if got := kit.MinBudget(feasible); got != 63*mib {
		t.Fatalf("min budget %d, want %d", got, 63*mib)
	}
	for b := 63 * mib; b < 4096*mib; b += 7 * mib {
		if !feasible(b) {
			t.Fatalf("budget %d above the minimum is infeasible", b)
		}
	}
	cfg := train.DefaultConfig()
	if m := minMemory(fixtureShape, cfg); m <= 0 || m > 63*mib {
		t.Fatalf("MinMemory %d, want a lower bound in (0, %d]", m, 63*mib)
	}
}
