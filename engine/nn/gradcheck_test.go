package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"outcore/engine/graph"
)

// The gradient checks compare each layer's float32 analytic gradients with
// central finite differences of an independent, naive float64 reference
// implementation of the same formula (so both the forward semantics and the
// backward pass are checked). The scalar loss is L = Σ R∘Y for a fixed
// random R, so dL/dY = R.

type vec = []float64

func f64(t *Tensor) vec {
	v := make(vec, len(t.Data))
	for i, x := range t.Data {
		v[i] = float64(x)
	}
	return v
}

func dotR(r, y vec) float64 {
	s := 0.0
	for i := range y {
		s += r[i] * y[i]
	}
	return s
}

// refSAGE: y_i = x_i·Ws + mean_j x_j·Wn + b.
func refSAGE(b *graph.Block, x vec, in int, ws, wn, bias vec, out int) vec {
	y := make(vec, b.NumDst*out)
	for i := 0; i < b.NumDst; i++ {
		agg := make(vec, in)
		s, t := b.Indptr[i], b.Indptr[i+1]
		for e := s; e < t; e++ {
			for c := 0; c < in; c++ {
				agg[c] += x[int(b.Indices[e])*in+c] / float64(t-s)
			}
		}
		for o := 0; o < out; o++ {
			v := bias[o]
			for c := 0; c < in; c++ {
				v += x[i*in+c]*ws[c*out+o] + agg[c]*wn[c*out+o]
			}
			y[i*out+o] = v
		}
	}
	return y
}

// refGCN: y_i = Σ_{j∈N(i)∪{i}} x_j·W / sqrt(d̂_i d̂_j) + b.
func refGCN(b *graph.Block, x vec, in int, w, bias vec, out int) vec {
	deg := func(j int) float64 { // d̂ as documented on GCN
		switch {
		case j < b.NumDst && b.DstDeg != nil:
			return float64(b.DstDeg[j]) + 1
		case b.SrcDeg != nil:
			return float64(b.SrcDeg[j]) + 1
		case j < b.NumDst:
			return float64(b.Indptr[j+1]-b.Indptr[j]) + 1
		}
		n := 0
		for _, k := range b.Indices {
			if int(k) == j {
				n++
			}
		}
		return float64(n) + 1
	}
	y := make(vec, b.NumDst*out)
	for i := 0; i < b.NumDst; i++ {
		nb := append([]int32{}, b.Indices[b.Indptr[i]:b.Indptr[i+1]]...)
		nb = append(nb, int32(i))
		for o := 0; o < out; o++ {
			v := bias[o]
			for _, j := range nb {
				c := 1 / math.Sqrt(deg(i)*deg(int(j)))
				for k := 0; k < in; k++ {
					v += c * x[int(j)*in+k] * w[k*out+o]
				}
			}
			y[i*out+o] = v
		}
	}
	return y
}

// refGAT follows PyG GATConv; keep(k) is the attention dropout multiplier of
// coefficient k = edge·H + head (edges in row order, self loop last).
func refGAT(b *graph.Block, x vec, in, H, F int, concat bool, w, as, ad, bias vec, keep func(k int) float64) vec {
	HF := H * F
	z := make(vec, b.NumSrc*HF)
	for j := 0; j < b.NumSrc; j++ {
		for o := 0; o < HF; o++ {
			for c := 0; c < in; c++ {
				z[j*HF+o] += x[j*in+c] * w[c*HF+o]
			}
		}
	}
	score := func(j, h int, a vec) float64 {
		s := 0.0
		for f := 0; f < F; f++ {
			s += z[j*HF+h*F+f] * a[h*F+f]
		}
		return s
	}
	outW := F
	if concat {
		outW = HF
	}
	y := make(vec, b.NumDst*outW)
	e0 := 0
	for i := 0; i < b.NumDst; i++ {
		nb := append([]int32{}, b.Indices[b.Indptr[i]:b.Indptr[i+1]]...)
		nb = append(nb, int32(i))
		full := make(vec, HF)
		for h := 0; h < H; h++ {
			es := make(vec, len(nb))
			mx := math.Inf(-1)
			for k, j := range nb {
				s := score(int(j), h, as) + score(i, h, ad)
				if s < 0 {
					s *= 0.2
				}
				es[k] = s
				mx = math.Max(mx, s)
			}
			sum := 0.0
			for k := range es {
				es[k] = math.Exp(es[k] - mx)
				sum += es[k]
			}
			for k, j := range nb {
				a := es[k] / sum * keep((e0+k)*H+h)
				for f := 0; f < F; f++ {
					full[h*F+f] += a * z[int(j)*HF+h*F+f]
				}
			}
		}
		e0 += len(nb)
		for o := 0; o < outW; o++ {
			v := bias[o]
			if concat {
				v += full[o]
			} else {
				for h := 0; h < H; h++ {
					v += full[h*F+o] / float64(H)
				}
			}
			y[i*outW+o] = v
		}
	}
	return y
}

// checkGrads compares analytic gradients with central differences of f
// (which reads the float64 inputs) for every element of every input (or a
// sample of at most 60 per input).
func checkGrads(t *testing.T, name string, f func() float64, inputs []vec, grads [][]float32, names []string) {
	t.Helper()
	const eps = 1e-6
	rng := rand.New(rand.NewPCG(9, 9))
	for k, in := range inputs {
		idx := rng.Perm(len(in))
		if len(idx) > 60 {
			idx = idx[:60]
		}
		bad := 0
		for _, i := range idx {
			old := in[i]
			in[i] = old + eps
			lp := f()
			in[i] = old - eps
			lm := f()
			in[i] = old
			num := (lp - lm) / (2 * eps)
			an := float64(grads[k][i])
			if math.Abs(num-an) > 2e-3*math.Max(1, math.Abs(num)) {
				if bad < 5 {
					t.Errorf("%s: d/d%s[%d]: analytic %.6g, finite difference %.6g", name, names[k], i, an, num)
				}
				bad++
			}
		}
	}
}

func assertClose(t *testing.T, name string, got *Tensor, want vec, tol float64) {
	t.Helper()
	if len(got.Data) != len(want) {
		t.Fatalf("%s: %d outputs, reference has %d", name, len(got.Data), len(want))
	}
	for i, g := range got.Data {
		if math.Abs(float64(g)-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s: output[%d] = %.6g, reference %.6g", name, i, g, want[i])
		}
	}
}

type gradCase struct {
	name           string
	nd, ns, maxDeg int
	in, out        int
	withDeg        bool
	sparse         bool // ~95% zero input: exercises the CSR input path
}

var gradCases = []gradCase{
	{"small", 5, 9, 4, 3, 4, false, false},
	{"degrees", 6, 11, 5, 4, 3, true, false},
	{"wide-in", 4, 10, 6, 12, 2, false, false}, // transform-first order
	{"wide-out", 4, 6, 3, 2, 9, true, false},   // aggregate-first order
	{"isolated", 3, 3, 0, 3, 3, false, false},  // no edges at all
	{"sparse-input", 5, 8, 4, 40, 3, true, true},
}

// inputFor returns the random input of a case (mostly zeros when sparse).
func inputFor(rng *rand.Rand, c gradCase) *Tensor {
	x := randTensor(rng, c.ns, c.in)
	if c.sparse {
		for i := range x.Data {
			if rng.Float64() < 0.99 && i%c.in != (i/c.in)%c.in {
				x.Data[i] = 0
			}
		}
		// one non-zero per row is kept: an all-zero row gives GAT scores of
		// exactly 0, the LeakyReLU kink, where finite differences are meaningless
		if sparsify(&Arena{}, x) == nil {
			panic("inputFor: sparse case is not sparse enough for the CSR path")
		}
	}
	return x
}

func TestSAGEGradients(t *testing.T) {
	for _, c := range gradCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(c.nd)))
			b := randomBlock(rng, c.nd, c.ns, c.maxDeg, c.withDeg)
			l := NewSAGE(c.in, c.out, rng)
			randomize(rng, l.Params())
			x := inputFor(rng, c)
			r := randTensor(rng, c.nd, c.out)
			var ar Arena
			y := l.Forward(&ar, &b, x, true)
			xs, ws, wn, bb, rr := f64(x), f64(l.WSelf.Value), f64(l.WNeigh.Value), f64(l.Bias.Value), f64(r)
			assertClose(t, "SAGE forward", y, refSAGE(&b, xs, c.in, ws, wn, bb, c.out), 1e-5)
			dx := l.Backward(&ar, r, true)
			f := func() float64 { return dotR(rr, refSAGE(&b, xs, c.in, ws, wn, bb, c.out)) }
			checkGrads(t, "SAGE", f, []vec{xs, ws, wn, bb},
				[][]float32{dx.Data, l.WSelf.Grad.Data, l.WNeigh.Grad.Data, l.Bias.Grad.Data},
				[]string{"x", "w_self", "w_neigh", "bias"})
		})
	}
}

func TestGCNGradients(t *testing.T) {
	for _, c := range gradCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, uint64(c.nd)))
			b := randomBlock(rng, c.nd, c.ns, c.maxDeg, c.withDeg)
			l := NewGCN(c.in, c.out, rng)
			randomize(rng, l.Params())
			x := inputFor(rng, c)
			r := randTensor(rng, c.nd, c.out)
			var ar Arena
			y := l.Forward(&ar, &b, x, true)
			xs, w, bb, rr := f64(x), f64(l.W.Value), f64(l.Bias.Value), f64(r)
			assertClose(t, "GCN forward", y, refGCN(&b, xs, c.in, w, bb, c.out), 1e-5)
			dx := l.Backward(&ar, r, true)
			f := func() float64 { return dotR(rr, refGCN(&b, xs, c.in, w, bb, c.out)) }
			checkGrads(t, "GCN", f, []vec{xs, w, bb},
				[][]float32{dx.Data, l.W.Grad.Data, l.Bias.Grad.Data}, []string{"x", "w", "bias"})
		})
	}
}

func TestGATGradients(t *testing.T) {
	cases := []struct {
		heads, f int
		concat   bool
		drop     float32
	}{
		{1, 4, true, 0}, {3, 2, true, 0}, {4, 3, false, 0}, {2, 3, true, 0.4}, {3, 2, false, 0.5},
	}
	for _, gc := range cases {
		for _, c := range gradCases {
			name := fmt.Sprintf("h%d_f%d_concat%v_drop%v/%s", gc.heads, gc.f, gc.concat, gc.drop, c.name)
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, uint64(c.nd*gc.heads)))
				b := randomBlock(rng, c.nd, c.ns, c.maxDeg, c.withDeg)
				l := NewGAT(c.in, gc.heads, gc.f, gc.concat, rng)
				l.AttnDropout, l.DropKey = gc.drop, 12345
				randomize(rng, l.Params())
				x := inputFor(rng, c)
				r := randTensor(rng, c.nd, l.OutDim())
				var ar Arena
				y := l.Forward(&ar, &b, x, true)
				keep := func(k int) float64 {
					if gc.drop == 0 {
						return 1
					}
					if DropoutKeep(k, gc.drop, 12345) {
						return 1 / float64(1-gc.drop)
					}
					return 0
				}
				xs, w, as, ad, bb, rr := f64(x), f64(l.W.Value), f64(l.AttSrc.Value), f64(l.AttDst.Value), f64(l.Bias.Value), f64(r)
				ref := func() vec { return refGAT(&b, xs, c.in, gc.heads, gc.f, gc.concat, w, as, ad, bb, keep) }
				assertClose(t, "GAT forward", y, ref(), 1e-5)
				dx := l.Backward(&ar, r, true)
				checkGrads(t, "GAT", func() float64 { return dotR(rr, ref()) }, []vec{xs, w, as, ad, bb},
					[][]float32{dx.Data, l.W.Grad.Data, l.AttSrc.Grad.Data, l.AttDst.Grad.Data, l.Bias.Grad.Data},
					[]string{"x", "w", "att_src", "att_dst", "bias"})
			})
		}
	}
}

// randomize replaces Glorot values (and the zero biases) with N(0, 0.5²)
// so that every gradient path is exercised.
func randomize(rng *rand.Rand, ps []*Param) {
	for _, p := range ps {
		for i := range p.Value.Data {
			p.Value.Data[i] = float32(rng.NormFloat64() * 0.5)
		}
	}
}
