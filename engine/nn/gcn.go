package nn

import (
	"math"
	"math/rand/v2"

	"outcore/engine/graph"
)

// GCN is the graph convolution of Kipf & Welling (2017) with symmetric
// normalisation and self loops (PyG GCNConv semantics):
//
//	h_i' = Σ_{j∈N(i)∪{i}} Wᵀ·h_j / sqrt(d̂_i·d̂_j) + b,  d̂ = in-degree + 1
//
// Degrees: when the block carries SrcDeg/DstDeg (full-graph in-degrees), d̂
// comes from them, so a block holding full neighbourhoods gives exactly the
// classic full-graph GCN. Otherwise the block's own degrees are used: a
// destination's number of in-edges in the block, and for a source node its
// in-degree in the block when it is also a destination, else its out-degree
// in the block (the number of destinations it feeds, DGL's norm="both"
// convention). Each gets +1 for the self loop.
type GCN struct {
	In, Out int
	W, Bias *Param

	x, agg, proj *Tensor
	xs           *csrInput // x in CSR form when sparse (transform-first only)
	a            adj
	numDst       int
	numSrc       int
	aggFirst     bool
}

// NewGCN returns a GCN layer with a Glorot weight and zero bias.
func NewGCN(in, out int, rng *rand.Rand) *GCN {
	l := &GCN{In: in, Out: out, W: newParam("gcn.w", in, out), Bias: newParam("gcn.bias", 1, out)}
	Glorot(l.W.Value, in, out, rng)
	return l
}

// InDim is the input feature width.
func (l *GCN) InDim() int { return l.In }

// OutDim is the output feature width.
func (l *GCN) OutDim() int { return l.Out }

// Params returns W and the bias.
func (l *GCN) Params() []*Param { return []*Param{l.W, l.Bias} }

// gcnInvSqrtDeg returns 1/sqrt(d̂_j) for every source node of b (the first
// NumDst entries are the destinations' values).
func gcnInvSqrtDeg(b *graph.Block, ar *Arena) []float32 {
	inv := ar.Floats(b.NumSrc)
	var cnt []int32
	if b.SrcDeg == nil {
		cnt = ar.Ints(b.NumSrc)
	}
	GCNInvSqrtDeg(b, inv, cnt)
	return inv
}

// GCNInvSqrtDeg fills inv (NumSrc entries) with 1/sqrt(d̂_j) for every
// source node of b, d̂ = deg+1: the full-graph degrees when the block
// carries them (SrcDeg, with DstDeg for the destinations), else the
// block's own (cnt, NumSrc entries, is their scratch; unused when SrcDeg
// is set). engine/cuda's GCN weighs its adjacency with it.
func GCNInvSqrtDeg(b *graph.Block, inv []float32, cnt []int32) {
	switch {
	case b.SrcDeg != nil:
		for j, d := range b.SrcDeg {
			inv[j] = float32(1 / math.Sqrt(float64(d)+1))
		}
		if b.DstDeg != nil {
			for i, d := range b.DstDeg {
				inv[i] = float32(1 / math.Sqrt(float64(d)+1))
			}
		}
	default:
		clear(cnt)
		for _, j := range b.Indices {
			cnt[j]++
		}
		for i := 0; i < b.NumDst; i++ {
			if b.DstDeg != nil {
				cnt[i] = b.DstDeg[i]
			} else {
				cnt[i] = b.Indptr[i+1] - b.Indptr[i]
			}
		}
		for j, d := range cnt {
			inv[j] = float32(1 / math.Sqrt(float64(d)+1))
		}
	}
}

// Forward computes the layer for block b on source features x.
func (l *GCN) Forward(ar *Arena, b *graph.Block, x *Tensor, train bool) *Tensor {
	checkInput("GCN", b, x, l.In)
	l.x, l.numDst, l.numSrc = x, b.NumDst, b.NumSrc
	l.gcnWeights(ar, b)
	y := ar.TensorNoZero(b.NumDst, l.Out)
	l.aggFirst = aggregateFirst(l.a.edges(), b.NumDst, b.NumSrc, l.In, l.Out)
	if l.aggFirst {
		l.agg = ar.TensorNoZero(b.NumDst, l.In)
		l.a.spmm(x.Data, l.In, l.agg.Data, l.In, l.In, false)
		Gemm(false, false, b.NumDst, l.Out, l.In, 1, l.agg.Data, l.In, l.W.Value.Data, l.Out, 0, y.Data, l.Out)
	} else {
		l.proj = ar.TensorNoZero(b.NumSrc, l.Out)
		l.xs = sparsify(ar, x)
		inputTimesW(l.xs, x, b.NumSrc, l.W.Value.Data, l.Out, l.proj.Data, false)
		l.a.spmm(l.proj.Data, l.Out, y.Data, l.Out, l.Out, false)
	}
	addBias(y, l.Bias.Value.Data)
	return y
}

// gcnWeights sets the block's edges and self loops with the symmetric
// normalisation 1/sqrt(d̂_i·d̂_j).
func (l *GCN) gcnWeights(ar *Arena, b *graph.Block) {
	inv := gcnInvSqrtDeg(b, ar)
	l.a.withSelfLoops(b, 1, ar)
	parallelFor(b.NumDst, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for e := l.a.ptr[i]; e < l.a.ptr[i+1]; e++ {
				l.a.w[e] = inv[i] * inv[l.a.idx[e]]
			}
		}
	})
}

// Backward adds parameter gradients and returns dL/dx when needDX is set.
func (l *GCN) Backward(ar *Arena, dy *Tensor, needDX bool) *Tensor {
	checkGrad("GCN", dy, l.numDst, l.Out)
	nd, ns := l.numDst, l.numSrc
	accumColSum(dy, l.Bias.Grad.Data)
	var dx *Tensor
	if l.aggFirst {
		Gemm(true, false, l.In, l.Out, nd, 1, l.agg.Data, l.In, dy.Data, l.Out, 1, l.W.Grad.Data, l.Out)
		if needDX {
			dagg := ar.TensorNoZero(nd, l.In)
			Gemm(false, true, nd, l.In, l.Out, 1, dy.Data, l.Out, l.W.Value.Data, l.Out, 0, dagg.Data, l.In)
			dx = ar.TensorNoZero(ns, l.In)
			l.a.spmmT(dagg.Data, l.In, dx.Data, l.In, l.In, false, ar)
		}
		return dx
	}
	dproj := ar.TensorNoZero(ns, l.Out)
	l.a.spmmT(dy.Data, l.Out, dproj.Data, l.Out, l.Out, false, ar)
	inputTGradAdd(l.xs, l.x, ns, dproj.Data, l.Out, l.W.Grad.Data)
	if needDX {
		dx = ar.TensorNoZero(ns, l.In)
		Gemm(false, true, ns, l.In, l.Out, 1, dproj.Data, l.Out, l.W.Value.Data, l.Out, 0, dx.Data, l.In)
	}
	return dx
}
