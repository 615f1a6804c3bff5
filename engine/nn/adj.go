package nn

import (
	"fmt"

	"outcore/engine/graph"
)

// adj is a block's dst×src sparse matrix in CSR form with per-edge, per-head
// weights, plus its transpose (edges grouped by source) so that backward
// passes gather instead of scattering and can run in parallel without locks.
// Edge e of dst i is e ∈ [ptr[i], ptr[i+1]), its source idx[e]; the weight of
// head h is w[e*heads+h].
type adj struct {
	numDst, numSrc int
	heads          int
	ptr            []int32
	idx            []int32
	w              []float32
	// transpose, built by transpose(): for src j, tedge[tptr[j]:tptr[j+1]]
	// are the edge ids whose source is j, in increasing dst order.
	tptr  []int32
	tedge []int32
	tdst  []int32
}

// validateBlock checks a block's shape and ids; the layers call it so that a
// bad block is an error that names the problem, not an index panic.
func validateBlock(b *graph.Block) error {
	if b.NumDst < 0 || b.NumSrc < b.NumDst {
		return fmt.Errorf("block: NumDst=%d NumSrc=%d (need 0 ≤ NumDst ≤ NumSrc)", b.NumDst, b.NumSrc)
	}
	if len(b.Indptr) != b.NumDst+1 {
		return fmt.Errorf("block: len(Indptr)=%d, want NumDst+1=%d", len(b.Indptr), b.NumDst+1)
	}
	if b.Indptr[0] != 0 || int(b.Indptr[b.NumDst]) != len(b.Indices) {
		return fmt.Errorf("block: Indptr spans [%d,%d], want [0,%d]", b.Indptr[0], b.Indptr[b.NumDst], len(b.Indices))
	}
	for i := 0; i < b.NumDst; i++ {
		if b.Indptr[i+1] < b.Indptr[i] {
			return fmt.Errorf("block: Indptr decreases at dst %d", i)
		}
	}
	for e, j := range b.Indices {
		if j < 0 || int(j) >= b.NumSrc {
			return fmt.Errorf("block: Indices[%d]=%d out of range [0,%d)", e, j, b.NumSrc)
		}
	}
	if b.SrcDeg != nil && len(b.SrcDeg) != b.NumSrc {
		return fmt.Errorf("block: len(SrcDeg)=%d, want NumSrc=%d", len(b.SrcDeg), b.NumSrc)
	}
	if b.DstDeg != nil && len(b.DstDeg) != b.NumDst {
		return fmt.Errorf("block: len(DstDeg)=%d, want NumDst=%d", len(b.DstDeg), b.NumDst)
	}
	return nil
}

// fromBlock fills a with the block's edges (no self loops), allocating
// weights for heads heads from the arena (contents unset).
func (a *adj) fromBlock(b *graph.Block, heads int, ar *Arena) {
	a.numDst, a.numSrc, a.heads = b.NumDst, b.NumSrc, heads
	a.ptr, a.idx = b.Indptr, b.Indices
	a.w = ar.Floats(len(b.Indices) * heads)
	a.tptr = nil
}

// withSelfLoops fills a with the block's edges plus one self loop per dst
// (dst i is src i), placed last in each row. Existing edges i→i are kept
// as they are (the samplers never produce them).
func (a *adj) withSelfLoops(b *graph.Block, heads int, ar *Arena) {
	a.numDst, a.numSrc, a.heads = b.NumDst, b.NumSrc, heads
	E := len(b.Indices) + b.NumDst
	a.ptr = ar.Ints(b.NumDst + 1)
	a.idx = ar.Ints(E)
	a.w = ar.Floats(E * heads)
	a.ptr[0] = 0
	parallelFor(b.NumDst, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s, t := b.Indptr[i], b.Indptr[i+1]
			o := s + int32(i) // i self loops before this row
			copy(a.idx[o:o+(t-s)], b.Indices[s:t])
			a.idx[o+(t-s)] = int32(i)
			a.ptr[i+1] = t + int32(i) + 1
		}
	})
	a.tptr = nil
}

func (a *adj) edges() int { return len(a.idx) }

// transpose builds the source-grouped index (counting sort, O(E+numSrc)).
func (a *adj) transpose(ar *Arena) {
	if a.tptr != nil {
		return
	}
	E := a.edges()
	a.tptr = ar.Ints(a.numSrc + 1)
	clear(a.tptr)
	for _, j := range a.idx {
		a.tptr[j+1]++
	}
	for j := 0; j < a.numSrc; j++ {
		a.tptr[j+1] += a.tptr[j]
	}
	a.tedge = ar.Ints(E)
	a.tdst = ar.Ints(E)
	fill := ar.Ints(a.numSrc)
	copy(fill, a.tptr[:a.numSrc])
	for i := 0; i < a.numDst; i++ {
		for e := a.ptr[i]; e < a.ptr[i+1]; e++ {
			j := a.idx[e]
			p := fill[j]
			a.tedge[p] = e
			a.tdst[p] = int32(i)
			fill[j]++
		}
	}
}

// spmm computes out[i] (+)= Σ_e w[e,h]·x[src(e)] per head over `cols`
// columns (heads·f): row j of x is xd[j*xld:j*xld+cols], row i of out is
// od[i*old:i*old+cols] (strided, so callers can target a column block of a
// wider matrix). With accumulate false out is overwritten.
func (a *adj) spmm(xd []float32, xld int, od []float32, old, cols int, accumulate bool) {
	a.spmmRows(xd, xld, nil, od, old, cols, accumulate)
}

// spmmRows is spmm with the rows of x read through rows when it is not nil:
// source j is row rows[j] of xd (indexed_input.go).
func (a *adj) spmmRows(xd []float32, xld int, rows []int32, od []float32, old, cols int, accumulate bool) {
	H := a.heads
	f := cols / H
	deg := max(1, a.edges()/max(1, a.numDst))
	parallelFor(a.numDst, grainFor(deg*cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := od[i*old : i*old+cols]
			if !accumulate {
				clear(o)
			}
			for e := a.ptr[i]; e < a.ptr[i+1]; e++ {
				j := int(a.idx[e])
				if rows != nil {
					j = int(rows[j])
				}
				xr := xd[j*xld : j*xld+cols]
				if H == 1 {
					axpy(a.w[e], xr, o)
					continue
				}
				for h := 0; h < H; h++ {
					axpy(a.w[int(e)*H+h], xr[h*f:(h+1)*f], o[h*f:(h+1)*f])
				}
			}
		}
	})
}

// spmmT computes out[j] (+)= Σ_{e: src(e)=j} w[e,h]·g[dst(e)] per head: the
// transpose of spmm, with the same strided addressing (g: numDst rows,
// out: numSrc rows).
func (a *adj) spmmT(gd []float32, gld int, od []float32, old, cols int, accumulate bool, ar *Arena) {
	a.transpose(ar)
	H := a.heads
	f := cols / H
	deg := max(1, a.edges()/max(1, a.numSrc))
	parallelFor(a.numSrc, grainFor(deg*cols), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			o := od[j*old : j*old+cols]
			if !accumulate {
				clear(o)
			}
			for p := a.tptr[j]; p < a.tptr[j+1]; p++ {
				e := a.tedge[p]
				i := int(a.tdst[p])
				gr := gd[i*gld : i*gld+cols]
				if H == 1 {
					axpy(a.w[e], gr, o)
					continue
				}
				for h := 0; h < H; h++ {
					axpy(a.w[int(e)*H+h], gr[h*f:(h+1)*f], o[h*f:(h+1)*f])
				}
			}
		}
	})
}
