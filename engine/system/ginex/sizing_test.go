package ginex

import (
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

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
	fixtureShape = systest.FixtureShape(105000)
	fixtureCfg   = train.Config{Batch: 1000} // 105 iterations per epoch
	fixtureWS    = kit.Workspace{BaseBytes: 40 * systest.MiB, MaxInputs: 20480, MeanInputs: 20000, BatchBytes: systest.MiB, MaxHopEntries: 100000, RowBytes: 512}
)

const fixtureReaderBuf = 8 * systest.MiB

func fixtureOptions(t *testing.T, opts map[string]string) options {
	t.Helper()
	return systest.Options(t, parseOptions, train.Config{}, map[string]string{"samplers": "4"}, opts)
}

func TestSizing(t *testing.T) {
	const (
		sampleHeap = 129906176
		samplePeak = sampleHeap + sampleHeap/4 + 32*systest.MiB + 32*systest.MiB // 229,491,584
		mainHeap   = 55 * systest.MiB
		mainPeak   = 137101312 // 98.75 MiB + the 32 MiB reserve
		mainPeak1  = mainPeak - 11*systest.MiB
		topoBytes  = 144 * systest.MiB
		featBytes  = 516 * systest.MiB
		roomy      = 107374182 // a tenth of 1 GiB
	)
	cases := []systest.SizingCase[plan]{
		{
			// no Budget: both caches hold everything
			Name: "unlimited",
			Want: plan{superbatch: 105, reserve: 32 * systest.MiB, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, ncBytes: topoBytes, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
		{
			// 1 GiB, reserve a tenth: both caches capped by what the
			// graph has
			Name: "roomy", Budget: 1024 * systest.MiB,
			Want: plan{superbatch: 105, reserve: roomy, sampleHeap: sampleHeap, samplePeak: samplePeak - 32*systest.MiB + roomy,
				mainPeak: mainPeak - 32*systest.MiB + roomy, xBuffers: 2, ncBytes: topoBytes, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
		{
			// 256 MiB: neighbour cache 256 MiB − 229,491,584 = 38,943,872,
			// feature cache 256 MiB − 137,101,312 = 131,334,144 bytes:
			// (that − 4 MiB) / 512 B rows = 248,320 entries
			Name: "budgeted", Budget: 256 * systest.MiB,
			Want: plan{superbatch: 105, reserve: 32 * systest.MiB, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, ncBytes: 38943872, fcBytes: 131334144, fcEntries: 248320, feasible: true},
		},
		{
			// 125 MiB: two batch inputs (130.75 MiB) do not fit, one
			// (119.75 MiB) does; 5.25 MiB of feature cache (2,560 rows),
			// no neighbour cache
			Name: "one buffer for the budget", Budget: 125 * systest.MiB,
			Want: plan{superbatch: 105, reserve: 32 * systest.MiB, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak1, xBuffers: 1, oneBuffer: oneBufferBudget, fcBytes: 125*systest.MiB - mainPeak1, fcEntries: 2560, feasible: true},
		},
		{
			// 100 MiB: one batch input next to the main loop's heap fits,
			// not with the collection slack and the reserve: the run
			// would warn of an OOM kill, so the plan is infeasible (the
			// floor every caller checks, train.CheckFeasible)
			Name: "reserve not kept", Budget: 100 * systest.MiB,
			Want: plan{superbatch: 105, reserve: 32 * systest.MiB, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak1, xBuffers: 1, oneBuffer: oneBufferBudget, overReserve: true, feasible: false},
		},
		{
			// 70 MiB: not even the main loop's heap (55 MiB), one batch
			// input (11 MiB) and the Reader's buffer (8 MiB)
			Name: "cannot fit", Budget: 70 * systest.MiB,
			Want: plan{superbatch: 105, reserve: 32 * systest.MiB, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak1, xBuffers: 1, oneBuffer: oneBufferBudget, overReserve: true, feasible: false},
		},
		{
			// x_buffers=1 asked: one buffer even where two fit
			Name: "one buffer asked", Budget: 1024 * systest.MiB, Opts: map[string]string{"x_buffers": "1"},
			Want: plan{superbatch: 105, reserve: roomy, sampleHeap: sampleHeap, samplePeak: samplePeak - 32*systest.MiB + roomy,
				mainPeak: mainPeak1 - 32*systest.MiB + roomy, xBuffers: 1, oneBuffer: oneBufferAsked, ncBytes: topoBytes, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
		{
			// x_buffers=2 forced where they do not fit with the reserve
			Name: "two buffers forced", Budget: 115 * systest.MiB, Opts: map[string]string{"x_buffers": "2"},
			Want: plan{superbatch: 105, reserve: 32 * systest.MiB, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, overReserve: true, minNeed: 85 * systest.MiB, feasible: false},
		},
		{
			// x_buffers=2 forced below the heap, two batch inputs and
			// the Reader's buffer
			Name: "two buffers forced cannot fit", Budget: 80 * systest.MiB, Opts: map[string]string{"x_buffers": "2"},
			Want: plan{superbatch: 105, reserve: 32 * systest.MiB, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, overReserve: true, minNeed: 85 * systest.MiB, feasible: false},
		},
		{
			// 10 MiB of runtime files hold two superbatches of 10
			// iterations (20,000 × 24 bytes each): 11 superbatches per
			// epoch, so pass 3 overlaps sampling and the sample stage
			// holds both: 40 MiB + 87,963,136 + a changeset workspace of
			// 200,000 accesses (8 MiB + 800,004) = 139,094,788 bytes
			Name: "superbatch cut", Budget: 256 * systest.MiB, Opts: map[string]string{"runfile_budget": "10MiB"},
			Want: plan{superbatch: 10, superbatchCut: true, reserve: 32 * systest.MiB, sampleHeap: 139094788, samplePeak: 240977349,
				changesetsOverlap: true, mainPeak: mainPeak, xBuffers: 2, ncBytes: 256*systest.MiB - 240977349, fcBytes: 131334144, fcEntries: 248320, feasible: true},
		},
		{
			// explicit cache sizes win over the budget (capped by the graph)
			Name: "explicit caches", Budget: 256 * systest.MiB, Opts: map[string]string{"neighbor_cache": "1MiB", "feature_cache": "2GiB"},
			Want: plan{superbatch: 105, reserve: 32 * systest.MiB, sampleHeap: sampleHeap, samplePeak: samplePeak,
				mainPeak: mainPeak, xBuffers: 2, ncBytes: systest.MiB, fcBytes: featBytes, fcEntries: 1 << 20, feasible: true},
		},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			c.Want.maxBatch, c.Want.xBytes, c.Want.mainHeap = 22528, 11*systest.MiB, mainHeap
			c.Want.sampleOff, c.Want.readerBuf = 4*fixtureReaderBuf, fixtureReaderBuf
			if c.Want.minNeed == 0 {
				c.Want.minNeed = 74 * systest.MiB // the main loop's heap, one batch input, the Reader's buffer
			}
			got := size(kit.Sizing[options, profile]{Cfg: fixtureCfg, Budget: c.Budget, WS: fixtureWS, Shape: fixtureShape, Opt: fixtureOptions(t, c.Opts), Prof: profile{readerBuf: fixtureReaderBuf}})
			if got != c.Want {
				t.Errorf("plan\n got %+v\nwant %+v", got, c.Want)
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
		return size(kit.Sizing[options, profile]{Cfg: fixtureCfg, Budget: b, WS: fixtureWS, Shape: fixtureShape, Opt: opt, Prof: profile{readerBuf: fixtureReaderBuf}}).feasible
	}
	const mainPeak1 = 137101312 - 11*systest.MiB
	if got := kit.MinBudget(feasible); got != mainPeak1 {
		t.Fatalf("min budget %d, want %d", got, mainPeak1)
	}
	if p := size(kit.Sizing[options, profile]{Cfg: fixtureCfg, Budget: mainPeak1, WS: fixtureWS, Shape: fixtureShape, Opt: opt, Prof: profile{readerBuf: fixtureReaderBuf}}); p.overReserve {
		t.Fatal("the least feasible budget warns of an OOM kill")
	}
	systest.CheckMinBudget(t, feasible, mainPeak1, minMemory, fixtureShape)
}

// TestSizingWithoutTrainingNodes: a shape without a training split (a
// preset's dataset before it is generated, as the dashboard's preview
// sees it) has no batches; the plan still has a superbatch of one and the
// floor is a number, not a division by zero.
func TestSizingWithoutTrainingNodes(t *testing.T) {
	opt := fixtureOptions(t, nil)
	noTrain := fixtureShape
	noTrain.Train = 0
	p := size(kit.Sizing[options, profile]{Cfg: fixtureCfg, Budget: 256 * systest.MiB, WS: fixtureWS, Shape: noTrain, Opt: opt, Prof: profile{readerBuf: fixtureReaderBuf}})
	if p.superbatch != 1 || p.changesetsOverlap {
		t.Errorf("no batches: superbatch %d, overlap %v; want 1, false", p.superbatch, p.changesetsOverlap)
	}
	shape := fixtureShape
	shape.Train = 0
	cfg := train.DefaultConfig()
	cfg.System = Name
	if need := minMemory(shape, cfg); need <= 0 {
		t.Errorf("floor without training nodes: %d", need)
	}
}

// minMemory is the floor Register gives Ginex: its sizing's.
var minMemory = kit.Sizer[options, profile, plan](size).MinMemory(parseOptions)
