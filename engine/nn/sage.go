package nn

import (
	"math/rand/v2"

	"outcore/engine/graph"
)

// SAGE is GraphSAGE with the mean aggregator and a root weight (Hamilton et
// al. 2017; PyG SAGEConv semantics):
//
//	h_i' = W_selfᵀ·h_i + W_neighᵀ·mean_{j∈N(i)} h_j + b
//
// A destination with no in-neighbours aggregates to zero. Weights are in×out.
type SAGE struct {
	In, Out       int
	WSelf, WNeigh *Param
	Bias          *Param

	// forward cache
	x, agg, proj *Tensor
	a            adj
	numDst       int
	aggFirst     bool
}

// NewSAGE returns a SAGE layer with Glorot weights and zero bias.
func NewSAGE(in, out int, rng *rand.Rand) *SAGE {
	l := &SAGE{In: in, Out: out,
		WSelf: newParam("sage.w_self", in, out), WNeigh: newParam("sage.w_neigh", in, out),
		Bias: newParam("sage.bias", 1, out)}
	Glorot(l.WSelf.Value, in, out, rng)
	Glorot(l.WNeigh.Value, in, out, rng)
	return l
}

// InDim is the input feature width.
func (l *SAGE) InDim() int { return l.In }

// OutDim is the output feature width.
func (l *SAGE) OutDim() int { return l.Out }

// Params returns W_self, W_neigh and the bias.
func (l *SAGE) Params() []*Param { return []*Param{l.WSelf, l.WNeigh, l.Bias} }

// Forward computes the layer for block b on source features x.
func (l *SAGE) Forward(ar *Arena, b *graph.Block, x *Tensor, train bool) *Tensor {
	checkInput("SAGE", b, x, l.In)
	l.x, l.numDst = x, b.NumDst
	l.a.fromBlock(b, 1, ar)
	for i := 0; i < b.NumDst; i++ {
		s, t := b.Indptr[i], b.Indptr[i+1]
		if t > s {
			inv := 1 / float32(t-s)
			for e := s; e < t; e++ {
				l.a.w[e] = inv
			}
		}
	}
	y := ar.TensorNoZero(b.NumDst, l.Out)
	Gemm(false, false, b.NumDst, l.Out, l.In, 1, x.Data, l.In, l.WSelf.Value.Data, l.Out, 0, y.Data, l.Out)
	l.aggFirst = aggregateFirst(l.a.edges(), b.NumDst, b.NumSrc, l.In, l.Out)
	if l.aggFirst {
		l.agg = ar.TensorNoZero(b.NumDst, l.In)
		l.a.spmm(x, l.agg, false)
		Gemm(false, false, b.NumDst, l.Out, l.In, 1, l.agg.Data, l.In, l.WNeigh.Value.Data, l.Out, 1, y.Data, l.Out)
	} else {
		l.proj = ar.TensorNoZero(b.NumSrc, l.Out)
		Gemm(false, false, b.NumSrc, l.Out, l.In, 1, x.Data, l.In, l.WNeigh.Value.Data, l.Out, 0, l.proj.Data, l.Out)
		l.a.spmm(l.proj, y, true)
	}
	addBias(y, l.Bias.Value.Data)
	return y
}

// Backward adds parameter gradients and returns dL/dx when needDX is set.
func (l *SAGE) Backward(ar *Arena, dy *Tensor, needDX bool) *Tensor {
	checkGrad("SAGE", dy, l.numDst, l.Out)
	nd, ns := l.numDst, l.x.Rows
	// dW_self += x_dstᵀ·dy
	Gemm(true, false, l.In, l.Out, nd, 1, l.x.Data, l.In, dy.Data, l.Out, 1, l.WSelf.Grad.Data, l.Out)
	accumColSum(dy, l.Bias.Grad.Data)
	var dx *Tensor
	if l.aggFirst {
		Gemm(true, false, l.In, l.Out, nd, 1, l.agg.Data, l.In, dy.Data, l.Out, 1, l.WNeigh.Grad.Data, l.Out)
		if needDX {
			dagg := ar.TensorNoZero(nd, l.In)
			Gemm(false, true, nd, l.In, l.Out, 1, dy.Data, l.Out, l.WNeigh.Value.Data, l.Out, 0, dagg.Data, l.In)
			dx = ar.TensorNoZero(ns, l.In)
			l.a.spmmT(dagg, dx, false, ar)
		}
	} else {
		dproj := ar.TensorNoZero(ns, l.Out)
		l.a.spmmT(dy, dproj, false, ar)
		Gemm(true, false, l.In, l.Out, ns, 1, l.x.Data, l.In, dproj.Data, l.Out, 1, l.WNeigh.Grad.Data, l.Out)
		if needDX {
			dx = ar.TensorNoZero(ns, l.In)
			Gemm(false, true, ns, l.In, l.Out, 1, dproj.Data, l.Out, l.WNeigh.Value.Data, l.Out, 0, dx.Data, l.In)
		}
	}
	if needDX {
		Gemm(false, true, nd, l.In, l.Out, 1, dy.Data, l.Out, l.WSelf.Value.Data, l.Out, 1, dx.Data, l.In)
	}
	return dx
}
