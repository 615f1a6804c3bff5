package mariusgnn

import (
	"fmt"
	"strings"
	"testing"

	"outcore/engine/system/kit"
	"outcore/engine/train"
)

func TestEdgeBound(t *testing.T) {
	// 3 partitions, buckets 1..9: k resident partitions hold at most the
	// k² largest buckets
	b := edgeBound([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3)
	want := []int64{0, 9, 9 + 8 + 7 + 6, 45}
	for k, w := range want {
		if b[k] != w {
			t.Fatalf("bound[%d] = %d, want %d", k, b[k], w)
		}
	}
}

const MiB = 1 << 20

// baseInput: 16 partitions of 2048 nodes with 512-byte rows (1 MiB of rows
// each), 100 MiB resident, batches of 10,000 input nodes.
func baseInput(ordering string) sizingInput {
	shape := train.DatasetShape{Nodes: 16 * 2048, FeatureDim: 128, Train: 5000}
	return sizingInput{
		Sizing:  kit.Sizing[options, profile]{WS: kit.Workspace{BaseBytes: 100 * MiB, MaxInputs: 10000, BatchBytes: 1 * MiB, RowBytes: 512}, Shape: shape, Opt: options{ordering: ordering, partitions: 16, samplers: 1, profile: 1, prefetch: true}},
		profile: profile{run: true, p: 16, partSize: 2048, trainParts: 3, readerQueue: 1},
	}
}

// needWith is the need of a buffer forced to c under a budget below 320
// MiB (whose reserve is the 32 MiB floor): a budget of exactly that holds
// c partitions.
func needWith(in sizingInput, c int) int64 {
	in.Opt.bufferCapacity = c
	in.Budget = 200 * MiB
	return size(in.sizing()).need
}

func TestSizePlans(t *testing.T) {
	seq, dis := baseInput(OrderingSequential), baseInput(OrderingDispersed)
	withEdges := dis
	withEdges.buckets = make([]int64, 16*16)
	for i := range withEdges.buckets {
		withEdges.buckets[i] = 1 << 14 // 128 KiB per bucket
	}
	dense := dis
	dense.dense = batchMeasure{maxInputs: 6000, bytes: 64 << 10}
	cases := []struct {
		name     string
		in       sizingInput
		budget   int64
		c, slots int
		feasible bool
	}{
		{"unlimited holds every partition", seq, 0, 16, 16, true},
		{"a large budget holds every partition", seq, 1 << 40, 16, 16, true},
		{"exactly the need of 9", seq, needWith(seq, 9), 9, 9, true},
		{"a byte short of 9", seq, needWith(seq, 9) - 1, 8, 8, true},
		{"dispersed: a spare slot for prefetching", dis, needWith(dis, 9), 9, 10, true},
		// 10.2 MiB for the buffer: slots of 1.02 MiB, (c+1)² buckets of
		// 128 KiB resident, c² of 64 KiB in the subgraph: 9.2 MiB for 4
		{"edges take room", withEdges, needWith(dis, 9), 4, 5, true},
		// batches of 7,500 rows instead of 11,000 and 80 KiB mini-batches
		// free 4.5 MiB: 14 slots
		{"measured DENSE batches leave more room", dense, needWith(dis, 9), 13, 14, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in.Budget = c.budget
			pl := size(in.sizing())
			if pl.c != c.c || pl.slots != c.slots || pl.feasible != c.feasible {
				t.Fatalf("plan c=%d slots=%d feasible=%v, want %d, %d, %v (need %d MiB)", pl.c, pl.slots, pl.feasible, c.c, c.slots, c.feasible, pl.need>>20)
			}
			if c.budget > 0 && pl.c < in.p {
				if pl.need > c.budget || !pl.fromBudget {
					t.Fatalf("need %d over the budget %d", pl.need, c.budget)
				}
				if needWith(in, pl.c+1) <= c.budget {
					t.Fatalf("capacity %d is not the largest that fits", pl.c)
				}
			}
		})
	}
}

func TestSizeFloors(t *testing.T) {
	seq, dis := baseInput(OrderingSequential), baseInput(OrderingDispersed)
	// SEQUENTIAL keeps the 3 training partitions resident: what it cannot
	// do without is the buffer of 3; its floor adds the reserve (a plan
	// that would warn of an OOM kill is not feasible).
	in := seq
	in.Budget = 1 << 40
	least := size(in.sizing()).minNeed
	in.Budget = least
	pl := size(in.sizing())
	if pl.feasible || pl.c != 3 || !pl.overReserve {
		t.Fatalf("at the buffer of 3 without the reserve: %+v, want infeasible (over the reserve)", pl)
	}
	floor := pl.fixed + pl.reserve + pl.buffer
	in.Budget = floor
	if pl = size(in.sizing()); !pl.feasible || pl.c != 3 || pl.overReserve {
		t.Fatalf("at the floor with the reserve: %+v, want feasible with c=3", pl)
	}
	in.Budget = floor - 1
	pl = size(in.sizing())
	if pl.feasible {
		t.Fatal("a byte below the floor is feasible")
	}
	if err := pl.infeasible(in.Budget, in.sizing()); !strings.Contains(err.Error(), "3 of 16 partitions") ||
		!strings.Contains(err.Error(), fmt.Sprintf("below the %d MiB this run needs with the reserve", (floor+(1<<20)-1)>>20)) {
		t.Fatalf("refusal %q does not name the buffer and the need with the reserve that is over the budget", err)
	}
	// Below what the run cannot do without, that is the number named.
	in.Budget = least - 1
	if err := size(in.sizing()).infeasible(in.Budget, in.sizing()); !strings.Contains(err.Error(), fmt.Sprintf("below the %d MiB this run holds even without the reserve", (least+(1<<20)-1)>>20)) {
		t.Fatalf("refusal %q", err)
	}
	in = dis
	in.Budget = 1 << 40
	if df := size(in.sizing()).minNeed; df >= floor {
		t.Fatalf("dispersed floor %d not below sequential %d (one partition against three)", df, floor)
	}
	// an explicit capacity wins, and says when it is over the budget
	in = seq
	in.Opt.bufferCapacity = 12
	in.Budget = needWith(seq, 11)
	if pl := size(in.sizing()); pl.c != 12 || !pl.overReserve {
		t.Fatalf("buffer_capacity=12: %+v", pl)
	}
}

func TestMinMemory(t *testing.T) {
	shape := train.DatasetShape{Nodes: 1 << 20, Edges: 1 << 24, FeatureDim: 128, Train: 50000}
	cfg := train.DefaultConfig()
	seq := minMemory(shape, cfg)
	// at least the 4 training partitions of 16384 rows (64 × 16384 nodes)
	// and the layout's maps
	if seq < 4*16384*512+8<<20 {
		t.Fatalf("sequential MinMemory %d MiB below the training partitions", seq>>20)
	}
	opt, _ := parseOptions(cfg)
	p, ps, tp := layoutShape(shape, opt.partitions)
	in := sizingInput{
		Sizing:  kit.Sizing[options, profile]{WS: kit.EstimateWorkspace(shape, cfg), Shape: shape, Opt: opt},
		profile: profile{run: true, extraBase: layoutMapBytes(shape.Nodes), p: p, partSize: ps, trainParts: tp, readerQueue: ioQueueDepth},
	}
	in.Budget = seq
	if !size(in.sizing()).feasible {
		t.Fatal("MinMemory is not feasible")
	}
	in.Budget = seq - 1
	if size(in.sizing()).feasible {
		t.Fatal("a byte below MinMemory is feasible: not the least")
	}
	cfg.Options = map[string]string{"ordering": "dispersed"}
	if dis := minMemory(shape, cfg); dis >= seq {
		t.Fatalf("dispersed MinMemory %d not below sequential %d", dis, seq)
	}
	cfg.Options = map[string]string{"partitions": "x"}
	if minMemory(shape, cfg) != 0 {
		t.Fatal("a malformed option gave a floor")
	}
}

func TestParseOptions(t *testing.T) {
	for _, bad := range []map[string]string{
		{"ordering": "beta"}, {"partitions": "0"}, {"buffer_capacity": "9", "partitions": "8"},
		{"samplers": "0"}, {"prefetch": "maybe"},
	} {
		if _, err := parseOptions(train.Config{Options: bad}); err == nil {
			t.Errorf("options %v accepted", bad)
		}
	}
	o, err := parseOptions(train.Config{})
	if err != nil || o.ordering != OrderingSequential || o.partitions != DefaultPartitions || !o.prefetch {
		t.Fatalf("defaults %+v, %v", o, err)
	}
}

// sizing is the sizing of a test's input: its profile as a run's.
func (in sizingInput) sizing() kit.Sizing[options, profile] {
	s := in.Sizing
	s.Prof = in.profile
	s.Prof.run = true
	return s
}

// minMemory is the floor Register gives MariusGNN: its sizing's.
var minMemory = kit.Sizer[options, profile, plan](size).MinMemory(parseOptions)
