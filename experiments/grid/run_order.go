package grid

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
)

// Run order and repeat seeds (DESIGN §6, "Trustworthy repeats"). A grid's
// runs run one after another in queue order; host load that drifts while
// they run biases whichever cells ran then. The grid's "run_order" picks
// the order, and every repeat gets its own seed, so repeated runs differ
// in their mini-batches and initial weights and their spread is real.
//
//   - "grid" (the default): repeat outermost, then system, model,
//     feature_dim, batch_size, fanout, mem_limit innermost;
//   - "interleave": each repeat in grid order with the variants
//     alternating innermost, so every variant sees the same stretch of
//     time;
//   - "random": each repeat's cells shuffled, seeded by "run_order_seed"
//     (default: the grid's "seed", else the engine's 1), so the order is
//     recorded by the grid itself.
//
// Either way each repeat covers every cell before the next begins, and the
// runs' seq numbers are the order they run in.

// Run orders of a grid ("run_order").
const (
	OrderGrid       = "grid"
	OrderInterleave = "interleave"
	OrderRandom     = "random"
)

// RunOrders are the valid "run_order" values.
var RunOrders = []string{OrderGrid, OrderInterleave, OrderRandom}

// RepeatSeed is the seed of a run of repeat rep (0-based) of a grid whose
// runs have seed base: base, base+1, base+2, ...: distinct per repeat,
// the same for every cell of one repeat (its variants see the same
// batches), and recorded in each run's configuration.
func RepeatSeed(base int64, rep int) int64 { return base + int64(rep) }

// parseRunOrderKey reads the grid's "run_order" or "run_order_seed".
func parseRunOrderKey(g *Grid, k string, v json.RawMessage) string {
	switch k {
	case "run_order":
		if err := json.Unmarshal(v, &g.RunOrder); err != nil || !slices.Contains(RunOrders, g.RunOrder) {
			return fmt.Sprintf("run_order: want one of %v", RunOrders)
		}
	case "run_order_seed":
		var s int64
		if err := json.Unmarshal(v, &s); err != nil {
			return "run_order_seed: want a whole number"
		}
		g.RunOrderSeed = &s
	}
	return ""
}

// orderSeed is the seed of a random run order: run_order_seed, else the
// grid's seed, else the engine's default seed.
func (g *Grid) orderSeed() int64 {
	if g.RunOrderSeed != nil {
		return *g.RunOrderSeed
	}
	var s int64 = 1
	if raw, ok := g.Base["seed"]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// cellIndex is a cell's position on each axis (system, model, feature_dim,
// batch_size, fanout, compute, the path axes, ids, mem_limit) in grid order.
type cellIndex []int

// orderCells puts cells (in grid order, with their axis positions) in the
// run order and renumbers their Seq.
func orderCells(cells []Cell, idx []cellIndex, order string, seed int64) []Cell {
	perm := make([]int, len(cells))
	for i := range perm {
		perm[i] = i
	}
	switch order {
	case OrderInterleave:
		// the variant (position 0) innermost
		sort.SliceStable(perm, func(a, b int) bool {
			ca, cb := cells[perm[a]], cells[perm[b]]
			if ca.Repeat != cb.Repeat {
				return ca.Repeat < cb.Repeat
			}
			ia, ib := idx[perm[a]], idx[perm[b]]
			for k := 1; k < len(ia); k++ {
				if ia[k] != ib[k] {
					return ia[k] < ib[k]
				}
			}
			return ia[0] < ib[0]
		})
	case OrderRandom:
		for lo := 0; lo < len(perm); {
			hi := lo
			for hi < len(perm) && cells[perm[hi]].Repeat == cells[perm[lo]].Repeat {
				hi++
			}
			r := rand.New(rand.NewPCG(uint64(seed), uint64(cells[perm[lo]].Repeat)))
			r.Shuffle(hi-lo, func(i, j int) { perm[lo+i], perm[lo+j] = perm[lo+j], perm[lo+i] })
			lo = hi
		}
	}
	out := make([]Cell, len(cells))
	for i, p := range perm {
		out[i] = cells[p]
		out[i].Seq = i
	}
	return out
}
