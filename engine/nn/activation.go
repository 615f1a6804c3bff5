package nn

import "math"

// Activation names accepted by Model and ActForward.
const (
	ActReLU = "relu"
	ActELU  = "elu"
)

// ActForward applies the activation (relu or elu with α=1) in place.
func ActForward(act string, t *Tensor) {
	d := t.Data[:t.Rows*t.Cols]
	parallelFor(len(d), 1<<15, func(lo, hi int) {
		s := d[lo:hi]
		switch act {
		case ActELU:
			for i, v := range s {
				if v <= 0 {
					// exp in float64 minus 1 keeps float32 precision near 0
					// and is several times faster than math.Expm1
					s[i] = float32(math.Exp(float64(v)) - 1)
				}
			}
		default:
			for i, v := range s {
				s[i] = max(v, 0)
			}
		}
	})
}

// ActBackward turns g, the gradient w.r.t. the activation output, into the
// gradient w.r.t. its input, in place. out is the activation's output,
// optionally after inverted dropout with probability p (p=0: none): a
// dropped element's gradient is zero anyway, and a kept one is out·1/(1-p),
// from which the activation's derivative is recovered. g must already carry
// the dropout mask (DropoutBackward) when p > 0.
func ActBackward(act string, out, g *Tensor, p float32) {
	o := out.Data[:out.Rows*out.Cols]
	d := g.Data[:g.Rows*g.Cols]
	keep := 1 - p
	parallelFor(len(d), 1<<15, func(lo, hi int) {
		switch act {
		case ActELU:
			for i := lo; i < hi; i++ {
				v := o[i]
				if v <= 0 {
					// ELU'(x) = exp(x) = out+1 for x ≤ 0; out = v·(1-p) undoes dropout's scale
					d[i] *= v*keep + 1
				}
			}
		default:
			tbl := [2]float32{0, 1}
			for i := lo; i < hi; i++ {
				d[i] *= tbl[b2u(o[i] > 0)]
			}
		}
	})
}

// b2u converts a bool to 0/1 without a branch.
func b2u(b bool) uint8 {
	var u uint8
	if b {
		u = 1
	}
	return u
}

// actDropForward applies the activation and then inverted dropout (p, key)
// in one pass over t.
func actDropForward(act string, t *Tensor, p float32, key uint64) {
	if p <= 0 {
		ActForward(act, t)
		return
	}
	if act != ActReLU {
		ActForward(act, t)
		Dropout(t, p, key)
		return
	}
	d := t.Data[:t.Rows*t.Cols]
	thr := dropThreshold(p)
	tbl := [2]float32{1 / (1 - p), 0}
	n := len(d)
	parallelFor((n+3)/4, 1<<14, func(lo, hi int) {
		for q := lo; q < hi; q++ {
			bits := keepBits(key, q*4)
			for k := 0; k < 4 && q*4+k < n; k++ {
				i := q*4 + k
				d[i] = max(d[i], 0) * tbl[dropBit(bits>>(16*k), thr)]
			}
		}
	})
}

// actDropBackward is the gradient of actDropForward: g (w.r.t. its output)
// becomes the gradient w.r.t. its input, in place. out is its output.
func actDropBackward(act string, out, g *Tensor, p float32, key uint64) {
	if act != ActReLU {
		DropoutBackward(g, p, key)
		ActBackward(act, out, g, p)
		return
	}
	// relu: the output is > 0 exactly where the input was > 0 and the
	// element was kept, so no mask needs recomputing
	o := out.Data[:out.Rows*out.Cols]
	d := g.Data[:g.Rows*g.Cols]
	tbl := [2]float32{0, 1 / (1 - p)}
	parallelFor(len(d), 1<<15, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] *= tbl[b2u(o[i] > 0)]
		}
	})
}
