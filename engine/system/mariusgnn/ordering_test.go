package mariusgnn

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// checkPlanCoverage asserts the node-classification coverage the artifact
// defines: every state holds c distinct partitions of [0,p), every training
// node is trained exactly once, in a state holding its own partition (so
// its in-edges from every resident partition, the buckets (i, own), are in
// memory while it trains; partition_buffer_test checks that the buffer
// loads exactly those buckets).
func checkPlanCoverage(t *testing.T, pl Plan, train []int64, partOf func(int64) int, p, c int) {
	t.Helper()
	if len(pl.States) != len(pl.Train) {
		t.Fatalf("%d states, %d training lists", len(pl.States), len(pl.Train))
	}
	for s, st := range pl.States {
		if len(st) != c {
			t.Fatalf("state %d holds %d partitions, want %d: %v", s, len(st), c, st)
		}
		seen := map[int]bool{}
		for _, q := range st {
			if q < 0 || q >= p || seen[q] {
				t.Fatalf("state %d: bad or repeated partition %d: %v", s, q, st)
			}
			seen[q] = true
		}
	}
	trained := map[int64]int{}
	for s, nodes := range pl.Train {
		for _, v := range nodes {
			trained[v]++
			own := partOf(v)
			if !slices.Contains(pl.States[s], own) {
				t.Fatalf("node %d trained in state %d %v without its partition %d", v, s, pl.States[s], own)
			}
		}
	}
	if len(trained) != len(train) {
		t.Fatalf("%d of %d training nodes trained", len(trained), len(train))
	}
	for v, n := range trained {
		if n != 1 {
			t.Fatalf("node %d trained %d times", v, n)
		}
	}
}

// TestOrderingCoverage is the property test: for many (p, c, seed), both
// orderings cover every training node as the artifact defines, DISPERSED
// swaps one partition per state and loads every partition exactly once,
// SEQUENTIAL keeps every training partition resident.
func TestOrderingCoverage(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		p := 1 + r.IntN(40)
		c := 1 + r.IntN(p)
		ps := int64(1 + r.IntN(50))
		nodes := int64(p) * ps
		partOf := func(v int64) int { return int(v / ps) }
		// training nodes in the first trainParts partitions (train-first layout)
		trainParts := 1 + r.IntN(c)
		var train []int64
		for v := int64(0); v < int64(trainParts)*ps; v++ {
			if r.IntN(3) == 0 || v == 0 || v == int64(trainParts)*ps-1 {
				train = append(train, v)
			}
		}
		seq, err := NewPlan(OrderingSequential, train, partOf, trainParts, p, c, r)
		if err != nil {
			t.Fatal(err)
		}
		checkPlanCoverage(t, seq, train, partOf, p, c)
		if len(seq.States) != 1 {
			t.Fatalf("sequential: %d states, want 1", len(seq.States))
		}
		for q := 0; q < trainParts; q++ {
			if !slices.Contains(seq.States[0], q) {
				t.Fatalf("sequential: training partition %d not resident: %v", q, seq.States[0])
			}
		}

		// dispersed over a random layout: training nodes anywhere
		var anyTrain []int64
		for v := int64(0); v < nodes; v++ {
			if r.IntN(4) == 0 {
				anyTrain = append(anyTrain, v)
			}
		}
		dis, err := NewPlan(OrderingDispersed, anyTrain, partOf, 0, p, c, r)
		if err != nil {
			t.Fatal(err)
		}
		checkPlanCoverage(t, dis, anyTrain, partOf, p, c)
		if len(dis.States) != p-c+1 {
			t.Fatalf("dispersed p=%d c=%d: %d states, want %d", p, c, len(dis.States), p-c+1)
		}
		loads := map[int]int{}
		var prev []int
		for s, st := range dis.States {
			sw := Diff(prev, st)
			if s > 0 && (len(sw.Admit) != 1 || len(sw.Evict) != 1 || len(sw.Keep) != c-1) {
				t.Fatalf("dispersed state %d: swap %+v, want one partition in and one out", s, sw)
			}
			for _, q := range sw.Admit {
				loads[q]++
			}
			prev = st
		}
		for q := 0; q < p; q++ {
			if loads[q] != 1 {
				t.Fatalf("dispersed p=%d c=%d: partition %d loaded %d times, want exactly once", p, c, q, loads[q])
			}
		}
	}
}

func TestSequentialNeedsTrainingPartitions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	if _, err := SequentialStates(5, 10, 4, r); err == nil {
		t.Fatal("a buffer of 4 partitions accepted 5 training partitions")
	}
	if _, err := DispersedStates(4, 5, r); err == nil {
		t.Fatal("buffer capacity above p accepted")
	}
	if _, err := ParseOrdering("beta"); err == nil {
		t.Fatal("beta accepted for node classification")
	}
	if _, err := AssignTrainNodes([][]int{{0}}, []int64{5}, func(v int64) int { return int(v) }, 6, r); err == nil {
		t.Fatal("a training node whose partition is never resident was assigned")
	}
}

// TestOrderingDeterministic: the same seed gives the same plan (each epoch
// derives its generator from the run seed and the epoch).
func TestOrderingDeterministic(t *testing.T) {
	mk := func() Plan {
		r := rand.New(rand.NewPCG(3, 4))
		pl, err := NewPlan(OrderingDispersed, []int64{0, 5, 9, 13}, func(v int64) int { return int(v / 2) }, 0, 8, 3, r)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	a, b := mk(), mk()
	for s := range a.States {
		if !slices.Equal(a.States[s], b.States[s]) || !slices.Equal(a.Train[s], b.Train[s]) {
			t.Fatalf("state %d differs: %v/%v %v/%v", s, a.States[s], b.States[s], a.Train[s], b.Train[s])
		}
	}
}

// TestDiffFirstState: the first state admits everything.
func TestDiffFirstState(t *testing.T) {
	sw := Diff(nil, []int{3, 1})
	if !slices.Equal(sw.Admit, []int{3, 1}) || len(sw.Evict) != 0 || len(sw.Keep) != 0 {
		t.Fatalf("%+v", sw)
	}
	sw = Diff([]int{1, 2, 3}, []int{3, 4, 1})
	if !slices.Equal(sw.Admit, []int{4}) || !slices.Equal(sw.Evict, []int{2}) || !slices.Equal(sw.Keep, []int{3, 1}) {
		t.Fatalf("%+v", sw)
	}
}
