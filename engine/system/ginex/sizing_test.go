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
// MiB), 20,000 on average; 1 MiB per sampled batch, 100,000 index entries
// in its largest hop; base 40 MiB; the model step held outside; 4
// samplers; Readers with 8 MiB I/O buffers.
//
// The main loop's heap is 40 + 4 × 1 (prefetched runtime files) + 8192 ×
// (512 + 384) B (a read chunk and its Reader's bookkeeping) + 4 MiB (the
// cache's address table) = 55 MiB; its peak 55 × 1.25 + 2 × 11 (batch
// inputs) + 8 (the Reader's buffer) = 98.75 MiB (87.75 with one buffer)
// plus the reserve.
//
// A sampler holds 8 MiB (id map) + 1 MiB (batch) + 2,000,000 (hop
// scratch, 20 B per entry) + 2,400,000 (the cache split, 24 B per entry) +
// 100,000 × 16 + 16,384 × (16 + 384) = 8,153,600 (the disk Reader's sorted
// chunks) = 21,990,784 bytes; four 87,963,136. The changeset workspace of
// 105 × 20,000 accesses is 4 + 4 MiB + 8,400,004 = 16,788,612 bytes and
// does not overlap sampling (one superbatch per epoch), so the sample
// stage's heap is 40 MiB + 87,963,136 = 129,906,176 bytes, its peak that
// × 1.25 + 32 MiB (the samplers' Readers' buffers) + the reserve.
var (
	fixtureShape = train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Classes: 32, Train: 105000}
	fixtureWS    = kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, MeanInputs: 20000, BatchBytes: mib, MaxHopEntries: 100000, RowBytes: 512}
)

const fixtureReaderBuf = 8 * mib

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
		sampleHeap = 129906176
		samplePeak = sampleHeap + sampleHeap/4 + 32*mib + 32*mib // 229,491,584
		mainHeap   = 55 * mib
		mainPeak   = 137101312 // 98.75 MiB + the 32 MiB reserve
		mainPeak1  = mainPeak - 11*mib
		topoBytes  = 144 * mib
		featBytes  = 516 * mib
		roomy      = 107374182 // a tenth of 1 GiB
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
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, ncBytes: topoBytes, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
		{
			// 1 GiB, reserve a tenth: both caches capped by what the
			// graph has
			name: "roomy", budget: 1024 * mib,
			want: plan{superbatch: 105, reserve: roomy, sampleHeap: sampleHeap, samplePeak: samplePeak - 32*mib + roomy,
				mainPeak: mainPeak - 32*mib + roomy, xBuffers: 2, ncBytes: topoBytes, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
		{
			// 256 MiB: neighbour cache 256 MiB − 229,491,584 = 38,943,872,
			// feature cache 256 MiB − 137,101,312 = 131,334,144 bytes:
			// (that − 4 MiB) / 512 B rows = 248,320 entries
			name: "budgeted", budget: 256 * mib,
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, ncBytes: 38943872, fcBytes: 131334144, fcEntries: 248320, feasible: true},
		},
		{
			// 125 MiB: two batch inputs (130.75 MiB) do not fit, one
			// (119.75 MiB) does; 5.25 MiB of feature cache (2,560 rows),
			// no neighbour cache
			name: "one buffer for the budget", budget: 125 * mib,
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak1, xBuffers: 1, oneBuffer: oneBufferBudget, fcBytes: 125*mib - mainPeak1, fcEntries: 2560, feasible: true},
		},
		{
			// 100 MiB: one batch input next to the main loop's heap fits,
			// not with the collection slack and the reserve: the run
			// would warn of an OOM kill, so the plan is infeasible (the
			// floor every caller checks, train.CheckFeasible)
			name: "reserve not kept", budget: 100 * mib,
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak1, xBuffers: 1, oneBuffer: oneBufferBudget, overReserve: true, feasible: false},
		},
		{
			// 70 MiB: not even the main loop's heap (55 MiB), one batch
			// input (11 MiB) and the Reader's buffer (8 MiB)
			name: "cannot fit", budget: 70 * mib,
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak1, xBuffers: 1, oneBuffer: oneBufferBudget, overReserve: true, feasible: false},
		},
		{
			// x_buffers=1 asked: one buffer even where two fit
			name: "one buffer asked", budget: 1024 * mib, opts: map[string]string{"x_buffers": "1"},
			want: plan{superbatch: 105, reserve: roomy, sampleHeap: sampleHeap, samplePeak: samplePeak - 32*mib + roomy,
				mainPeak: mainPeak1 - 32*mib + roomy, xBuffers: 1, oneBuffer: oneBufferAsked, ncBytes: topoBytes, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
		{
			// x_buffers=2 forced where they do not fit with the reserve
			name: "two buffers forced", budget: 115 * mib, opts: map[string]string{"x_buffers": "2"},
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, overReserve: true, minNeed: 85 * mib, feasible: false},
		},
		{
			// x_buffers=2 forced below the heap, two batch inputs and
			// the Reader's buffer
			name: "two buffers forced cannot fit", budget: 80 * mib, opts: map[string]string{"x_buffers": "2"},
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, overReserve: true, minNeed: 85 * mib, feasible: false},
		},
		{
			// 10 MiB of runtime files hold two superbatches of 10
			// iterations (20,000 × 24 bytes each): 11 superbatches per
			// epoch, so pass 3 overlaps sampling and the sample stage
			// holds both: 40 MiB + 87,963,136 + a changeset workspace of
			// 200,000 accesses (8 MiB + 800,004) = 139,094,788 bytes
			name: "superbatch cut", budget: 256 * mib, opts: map[string]string{"runfile_budget": "10MiB"},
			want: plan{superbatch: 10, superbatchCut: true, reserve: 32 * mib, sampleHeap: 139094788, samplePeak: 240977349,
				changesetsOverlap: true, mainPeak: mainPeak, xBuffers: 2, ncBytes: 256*mib - 240977349, fcBytes: 131334144, fcEntries: 248320, feasible: true},
		},
		{
			// explicit cache sizes win over the budget (capped by the graph)
			name: "explicit caches", budget: 256 * mib, opts: map[string]string{"neighbor_cache": "1MiB", "feature_cache": "2GiB"},
			want: plan{superbatch: 105, reserve: 32 * mib, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, ncBytes: mib, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.want.maxBatch, c.want.xBytes, c.want.mainHeap = 22528, 11*mib, mainHeap
			c.want.sampleOff, c.want.readerBuf = 4*fixtureReaderBuf, fixtureReaderBuf
			if c.want.minNeed == 0 {
				c.want.minNeed = 74 * mib // the main loop's heap, one batch input, the Reader's buffer
			}
			got := size(sizingInput{budget: c.budget, ws: fixtureWS, shape: fixtureShape, batches: 105, opt: fixtureOptions(t, c.opts), readerBuf: fixtureReaderBuf})
			if got != c.want {
				t.Errorf("plan\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestMinBudget: the smallest feasible budget of the fixture is the main
// loop's peak with one batch input: its heap (55 MiB) with the collection
// slack, one batch input (11 MiB), the Reader's buffer (8 MiB) and the
// 32 MiB reserve (mainPeak1, 119.75 MiB) — the least budget at which the
// run does not warn of an OOM kill.
func TestMinBudget(t *testing.T) {
	opt := fixtureOptions(t, nil)
	feasible := func(b int64) bool {
		return size(sizingInput{budget: b, ws: fixtureWS, shape: fixtureShape, batches: 105, opt: opt, readerBuf: fixtureReaderBuf}).feasible
	}
	const mainPeak1 = 137101312 - 11*mib
	if got := kit.MinBudget(feasible); got != mainPeak1 {
		t.Fatalf("min budget %d, want %d", got, mainPeak1)
	}
	if p := size(sizingInput{budget: mainPeak1, ws: fixtureWS, shape: fixtureShape, batches: 105, opt: opt, readerBuf: fixtureReaderBuf}); p.overReserve {
		t.Fatal("the least feasible budget warns of an OOM kill")
	}
	for b := int64(mainPeak1); b < 4096*mib; b += 7 * mib {
		if !feasible(b) {
			t.Fatalf("budget %d above the minimum is infeasible", b)
		}
	}
	cfg := train.DefaultConfig()
	if m := minMemory(fixtureShape, cfg); m <= 0 || m > mainPeak1 {
		t.Fatalf("MinMemory %d, want a lower bound in (0, %d]", m, mainPeak1)
	}
}
