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
// W_self and W_neigh share one backing array (W_self rows first) so that,
// when aggregating first, the layer is one GEMM [h_dst | mean] · [W_self;
// W_neigh] with k = 2·in, and its backward is one GEMM per gradient.
type SAGE struct {
	In, Out       int
	WSelf, WNeigh *Param
	Bias          *Param

	wcat, gcat []float32 // [W_self; W_neigh] and its gradient, 2in×out

	// forward cache
	x, cat, proj *Tensor
	xs           *csrInput // x in CSR form when sparse (transform-first only)
	a            adj
	numDst       int
	numSrc       int
	aggFirst     bool
}

// NewSAGE returns a SAGE layer with Glorot weights and zero bias.
func NewSAGE(in, out int, rng *rand.Rand) *SAGE {
	l := &SAGE{In: in, Out: out, wcat: make([]float32, 2*in*out), gcat: make([]float32, 2*in*out),
		Bias: newParam("sage.bias", 1, out)}
	l.WSelf = &Param{Name: "sage.w_self", Value: FromSlice(in, out, l.wcat[:in*out]), Grad: FromSlice(in, out, l.gcat[:in*out])}
	l.WNeigh = &Param{Name: "sage.w_neigh", Value: FromSlice(in, out, l.wcat[in*out:]), Grad: FromSlice(in, out, l.gcat[in*out:])}
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
	in, out, nd, ns := l.In, l.Out, b.NumDst, b.NumSrc
	l.x, l.numDst, l.numSrc = x, nd, ns
	l.sageWeights(ar, b)
	y := ar.TensorNoZero(nd, out)
	l.aggFirst = aggregateFirst(l.a.edges(), nd, ns, in, out)
	if l.aggFirst {
		// cat = [x_dst | mean_{N(i)} x_j], y = cat·[W_self; W_neigh]
		l.cat = ar.TensorNoZero(nd, 2*in)
		cat := l.cat
		parallelFor(nd, grainFor(in), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				copy(cat.Data[i*2*in:i*2*in+in], x.Row(i))
			}
		})
		l.a.spmm(x.Data, in, cat.Data[in:], 2*in, in, false)
		Gemm(false, false, nd, out, 2*in, 1, cat.Data, 2*in, l.wcat, out, 0, y.Data, out)
	} else {
		l.xs = sparsify(ar, x)
		inputTimesW(l.xs, x, nd, l.WSelf.Value.Data, out, y.Data, false)
		l.proj = ar.TensorNoZero(ns, out)
		inputTimesW(l.xs, x, ns, l.WNeigh.Value.Data, out, l.proj.Data, false)
		l.a.spmm(l.proj.Data, out, y.Data, out, out, true)
	}
	addBias(y, l.Bias.Value.Data)
	return y
}

// sageWeights sets the block's edges with mean weights 1/deg(i).
func (l *SAGE) sageWeights(ar *Arena, b *graph.Block) {
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
}

// Backward adds parameter gradients and returns dL/dx when needDX is set.
func (l *SAGE) Backward(ar *Arena, dy *Tensor, needDX bool) *Tensor {
	checkGrad("SAGE", dy, l.numDst, l.Out)
	in, out, nd, ns := l.In, l.Out, l.numDst, l.numSrc
	accumColSum(dy, l.Bias.Grad.Data)
	if l.aggFirst {
		// d[W_self; W_neigh] += catᵀ·dy
		Gemm(true, false, 2*in, out, nd, 1, l.cat.Data, 2*in, dy.Data, out, 1, l.gcat, out)
		if !needDX {
			return nil
		}
		// dcat = dy·[W_self; W_neigh]ᵀ = [d x_dst | d mean]
		dcat := ar.TensorNoZero(nd, 2*in)
		Gemm(false, true, nd, 2*in, out, 1, dy.Data, out, l.wcat, out, 0, dcat.Data, 2*in)
		dx := ar.TensorNoZero(ns, in)
		l.a.spmmT(dcat.Data[in:], 2*in, dx.Data, in, in, false, ar)
		parallelFor(nd, grainFor(in), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				axpy(1, dcat.Data[i*2*in:i*2*in+in], dx.Row(i))
			}
		})
		return dx
	}
	inputTGradAdd(l.xs, l.x, nd, dy.Data, out, l.WSelf.Grad.Data)
	dproj := ar.TensorNoZero(ns, out)
	l.a.spmmT(dy.Data, out, dproj.Data, out, out, false, ar)
	inputTGradAdd(l.xs, l.x, ns, dproj.Data, out, l.WNeigh.Grad.Data)
	if !needDX {
		return nil
	}
	dx := ar.TensorNoZero(ns, in)
	Gemm(false, true, ns, in, out, 1, dproj.Data, out, l.WNeigh.Value.Data, out, 0, dx.Data, in)
	Gemm(false, true, nd, in, out, 1, dy.Data, out, l.WSelf.Value.Data, out, 1, dx.Data, in)
	return dx
}
