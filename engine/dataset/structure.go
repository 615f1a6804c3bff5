package dataset

import (
	"math"
	"sort"
)

// structure is the state of the structured generator (GenConfig's
// structure options; DESIGN §4 "Structure"). Nodes live in a position
// space [0, N): community k is the range [start[k], start[k+1]), and a
// position's offset in its range is its popularity rank (0 = most
// popular). With IDLocality a node's id is its position; otherwise the
// generator's keyed permutation scatters positions over the ids.
type structure struct {
	n          uint64
	start      []uint64  // Classes+1 range bounds
	rankA      []float64 // per class: (n_k+1)^(1-β) - 1, or ln(n_k+1) when β = 1
	beta       float64   // popularity exponent β
	invOneMinB float64   // 1/(1-β)
	localShare float64   // P(local draw)
	sameOther  float64   // P(own class | not local), so that the total is Homophily
	window     uint64    // local window half-width, at least
	density    float64   // share of the window the local draws fill
}

// communitySizes splits n nodes into c classes of sizes ∝ (k+1)^-s, each
// at least 1 (n ≥ c), largest first; the rounding remainder goes to the
// largest classes.
func communitySizes(n uint64, c int, s float64) []uint64 {
	w := make([]float64, c)
	var total float64
	for k := range w {
		w[k] = math.Pow(float64(k+1), -s)
		total += w[k]
	}
	sizes := make([]uint64, c)
	var used uint64
	for k := range sizes {
		sizes[k] = max(1, uint64(float64(n)*w[k]/total))
		used += sizes[k]
	}
	// Fix the sum: add to (or take from) the largest classes first.
	for k := 0; used != n; k = (k + 1) % c {
		if used < n {
			sizes[k]++
			used++
		} else if sizes[k] > 1 {
			sizes[k]--
			used--
		}
	}
	return sizes
}

func newStructure(cfg GenConfig) *structure {
	n := uint64(cfg.Nodes)
	sizes := communitySizes(n, cfg.Classes, cfg.CommunitySizeExponent)
	st := &structure{n: n, start: make([]uint64, cfg.Classes+1), beta: cfg.Popularity,
		localShare: cfg.LocalShare, window: uint64(max(1, cfg.LocalWindow)), density: cfg.LocalDensity}
	if st.density <= 0 {
		st.density = 0.5
	}
	for k, sz := range sizes {
		st.start[k+1] = st.start[k] + sz
	}
	st.sameOther = 1
	if cfg.LocalShare < 1 {
		st.sameOther = max(0, (cfg.Homophily-cfg.LocalShare)/(1-cfg.LocalShare))
	}
	st.rankA = make([]float64, cfg.Classes)
	for k, sz := range sizes {
		switch {
		case st.beta == 1:
			st.rankA[k] = math.Log(float64(sz) + 1)
		default:
			st.rankA[k] = math.Pow(float64(sz)+1, 1-st.beta) - 1
		}
	}
	if st.beta != 1 {
		st.invOneMinB = 1 / (1 - st.beta)
	}
	return st
}

// classAt returns the community of position p.
func (st *structure) classAt(p uint64) uint64 {
	return uint64(sort.Search(len(st.start)-1, func(k int) bool { return st.start[k+1] > p }))
}

// rank draws a popularity rank in class k: the rank r is picked ∝
// (r+1)^-β by inverting the continuous power law on [1, n_k+1).
func (st *structure) rank(r *wyrand, k uint64) uint64 {
	size := st.start[k+1] - st.start[k]
	u := r.float64()
	var x float64
	switch {
	case st.beta == 0:
		x = 1 + u*float64(size)
	case st.beta == 1:
		x = math.Exp(u * st.rankA[k])
	default:
		x = math.Pow(1+u*st.rankA[k], st.invOneMinB)
	}
	rk := uint64(x) - 1
	if rk >= size {
		rk = size - 1
	}
	return rk
}

// windowFor is the local window of a node of in-degree d: at least
// LocalWindow, and wide enough that its ≈ localShare×d local draws take
// about density of the 2W positions.
func (st *structure) windowFor(d int64) uint64 {
	return max(st.window, uint64(math.Ceil(st.localShare*float64(d)/(2*st.density))))
}

// pick draws one new in-neighbour position for the node at position self
// of class own and adds it to seen; ok is false when the draw repeated one
// already taken (or self) and should be counted as a failed try. With
// probability localShare it is a position of the same class within
// ±window of self (wrapping inside the class), redrawn up to 8 times while
// it repeats, so that duplicates do not turn local draws into others;
// otherwise a class — its own with probability sameOther, else another in
// proportion to its size — and in it a rank by popularity.
func (st *structure) pick(r *wyrand, own, self, window uint64, seen *uintSet) (p uint64, ok bool) {
	lo, size := st.start[own], st.start[own+1]-st.start[own]
	if st.localShare > 0 && r.float64() < st.localShare {
		for range 8 {
			off := 1 + r.intn(2*window) // 1..2W → +1..+W, -1..-W
			i := self - lo
			if off <= window {
				i = (i + off%size) % size
			} else {
				i = (i + size - (off-window)%size) % size
			}
			if p = lo + i; p != self && seen.insert(p) {
				return p, true
			}
		}
		return 0, false
	}
	k := own
	if st.sameOther < 1 && r.float64() >= st.sameOther && size < st.n {
		x := r.intn(st.n - size)
		if x >= lo {
			x += size
		}
		k = st.classAt(x)
	}
	p = st.start[k] + st.rank(r, k)
	return p, p != self && seen.insert(p)
}
