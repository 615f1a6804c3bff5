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
					s[i] = float32(math.Expm1(float64(v)))
				}
			}
		default:
			for i, v := range s {
				if v < 0 {
					s[i] = 0
				}
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
			for i := lo; i < hi; i++ {
				if o[i] <= 0 {
					d[i] = 0
				}
			}
		}
	})
}
