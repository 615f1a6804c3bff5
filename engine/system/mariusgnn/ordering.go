package mariusgnn

// Node-partition orderings for node classification, MariusGNN (EuroSys '23)
// as described by GNNDrive §2 and §3 (D2: "MariusGNN prepares data by
// ordering a desired sequence of partitions and loading them to memory in
// advance for an epoch") and DiskGNN §1, and as the public artifact's
// src/cpp/src/data/ordering.cpp builds them:
//
//   - SEQUENTIAL (getSequentialNodePartitionOrdering): the training nodes
//     occupy the first partitions (the preprocessor places them first), so
//     the epoch has ONE buffer state: every training partition plus
//     c − (training partitions) other partitions drawn at random, and every
//     training node is trained in it. A new random draw each epoch.
//   - DISPERSED (getDispersedOrderingHelper via getDiagOrdering, with
//     fine_to_coarse_ratio 1 and no cached partitions): a random first state
//     of c partitions; then, while partitions remain on disk, the resident
//     partitions and the on-disk ones are shuffled and the last resident
//     partition is replaced by the first on-disk one: one swap per state,
//     p − c + 1 states, every partition loaded exactly once per epoch. Each
//     training node is trained in one state chosen uniformly among the
//     states holding its partition (randomlyAssignTrainNodesToBuffers).
//
// Coverage as the artifact defines it for node classification: every
// training node is trained exactly once per epoch, in a state that holds its
// own partition; the edges it can use there are those of the edge buckets
// (i, j) with both i and j in that state. Edges to partitions outside the
// state are not seen (the bias DiskGNN §1 measures); the artifact does not
// promise that a training node meets every partition its edges touch, and
// neither does this file. BETA/COMET (all p² buckets covered) are the
// artifact's link-prediction orderings and are not implemented.

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Ordering names (option "ordering").
const (
	OrderingSequential = "sequential"
	OrderingDispersed  = "dispersed"
)

// ParseOrdering checks an ordering name.
func ParseOrdering(s string) (string, error) {
	switch s {
	case OrderingSequential, OrderingDispersed:
		return s, nil
	}
	return "", fmt.Errorf("ordering %q: want %s or %s", s, OrderingSequential, OrderingDispersed)
}

// Plan is one epoch's sequence of buffer states and the training nodes
// trained in each.
type Plan struct {
	// States[s] lists the partitions resident in buffer state s (c
	// distinct partitions).
	States [][]int
	// Train[s] holds the training nodes (partitioned ids) trained while
	// state s is resident, in the order they were assigned.
	Train [][]int64
}

// SequentialStates returns the single buffer state of the SEQUENTIAL
// ordering: partitions [0, trainParts) followed by c − trainParts partitions
// drawn at random from [trainParts, p).
func SequentialStates(trainParts, p, c int, r *rand.Rand) ([][]int, error) {
	if err := checkPC(p, c); err != nil {
		return nil, err
	}
	if trainParts < 1 || trainParts > p {
		return nil, fmt.Errorf("sequential ordering: %d training partitions of %d", trainParts, p)
	}
	if c < trainParts {
		return nil, fmt.Errorf("sequential ordering: the buffer holds %d partitions but the training nodes span %d (the artifact requires buffer_capacity >= training partitions)", c, trainParts)
	}
	state := make([]int, 0, c)
	for i := 0; i < trainParts; i++ {
		state = append(state, i)
	}
	others := make([]int, 0, p-trainParts)
	for i := trainParts; i < p; i++ {
		others = append(others, i)
	}
	r.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	state = append(state, others[:c-trainParts]...)
	return [][]int{state}, nil
}

// DispersedStates returns the buffer states of the DISPERSED ordering: p −
// c + 1 states, each differing from the one before in exactly one partition.
func DispersedStates(p, c int, r *rand.Rand) ([][]int, error) {
	if err := checkPC(p, c); err != nil {
		return nil, err
	}
	all := r.Perm(p)
	in := slices.Clone(all[:c])
	disk := slices.Clone(all[c:])
	states := [][]int{slices.Clone(in)}
	for len(disk) > 0 {
		r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		r.Shuffle(len(disk), func(i, j int) { disk[i], disk[j] = disk[j], disk[i] })
		in[len(in)-1] = disk[0]
		disk = disk[1:]
		states = append(states, slices.Clone(in))
	}
	return states, nil
}

func checkPC(p, c int) error {
	if p < 1 {
		return fmt.Errorf("ordering: %d partitions, want >= 1", p)
	}
	if c < 1 || c > p {
		return fmt.Errorf("ordering: buffer capacity %d, want 1..%d partitions", c, p)
	}
	return nil
}

// AssignTrainNodes gives every training node (partitioned id) to one state
// chosen uniformly among the states holding its partition (partOf), keeping
// the nodes' order within each state. A node whose partition is in no state
// is an error (the artifact would silently skip it).
func AssignTrainNodes(states [][]int, train []int64, partOf func(int64) int, p int, r *rand.Rand) ([][]int64, error) {
	holding := make([][]int, p) // partition -> states holding it
	for s, st := range states {
		for _, q := range st {
			if q < 0 || q >= p {
				return nil, fmt.Errorf("state %d holds partition %d of %d", s, q, p)
			}
			holding[q] = append(holding[q], s)
		}
	}
	out := make([][]int64, len(states))
	for _, v := range train {
		q := partOf(v)
		if q < 0 || q >= p {
			return nil, fmt.Errorf("training node %d is in partition %d of %d", v, q, p)
		}
		h := holding[q]
		if len(h) == 0 {
			return nil, fmt.Errorf("training node %d: its partition %d is in no buffer state", v, q)
		}
		s := h[0]
		if len(h) > 1 {
			s = h[r.IntN(len(h))]
		}
		out[s] = append(out[s], v)
	}
	return out, nil
}

// NewPlan builds one epoch's plan for ordering: the states and the
// training nodes of each. trainParts is the number of leading partitions
// holding the training nodes (SEQUENTIAL needs them first).
func NewPlan(ordering string, train []int64, partOf func(int64) int, trainParts, p, c int, r *rand.Rand) (Plan, error) {
	var states [][]int
	var err error
	switch ordering {
	case OrderingSequential:
		states, err = SequentialStates(trainParts, p, c, r)
	case OrderingDispersed:
		states, err = DispersedStates(p, c, r)
	default:
		_, err = ParseOrdering(ordering)
	}
	if err != nil {
		return Plan{}, err
	}
	tr, err := AssignTrainNodes(states, train, partOf, p, r)
	if err != nil {
		return Plan{}, err
	}
	return Plan{States: states, Train: tr}, nil
}

// Swap is the change from one buffer state to the next.
type Swap struct {
	Admit []int // partitions to load
	Evict []int // partitions to drop
	Keep  []int // partitions resident in both (buffer hits)
}

// Diff returns the swap that turns state prev into next (prev nil: the
// first state, everything admitted).
func Diff(prev, next []int) Swap {
	var sw Swap
	for _, q := range next {
		if slices.Contains(prev, q) {
			sw.Keep = append(sw.Keep, q)
		} else {
			sw.Admit = append(sw.Admit, q)
		}
	}
	for _, q := range prev {
		if !slices.Contains(next, q) {
			sw.Evict = append(sw.Evict, q)
		}
	}
	return sw
}
