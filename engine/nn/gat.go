package nn

import (
	"math"
	"math/rand/v2"

	"outcore/engine/graph"
)

// GAT is multi-head graph attention (Veličković et al. 2018) with PyG
// GATConv semantics: one shared linear map z = x·W per head (the same
// weights for source and destination, as GATConv with an int in_channels),
// scores s_ij = a_srcᵀz_j + a_dstᵀz_i, e_ij = LeakyReLU(s_ij, 0.2),
// α_ij = softmax over j ∈ N(i) ∪ {i} (a self loop is added), dropout on α
// while training, out_i = Σ_j α_ij z_j per head; heads are concatenated
// (Concat) or averaged, then the bias is added.
type GAT struct {
	In, Heads, F int
	Concat       bool
	NegSlope     float32
	// AttnDropout is the dropout probability on attention coefficients;
	// DropKey selects the mask (Model sets it every step).
	AttnDropout float32
	DropKey     uint64

	W, AttSrc, AttDst, Bias *Param

	x, z, full *Tensor
	xs         *csrInput // x in CSR form when sparse, else nil
	el, er     []float32 // numSrc×H, numDst×H
	alpha      []float32 // E×H softmax (before dropout)
	a          adj       // weights: α after dropout
	numDst     int
	dropP      float32
}

// NewGAT returns a GAT layer with Glorot weights and attention vectors, zero
// bias and LeakyReLU slope 0.2. Its output width is heads·f when concat,
// else f.
func NewGAT(in, heads, f int, concat bool, rng *rand.Rand) *GAT {
	hf := heads * f
	l := &GAT{In: in, Heads: heads, F: f, Concat: concat, NegSlope: 0.2,
		W: newParam("gat.w", in, hf), AttSrc: newParam("gat.att_src", heads, f),
		AttDst: newParam("gat.att_dst", heads, f)}
	if concat {
		l.Bias = newParam("gat.bias", 1, hf)
	} else {
		l.Bias = newParam("gat.bias", 1, f)
	}
	Glorot(l.W.Value, in, hf, rng)
	Glorot(l.AttSrc.Value, heads, f, rng)
	Glorot(l.AttDst.Value, heads, f, rng)
	return l
}

// InDim is the input feature width.
func (l *GAT) InDim() int { return l.In }

// OutDim is heads·F when heads are concatenated, else F.
func (l *GAT) OutDim() int {
	if l.Concat {
		return l.Heads * l.F
	}
	return l.F
}

// Params returns W, the two attention vectors and the bias.
func (l *GAT) Params() []*Param { return []*Param{l.W, l.AttSrc, l.AttDst, l.Bias} }

// headDots computes out[r*H+h] = z[r, h, :]·att[h, :] for rows [0, rows).
func headDots(z *Tensor, rows, H, F int, att []float32, out []float32) {
	parallelFor(rows, grainFor(H*F), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			zr := z.Row(r)
			for h := 0; h < H; h++ {
				out[r*H+h] = dot(zr[h*F:(h+1)*F], att[h*F:(h+1)*F])
			}
		}
	})
}

// Forward computes the layer for block b on source features x.
func (l *GAT) Forward(ar *Arena, b *graph.Block, x *Tensor, train bool) *Tensor {
	checkInput("GAT", b, x, l.In)
	H, F, HF := l.Heads, l.F, l.Heads*l.F
	nd, ns := b.NumDst, b.NumSrc
	l.x, l.numDst = x, nd
	l.dropP = 0
	if train {
		l.dropP = l.AttnDropout
	}
	l.z = ar.TensorNoZero(ns, HF)
	l.xs = sparsify(ar, x)
	inputTimesW(l.xs, x, ns, l.W.Value.Data, HF, l.z.Data, false)
	l.el = ar.Floats(ns * H)
	l.er = ar.Floats(nd * H)
	headDots(l.z, ns, H, F, l.AttSrc.Value.Data, l.el)
	headDots(l.z, nd, H, F, l.AttDst.Value.Data, l.er)

	l.a.withSelfLoops(b, H, ar)
	E := l.a.edges()
	l.alpha = ar.Floats(E * H)
	slope := l.NegSlope
	thr, scale := dropThreshold(l.dropP), 1/(1-l.dropP)
	parallelFor(nd, grainFor(16*H), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s, t := int(l.a.ptr[i]), int(l.a.ptr[i+1])
			for h := 0; h < H; h++ {
				mx := float32(math.Inf(-1))
				eri := l.er[i*H+h]
				for e := s; e < t; e++ {
					v := l.el[int(l.a.idx[e])*H+h] + eri
					if v < 0 {
						v *= slope
					}
					l.alpha[e*H+h] = v
					mx = max(mx, v)
				}
				var sum float32
				for e := s; e < t; e++ {
					v := float32(math.Exp(float64(l.alpha[e*H+h] - mx)))
					l.alpha[e*H+h] = v
					sum += v
				}
				inv := 1 / sum
				for e := s; e < t; e++ {
					l.alpha[e*H+h] *= inv
				}
			}
			// attention dropout on the row's E×H coefficients
			for k := s * H; k < t*H; k++ {
				w := l.alpha[k]
				if l.dropP > 0 {
					if uint32(keepBits(l.DropKey, k)>>(16*(k&3)))&0xffff < thr {
						w = 0
					} else {
						w *= scale
					}
				}
				l.a.w[k] = w
			}
		}
	})
	l.full = ar.TensorNoZero(nd, HF)
	l.a.spmm(l.z.Data, HF, l.full.Data, HF, HF, false)
	if l.Concat {
		addBias(l.full, l.Bias.Value.Data)
		return l.full
	}
	y := ar.TensorNoZero(nd, F)
	invH := 1 / float32(H)
	parallelFor(nd, grainFor(HF), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			yr, fr := y.Row(i), l.full.Row(i)
			copy(yr, l.Bias.Value.Data)
			for h := 0; h < H; h++ {
				axpy(invH, fr[h*F:(h+1)*F], yr)
			}
		}
	})
	return y
}

// Backward adds parameter gradients and returns dL/dx when needDX is set.
func (l *GAT) Backward(ar *Arena, dy *Tensor, needDX bool) *Tensor {
	checkGrad("GAT", dy, l.numDst, l.OutDim())
	H, F, HF := l.Heads, l.F, l.Heads*l.F
	nd, ns := l.numDst, l.x.Rows
	accumColSum(dy, l.Bias.Grad.Data)
	dOut := dy
	if !l.Concat {
		dOut = ar.TensorNoZero(nd, HF)
		invH := 1 / float32(H)
		parallelFor(nd, grainFor(HF), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d, g := dOut.Row(i), dy.Row(i)
				for h := 0; h < H; h++ {
					o := d[h*F : (h+1)*F]
					for f, v := range g {
						o[f] = v * invH
					}
				}
			}
		})
	}
	E := l.a.edges()
	ds := ar.Floats(E * H) // d loss / d score s_e (before LeakyReLU)
	der := ar.Floats(nd * H)
	slope := l.NegSlope
	thr, scale := dropThreshold(l.dropP), 1/(1-l.dropP)
	parallelFor(nd, grainFor(16*HF), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s, t := int(l.a.ptr[i]), int(l.a.ptr[i+1])
			dr := dOut.Row(i)
			// dα (through dropout) into ds, then the softmax backward
			for e := s; e < t; e++ {
				zj := l.z.Row(int(l.a.idx[e]))
				for h := 0; h < H; h++ {
					k := e*H + h
					g := dot(dr[h*F:(h+1)*F], zj[h*F:(h+1)*F])
					if l.dropP > 0 {
						if uint32(keepBits(l.DropKey, k)>>(16*(k&3)))&0xffff < thr {
							g = 0
						} else {
							g *= scale
						}
					}
					ds[k] = g
				}
			}
			for h := 0; h < H; h++ {
				var sum float32
				for e := s; e < t; e++ {
					sum += l.alpha[e*H+h] * ds[e*H+h]
				}
				eri := l.er[i*H+h]
				var acc float32
				for e := s; e < t; e++ {
					k := e*H + h
					g := l.alpha[k] * (ds[k] - sum)
					if l.el[int(l.a.idx[e])*H+h]+eri < 0 {
						g *= slope
					}
					ds[k] = g
					acc += g
				}
				der[i*H+h] = acc
			}
		}
	})
	// dz = Σ α'·dOut over out-edges, plus the score terms
	dz := ar.TensorNoZero(ns, HF)
	l.a.spmmT(dOut.Data, HF, dz.Data, HF, HF, false, ar)
	del := ar.Floats(ns * H)
	parallelFor(ns, grainFor(16*HF), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			for h := 0; h < H; h++ {
				var acc float32
				for p := l.a.tptr[j]; p < l.a.tptr[j+1]; p++ {
					acc += ds[int(l.a.tedge[p])*H+h]
				}
				del[j*H+h] = acc
			}
		}
	})
	attS, attD := l.AttSrc.Value.Data, l.AttDst.Value.Data
	parallelSum(ns, grainFor(HF), l.AttSrc.Grad.Data, func(lo, hi int, acc []float32) {
		for j := lo; j < hi; j++ {
			zj, dj := l.z.Row(j), dz.Row(j)
			for h := 0; h < H; h++ {
				g := del[j*H+h]
				axpy(g, zj[h*F:(h+1)*F], acc[h*F:(h+1)*F])
				axpy(g, attS[h*F:(h+1)*F], dj[h*F:(h+1)*F])
			}
		}
	})
	parallelSum(nd, grainFor(HF), l.AttDst.Grad.Data, func(lo, hi int, acc []float32) {
		for i := lo; i < hi; i++ {
			zi, di := l.z.Row(i), dz.Row(i)
			for h := 0; h < H; h++ {
				g := der[i*H+h]
				axpy(g, zi[h*F:(h+1)*F], acc[h*F:(h+1)*F])
				axpy(g, attD[h*F:(h+1)*F], di[h*F:(h+1)*F])
			}
		}
	})
	inputTGradAdd(l.xs, l.x, ns, dz.Data, HF, l.W.Grad.Data)
	if !needDX {
		return nil
	}
	dx := ar.TensorNoZero(ns, l.In)
	Gemm(false, true, ns, l.In, HF, 1, dz.Data, HF, l.W.Value.Data, HF, 0, dx.Data, l.In)
	return dx
}
