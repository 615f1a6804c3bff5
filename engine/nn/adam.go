package nn

import "math"

// Adam is the optimiser of Kingma & Ba (2015) with torch.optim.Adam's
// L2-style weight decay: the gradient used is g + WeightDecay·θ (not AdamW's
// decoupled decay). Params with NoDecay skip the decay term.
type Adam struct {
	LR, Beta1, Beta2, Eps, WeightDecay float32
	params                             []*Param
	m, v                               [][]float32
	t                                  int
}

// NewAdam returns Adam over params with β=(0.9, 0.999), ε=1e-8.
func NewAdam(params []*Param, lr, weightDecay float32) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay, params: params}
	for _, p := range params {
		a.m = append(a.m, make([]float32, len(p.Value.Data)))
		a.v = append(a.v, make([]float32, len(p.Value.Data)))
	}
	return a
}

// Steps returns the number of updates taken.
func (a *Adam) Steps() int { return a.t }

// Step applies one update from the current gradients.
func (a *Adam) Step() {
	a.t++
	b1, b2 := float64(a.Beta1), float64(a.Beta2)
	bc1 := 1 - math.Pow(b1, float64(a.t))
	bc2 := 1 - math.Pow(b2, float64(a.t))
	stepSize := float32(float64(a.LR) / bc1)
	sq2 := float32(math.Sqrt(bc2))
	for k, p := range a.params {
		wd := a.WeightDecay
		if p.NoDecay {
			wd = 0
		}
		m, v, w, g := a.m[k], a.v[k], p.Value.Data, p.Grad.Data
		parallelFor(len(w), 1<<14, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				gi := g[i] + wd*w[i]
				m[i] = a.Beta1*m[i] + (1-a.Beta1)*gi
				v[i] = a.Beta2*v[i] + (1-a.Beta2)*gi*gi
				denom := float32(math.Sqrt(float64(v[i])))/sq2 + a.Eps
				w[i] -= stepSize * m[i] / denom
			}
		})
	}
}
