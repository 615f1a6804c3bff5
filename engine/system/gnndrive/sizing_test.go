package gnndrive

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

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
	fixtureShape = systest.FixtureShape(50000)
	fixtureWS    = kit.Workspace{BaseBytes: 40 * systest.MiB, MaxInputs: 20480, MeanInputs: 20000, BatchBytes: systest.MiB - 20480*4, RowBytes: 512}
)

func fixtureOptions(t *testing.T, opts map[string]string) options {
	t.Helper()
	return systest.Options(t, parseOptions, train.Config{}, nil, opts)
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
				heapNeed: 103 * systest.MiB, staging: 32 * systest.MiB, offHeap: (112640 + 22528) * 512, feasible: true},
		},
		{
			// 1 GiB: workspace 103 × 1.25 + 11 (x) + 32 (staging) MiB +
			// 107,374,182 (reserve, a tenth); the buffer and the indices'
			// page cache fit
			name: "roomy", budget: 1024 * systest.MiB,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * systest.MiB, staging: 32 * systest.MiB, keepTopo: 128 * systest.MiB, work: 287467110, availAll: 1486341, availTopo: 1232621,
				offHeap: (112640 + 22528) * 512, feasible: true},
		},
		{
			// 380 MiB: 83,747 slots next to the cached indices, room for
			// the reservation of 3 extractors (3 × 22,528), not 4; the heap
			// then holds one extractor less (101 MiB)
			name: "fewer extractors", budget: 380 * systest.MiB,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 83747, samplers: 4, extractors: 3, extractQ: 6, trainQ: 4,
				heapNeed: 101 * systest.MiB, staging: 24 * systest.MiB, keepTopo: 128 * systest.MiB, work: 219938816, availAll: 337467, availTopo: 83747,
				offHeap: (83747 + 22528) * 512, feasible: true},
		},
		{
			// 256 MiB: 54,788,096 bytes after the workspace (213,647,360):
			// 103,569 slots, no room for the indices' page cache
			name: "topology squeezed", budget: 256 * systest.MiB,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 103569, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * systest.MiB, staging: 32 * systest.MiB, work: 213647360, availAll: 103569,
				offHeap: (103569 + 22528) * 512, topoSqueezed: true, feasible: true},
		},
		{
			// 192 MiB: not one reservation next to the paper's queues;
			// shortened to 2 samplers (2 cores), queues 1/1, one
			// extractor: heap 71 MiB, working set 139.75 MiB
			name: "queues shortened", budget: 192 * systest.MiB,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 103569, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * systest.MiB, staging: 8 * systest.MiB, work: 213647360, shortWork: 146538496,
				offHeap: (103569 + 22528) * 512, topoSqueezed: true, queuesShortened: true, feasible: true},
		},
		{
			// 150 MiB: 20,317 slots after the shortest pipeline with its
			// slack, staging and reserve, fewer than one M_b: the heap, x
			// and one reservation (97,900,544 bytes) fit but the reserve
			// is not kept, so the run would warn of an OOM kill: not
			// feasible (train.CheckFeasible refuses it before it starts)
			name: "reserve not kept", budget: 150 * systest.MiB,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 22528, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * systest.MiB, staging: 8 * systest.MiB, work: 213647360, shortWork: 146538496,
				offHeap: (22528 + 22528) * 512, topoSqueezed: true, queuesShortened: true, overReserve: true, feasible: false},
		},
		{
			// 90 MiB: below the shortest pipeline's heap (71 MiB), x (11
			// MiB) and one reservation (22,528 × 529 bytes): cannot fit
			name: "cannot fit", budget: 90 * systest.MiB,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 22528, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * systest.MiB, staging: 8 * systest.MiB, work: 213647360, shortWork: 146538496,
				offHeap: (22528 + 22528) * 512, topoSqueezed: true, queuesShortened: true, overReserve: true, feasible: false},
		},
		{
			// a buffer smaller than the reservation is raised to N_e × M_b
			// without shortening the queues when the budget holds it
			name: "small buffer_factor", budget: 1024 * systest.MiB, opts: map[string]string{"buffer_factor": "0.01"},
			want: plan{maxBatch: 22528, paperSlots: 1126, slots: 90112, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * systest.MiB, staging: 32 * systest.MiB, keepTopo: 128 * systest.MiB, work: 287467110, availAll: 1486341, availTopo: 1232621,
				offHeap: (90112 + 22528) * 512, feasible: true},
		},
		{
			// device buffer at 256 MiB: host memory for 1 extractor next
			// to the indices (2 would need 193.75 MiB + 128 MiB of
			// indices); the buffer and x (66 MiB) are held outside; the
			// extractor's M_b rows of host staging (11 MiB) are in the
			// budget, leaving the indices 256 - 97 × 1.25 - 11 - 32 =
			// 91.75 MiB
			name: "device buffer", budget: 256 * systest.MiB, opts: map[string]string{"feature_buffer": "device"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 1, extractQ: 6, trainQ: 4,
				heapNeed: 97 * systest.MiB, staging: 8 * systest.MiB, hostStaging: 11 * systest.MiB, keepTopo: 96206848, onDevice: true, outside: (112640 + 22528) * 512,
				offHeap: 11 * systest.MiB, feasible: true},
		},
		{
			// device buffer at 320 MiB: 2 extractors would fit next to the
			// indices without their staging (171.75 + 128 MiB), not with
			// it (193.75 + 128 MiB)
			name: "device staging charged", budget: 320 * systest.MiB, opts: map[string]string{"feature_buffer": "device"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 1, extractQ: 6, trainQ: 4,
				heapNeed: 97 * systest.MiB, staging: 8 * systest.MiB, hostStaging: 11 * systest.MiB, keepTopo: 128 * systest.MiB, onDevice: true, outside: (112640 + 22528) * 512,
				offHeap: 11 * systest.MiB, feasible: true},
		},
		{
			// device buffer at 100 MiB: below the heap of the paper's
			// queues with one extractor (97 MiB) and its staging (11 MiB)
			name: "device buffer cannot fit", budget: 100 * systest.MiB, opts: map[string]string{"feature_buffer": "device"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 1, extractQ: 6, trainQ: 4,
				heapNeed: 97 * systest.MiB, staging: 8 * systest.MiB, hostStaging: 11 * systest.MiB, onDevice: true, outside: (112640 + 22528) * 512,
				offHeap: 11 * systest.MiB, feasible: false},
		},
		{
			// batch_input=auto with a model that reads aliases in place:
			// a budget that holds the paper's pipeline keeps the copy
			name: "auto keeps the copy", budget: 1024 * systest.MiB, inPlace: true,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * systest.MiB, staging: 32 * systest.MiB, keepTopo: 128 * systest.MiB, work: 287467110, availAll: 1486341, availTopo: 1232621,
				offHeap: (112640 + 22528) * 512, feasible: true},
		},
		{
			// 192 MiB: with the copy the queues are shortened, so the
			// batch input is aliased: the working set of the paper's
			// queues without x (103 × 1.25 + 32 staging + 32 reserve MiB)
			// still leaves nothing, the shortened one (71 × 1.25 + 8 + 32
			// = 128.75 MiB) leaves 125,373 slots, more than the paper's
			// buffer
			name: "auto aliases under shortened queues", budget: 192 * systest.MiB, inPlace: true,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * systest.MiB, staging: 8 * systest.MiB, work: 202113024, shortWork: 135004160,
				offHeap: 112640 * 512, topoSqueezed: true, queuesShortened: true, aliasInput: true, feasible: true},
		},
		{
			// 90 MiB cannot hold the copy (see "cannot fit"); without it
			// the heap (71 MiB) and one reservation fit, not the reserve:
			// the aliased plan is tried, and is not feasible either
			name: "alias tried where the copy cannot fit", budget: 90 * systest.MiB, inPlace: true,
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 22528, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * systest.MiB, staging: 8 * systest.MiB, work: 202113024, shortWork: 135004160,
				offHeap: 22528 * 512, topoSqueezed: true, queuesShortened: true, overReserve: true, aliasInput: true, feasible: false},
		},
		{
			// batch_input=gather keeps the copy whatever the budget
			name: "gather asked", budget: 90 * systest.MiB, inPlace: true, opts: map[string]string{"batch_input": "gather"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 22528, samplers: 2, extractors: 1, extractQ: 1, trainQ: 1,
				heapNeed: 71 * systest.MiB, staging: 8 * systest.MiB, work: 213647360, shortWork: 146538496,
				offHeap: (22528 + 22528) * 512, topoSqueezed: true, queuesShortened: true, overReserve: true, feasible: false},
		},
		{
			// batch_input=alias with a model that copies anyway: gathered
			name: "alias asked, model copies", budget: 1024 * systest.MiB, opts: map[string]string{"batch_input": "alias"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 4, extractQ: 6, trainQ: 4,
				heapNeed: 103 * systest.MiB, staging: 32 * systest.MiB, keepTopo: 128 * systest.MiB, work: 287467110, availAll: 1486341, availTopo: 1232621,
				offHeap: (112640 + 22528) * 512, feasible: true},
		},
		{
			// device buffer, batch_input=alias: no batch input held outside
			name: "device buffer aliased", budget: 256 * systest.MiB, inPlace: true, opts: map[string]string{"feature_buffer": "device", "batch_input": "alias"},
			want: plan{maxBatch: 22528, paperSlots: 112640, slots: 112640, samplers: 4, extractors: 1, extractQ: 6, trainQ: 4,
				heapNeed: 97 * systest.MiB, staging: 8 * systest.MiB, hostStaging: 11 * systest.MiB, keepTopo: 96206848, onDevice: true, outside: 112640 * 512,
				offHeap: 11 * systest.MiB, aliasInput: true, feasible: true},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.want.aliasInput {
				c.want.xBytes = 22528 * 512
			}
			c.want.perBatch, c.want.topo = systest.MiB, 128*systest.MiB
			// the shortest pipeline's heap (71 MiB), x and one reservation;
			// device: the paper's queues with one extractor (97 MiB) and
			// its staging (11 MiB)
			c.want.minNeed = 71*systest.MiB + c.want.xBytes + 22528*529
			if c.want.onDevice {
				c.want.minNeed = 108 * systest.MiB
			}
			got := size(kit.Sizing[options, profile]{Budget: c.budget, WS: fixtureWS, Shape: fixtureShape, Opt: fixtureOptions(t, c.opts), Prof: profile{run: true, cpus: 2, inPlace: c.inPlace}})
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
		return size(kit.Sizing[options, profile]{Budget: b, WS: fixtureWS, Shape: fixtureShape, Opt: opt, Prof: profile{run: true, cpus: 2}})
	}
	feasible := func(b int64) bool { return plan(b).feasible }
	want := kit.MinBudget(feasible)
	if p := plan(want); p.overReserve || want < 82*systest.MiB+22528*529 {
		t.Fatalf("min budget %d: over the reserve %v, below what the plan cannot do without %v", want, p.overReserve, want < 82*systest.MiB+22528*529)
	}
	if p := plan(want - 1); !p.overReserve && p.minNeed <= want-1 {
		t.Fatalf("a byte below the min budget %d neither warns nor misses its minimum", want)
	}
	systest.CheckMinBudget(t, feasible, want, minMemory, fixtureShape)
	// a model that reads aliases in place needs no batch-input copy
	aliased := func(b int64) bool {
		return size(kit.Sizing[options, profile]{Budget: b, WS: fixtureWS, Shape: fixtureShape, Opt: opt, Prof: profile{run: true, cpus: 2, inPlace: true}}).feasible
	}
	if got := kit.MinBudget(aliased); got >= want || got < 71*systest.MiB+22528*529 {
		t.Fatalf("min budget aliased %d, want below the copy's %d and at least the heap and one M_b of slots", got, want)
	}
}

// TestRefusalNamesAMinimumAboveTheBudget: a refused budget's message names
// its least budget (kit.Size), and that is above the budget for every infeasible plan —
// the over-reserve ones too, whose minNeed the budget already exceeds.
func TestRefusalNamesAMinimumAboveTheBudget(t *testing.T) {
	opt := fixtureOptions(t, nil)
	in := kit.Sizing[options, profile]{WS: fixtureWS, Shape: fixtureShape, Opt: opt, Prof: profile{run: true, cpus: 2}}
	overReserveSeen := false
	for b := int64(16 * systest.MiB); b < 512*systest.MiB; b += systest.MiB / 2 {
		in.Budget = b
		p := size(in)
		if p.feasible {
			continue
		}
		if p.overReserve && p.minNeed <= b {
			overReserveSeen = true
		}
		if _, least := kit.Size(size, in); least <= b {
			t.Fatalf("budget %d refused (over the reserve %v, minNeed %d) names a minimum of %d", b, p.overReserve, p.minNeed, least)
		}
	}
	if !overReserveSeen {
		t.Fatal("no budget refused for the reserve alone: the case this test is for was not reached")
	}
}

// minMemory is the floor Register gives GNNDrive: its sizing's.
var minMemory = kit.Sizer[options, profile, plan](size).MinMemory(parseOptions)

// TestBudgetCappedBufferIsADeviation: in the host layout a budget that
// holds fewer slots than buffer_factor asks for says so among the plan's
// cuts, naming both counts; a budget that holds them says nothing. (A run
// at buffer_factor=2 under such a budget had the same buffer as at 1 and
// did not say so.)
func TestBudgetCappedBufferIsADeviation(t *testing.T) {
	const cut = "holds a feature buffer of"
	for _, bf := range []string{"1", "2"} {
		opt := fixtureOptions(t, map[string]string{"buffer_factor": bf})
		g := &gnnDrive{opt: opt}
		var capped, whole bool
		for b := int64(64 * systest.MiB); b < 4096*systest.MiB; b += 8 * systest.MiB {
			in := kit.Sizing[options, profile]{Budget: b, WS: fixtureWS, Shape: fixtureShape, Opt: opt, Prof: profile{run: true, cpus: 2}}
			p := size(in)
			if !p.feasible {
				continue
			}
			m := g.memory(&train.Env{MemBudget: b}, in, p, 0)
			said := slices.ContainsFunc(m.Cuts, func(c string) bool {
				return strings.Contains(c, cut) && strings.Contains(c, fmt.Sprint(p.slots)) && strings.Contains(c, fmt.Sprint(p.paperSlots))
			})
			if p.slots < p.paperSlots {
				capped = true
				if !said {
					t.Fatalf("buffer_factor %s, budget %d MiB: %d of %d slots, cuts %q", bf, b>>20, p.slots, p.paperSlots, m.Cuts)
				}
			} else {
				whole = true
				if slices.ContainsFunc(m.Cuts, func(c string) bool { return strings.Contains(c, cut) }) {
					t.Fatalf("buffer_factor %s, budget %d MiB: the whole buffer (%d slots) named as cut: %q", bf, b>>20, p.slots, m.Cuts)
				}
			}
		}
		if !capped || !whole {
			t.Fatalf("buffer_factor %s: the sweep saw capped %v, whole %v: widen it", bf, capped, whole)
		}
	}
}
