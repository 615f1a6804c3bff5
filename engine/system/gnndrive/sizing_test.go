package gnndrive

import (
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

const mib = int64(1) << 20

// The sizing fixture, chosen so that the plan's parts are whole MiB:
// 2^20 nodes (a sampler's id map is dense: 8 MiB), 512-byte rows, 128 MiB
// of indices; profiled M_b 20,480 input nodes, so M_b × batch_margin 1.1
// = 22,528 slots = 11 MiB of rows; one mini-batch in flight 1 MiB (ids,
// blocks and aliases); base 40 MiB; the model step held outside. The Go
// heap of the paper's pipeline (4 samplers, 4 extractors, queues 6/4) is
// 40 + 19 × 1 (batches in flight) + 4 × 8 (id maps) + 8 (mapping table)
// + 4 × 1 (request bookkeeping) = 103 MiB; an extractor's staging is
// 128 × 64 KiB = 8 MiB; a slot costs 512 + 17 bytes.
var (
	fixtureShape = train.DatasetShape{Nodes: 1 << 20, Edges: 16 << 20, FeatureDim: 128, Classes: 32, Train: 50000}
	fixtureWS    = kit.Workspace{BaseBytes: 40 * mib, MaxInputs: 20480, MeanInputs: 20000, BatchBytes: mib - 20480*4, RowBytes: 512}
)

func fixtureOptions(t *testing.T, opts map[string]string) options {
	t.Helper()
	o, err := parseOptions(train.Config{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestSizing(t *testing.T) {
	cases := []struct {
		name   string
		budget int64
		opts   map[string]string
		// inPlace: the model reads an aliased batch input in place
		inPlace bool
		want    plan
	}{
		{
			// no budget: the paper's buffer, (4 + 1) × M_b slots
			name: "unlimited",
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * mib, staging: 32 * mib, offHeap: (112640 + 22528) * 512, feasible: true},
		},
		{
			// 1 GiB: workspace 103 × 1.25 + 11 (x) + 32 (staging) MiB +
			// 107,374,182 (reserve, a tenth); the buffer and the indices'
			// page cache fit
			name: "roomy", budget: 1024 * mib,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * mib, staging: 32 * mib, keepTopo: 128 * mib, work: 287467110, availAll: 1486341, availTopo: 1232621,
				offHeap: (112640 + 22528) * 512, feasible: true},
		},
		{
			// 380 MiB: 83,747 slots next to the cached indices, room for
			// the reservation of 3 extractors (3 × 22,528), not 4; the heap
			// then holds one extractor less (101 MiB)
			name: "fewer extractors", budget: 380 * mib,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 83747, samplers: 4, extractors: 3, extractQ: 6, trainQ: 4,
				heapNeed: 101 * mib, staging: 24 * mib, keepTopo: 128 * mib, work: 219938816, availAll: 337467, availTopo: 83747,
				offHeap: (83747 + 22528) * 512, feasible: true},
		},
		{
			// 256 MiB: 54,788,096 bytes after the workspace (213,647,360):
			// 103,569 slots, no room for the indices' page cache
			name: "topology squeezed", budget: 256 * mib,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 103569, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * mib, staging: 32 * mib, work: 213647360, availAll: 103569,
				offHeap: (103569 + 22528) * 512, topoSqueezed: true, feasible: true},
		},
		{
			// 192 MiB: not one reservation next to the paper's queues;
			// shortened to 2 samplers (2 cores), queues 1/1, one
			// extractor: heap 71 MiB, working set 139.75 MiB
			name: "queues shortened", budget: 192 * mib,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 103569, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * mib, staging: 8 * mib, work: 213647360, shortWork: 146538496,
				offHeap: (103569 + 22528) * 512, topoSqueezed: true, queuesShortened: true, feasible: true},
		},
		{
			// 150 MiB: 20,317 slots after the shortest pipeline with its
			// slack, staging and reserve, fewer than one M_b: the heap, x
			// and one reservation (97,900,544 bytes) fit but the reserve
			// is not kept, so the run would warn of an OOM kill: not
			// feasible (train.CheckFeasible refuses it before it starts)
			name: "reserve not kept", budget: 150 * mib,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 22528, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * mib, staging: 8 * mib, work: 213647360, shortWork: 146538496,
				offHeap: (22528 + 22528) * 512, topoSqueezed: true, queuesShortened: true, overReserve: true, feasible: false},
		},
		{
			// 90 MiB: below the shortest pipeline's heap (71 MiB), x (11
			// MiB) and one reservation (22,528 × 529 bytes): cannot fit
			name: "cannot fit", budget: 90 * mib,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 22528, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * mib, staging: 8 * mib, work: 213647360, shortWork: 146538496,
				offHeap: (22528 + 22528) * 512, topoSqueezed: true, queuesShortened: true, overReserve: true, feasible: false},
		},
		{
			// a buffer smaller than the reservation is raised to N_e × M_b
			// without shortening the queues when the budget holds it
			name: "small buffer_factor", budget: 1024 * mib, opts: map[string]string{"buffer_factor": "0.01"},
			want: plan{maxBatch: 22528, paperSlots: 1126, slots: 90112, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * mib, staging: 32 * mib, keepTopo: 128 * mib, work: 287467110, availAll: 1486341, availTopo: 1232621,
				offHeap: (90112 + 22528) * 512, feasible: true},
		},
		{
			// device buffer at 256 MiB: host memory for 1 extractor next
			// to the indices (2 would need 193.75 MiB + 128 MiB of
			// indices); the buffer and x (66 MiB) are held outside; the
			// extractor's M_b rows of host staging (11 MiB) are in the
			// budget, leaving the indices 256 - 97 × 1.25 - 11 - 32 =
			// 91.75 MiB
			name: "device buffer", budget: 256 * mib, opts: map[string]string{"feature_buffer": "device"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 1, extractQ: 6, trainQ: 4,
				heapNeed: 97 * mib, staging: 8 * mib, hostStaging: 11 * mib, keepTopo: 96206848, onDevice: true, outside: (112640 + 22528) * 512,
				offHeap: 11 * mib, feasible: true},
		},
		{
			// device buffer at 320 MiB: 2 extractors would fit next to the
			// indices without their staging (171.75 + 128 MiB), not with
			// it (193.75 + 128 MiB)
			name: "device staging charged", budget: 320 * mib, opts: map[string]string{"feature_buffer": "device"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 1, extractQ: 6, trainQ: 4,
				heapNeed: 97 * mib, staging: 8 * mib, hostStaging: 11 * mib, keepTopo: 128 * mib, onDevice: true, outside: (112640 + 22528) * 512,
				offHeap: 11 * mib, feasible: true},
		},
		{
			// device buffer at 100 MiB: below the heap of the paper's
			// queues with one extractor (97 MiB) and its staging (11 MiB)
			name: "device buffer cannot fit", budget: 100 * mib, opts: map[string]string{"feature_buffer": "device"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 1, extractQ: 6, trainQ: 4,
				heapNeed: 97 * mib, staging: 8 * mib, hostStaging: 11 * mib, onDevice: true, outside: (112640 + 22528) * 512,
				offHeap: 11 * mib, feasible: false},
		},
		{
			// batch_input=auto with a model that reads aliases in place:
			// a budget that holds the paper's pipeline keeps the copy
			name: "auto keeps the copy", budget: 1024 * mib, inPlace: true,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * mib, staging: 32 * mib, keepTopo: 128 * mib, work: 287467110, availAll: 1486341, availTopo: 1232621,
				offHeap: (112640 + 22528) * 512, feasible: true},
		},
		{
			// 192 MiB: with the copy the queues are shortened, so the
			// batch input is aliased: the working set of the paper's
			// queues without x (103 × 1.25 + 32 staging + 32 reserve MiB)
			// still leaves nothing, the shortened one (71 × 1.25 + 8 + 32
			// = 128.75 MiB) leaves 125,373 slots, more than the paper's
			// buffer
			name: "auto aliases under shortened queues", budget: 192 * mib, inPlace: true,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * mib, staging: 8 * mib, work: 202113024, shortWork: 135004160,
				offHeap: 112640 * 512, topoSqueezed: true, queuesShortened: true, aliasInput: true, feasible: true},
		},
		{
			// 90 MiB cannot hold the copy (see "cannot fit"); without it
			// the heap (71 MiB) and one reservation fit, not the reserve:
			// the aliased plan is tried, and is not feasible either
			name: "alias tried where the copy cannot fit", budget: 90 * mib, inPlace: true,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 22528, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * mib, staging: 8 * mib, work: 202113024, shortWork: 135004160,
				offHeap: 22528 * 512, topoSqueezed: true, queuesShortened: true, overReserve: true, aliasInput: true, feasible: false},
		},
		{
			// batch_input=gather keeps the copy whatever the budget
			name: "gather asked", budget: 90 * mib, inPlace: true, opts: map[string]string{"batch_input": "gather"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 22528, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * mib, staging: 8 * mib, work: 213647360, shortWork: 146538496,
				offHeap: (22528 + 22528) * 512, topoSqueezed: true, queuesShortened: true, overReserve: true, feasible: false},
		},
		{
			// batch_input=alias with a model that copies anyway: gathered
			name: "alias asked, model copies", budget: 1024 * mib, opts: map[string]string{"batch_input": "alias"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * mib, staging: 32 * mib, keepTopo: 128 * mib, work: 287467110, availAll: 1486341, availTopo: 1232621,
				offHeap: (112640 + 22528) * 512, feasible: true},
		},
		{
			// device buffer, batch_input=alias: no batch input held outside
			name: "device buffer aliased", budget: 256 * mib, inPlace: true, opts: map[string]string{"feature_buffer": "device", "batch_input": "alias"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 1, extractQ: 6, trainQ: 4,
				heapNeed: 97 * mib, staging: 8 * mib, hostStaging: 11 * mib, keepTopo: 96206848, onDevice: true, outside: 112640 * 512,
				offHeap: 11 * mib, aliasInput: true, feasible: true},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.want.aliasInput {
				c.want.xBytes = 22528 * 512
			}
			c.want.perBatch, c.want.topo = mib, 128*mib
			// the shortest pipeline's heap (71 MiB), x and one reservation;
			// device: the paper's queues with one extractor (97 MiB) and
			// its staging (11 MiB)
			c.want.minNeed = 71*mib + c.want.xBytes + 22528*529
			if c.want.onDevice {
				c.want.minNeed = 108 * mib
			}
			got := size(sizingInput{budget: c.budget, ws: fixtureWS, shape: fixtureShape, opt: fixtureOptions(t, c.opts), cpus: 2, inPlace: c.inPlace})
			if got != c.want {
				t.Errorf("plan\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestMinBudget: the smallest feasible budget of the fixture is the
// least at which the plan does not warn of an OOM kill: the shortest
// pipeline with one M_b of slots next to its slack, staging and reserve
// (above the heap, x and one reservation, 82 MiB + 22,528 × 529 bytes,
// that the plan cannot do without), and every budget from there on is
// feasible.
func TestMinBudget(t *testing.T) {
	opt := fixtureOptions(t, nil)
	plan := func(b int64) plan {
		return size(sizingInput{budget: b, ws: fixtureWS, shape: fixtureShape, opt: opt, cpus: 2})
	}
	feasible := func(b int64) bool { return plan(b).feasible }
	want := kit.MinBudget(feasible)
	if p := plan(want); p.overReserve || want < 82*mib+22528*529 {
		t.Fatalf("min budget %d: over the reserve %v, below what the plan cannot do without %v", want, p.overReserve, want < 82*mib+22528*529)
	}
	if p := plan(want - 1); !p.overReserve && p.minNeed <= want-1 {
		t.Fatalf("a byte below the min budget %d neither warns nor misses its minimum", want)
	}
	for b := want; b < 4096*mib; b += 7 * mib {
		if !feasible(b) {
			t.Fatalf("budget %d above the minimum is infeasible", b)
		}
	}
	// a model that reads aliases in place needs no batch-input copy
	aliased := func(b int64) bool {
		return size(sizingInput{budget: b, ws: fixtureWS, shape: fixtureShape, opt: opt, cpus: 2, inPlace: true}).feasible
	}
	if got := kit.MinBudget(aliased); got >= want || got < 71*mib+22528*529 {
		t.Fatalf("min budget aliased %d, want below the copy's %d and at least the heap and one M_b of slots", got, want)
	}
	// MinMemory estimates the workspace from the shape (a lower bound):
	// below the fixture's minimum, above zero.
	cfg := train.DefaultConfig()
	if m := minMemory(fixtureShape, cfg); m <= 0 || m > want {
		t.Fatalf("MinMemory %d, want a lower bound in (0, %d]", m, want)
	}
}

// TestRefusalNamesAMinimumAboveTheBudget: a refused budget's message names
// leastBudget, and that is above the budget for every infeasible plan —
// the over-reserve ones too, whose minNeed the budget already exceeds.
func TestRefusalNamesAMinimumAboveTheBudget(t *testing.T) {
	opt := fixtureOptions(t, nil)
	in := sizingInput{ws: fixtureWS, shape: fixtureShape, opt: opt, cpus: 2}
	overReserveSeen := false
	for b := int64(16 * mib); b < 512*mib; b += mib / 2 {
		in.budget = b
		p := size(in)
		if p.feasible {
			continue
		}
		if p.overReserve && p.minNeed <= b {
			overReserveSeen = true
		}
		if least := leastBudget(in); least <= b {
			t.Fatalf("budget %d refused (over the reserve %v, minNeed %d) names a minimum of %d", b, p.overReserve, p.minNeed, least)
		}
	}
	if !overReserveSeen {
		t.Fatal("no budget refused for the reserve alone: the case this test is for was not reached")
	}
}
