package nn

import (
	"math"
	"math/rand/v2"
)

// Param is one trainable tensor with its gradient. Backward passes add into
// Grad; ZeroGrad clears it.
type Param struct {
	Name  string
	Value *Tensor
	Grad  *Tensor
	// NoDecay excludes the parameter from Adam's weight decay (biases in
	// some published setups; the default is to decay everything, as
	// torch.optim.Adam(weight_decay=…) does).
	NoDecay bool
}

func newParam(name string, rows, cols int) *Param {
	return &Param{Name: name, Value: NewTensor(rows, cols), Grad: NewTensor(rows, cols)}
}

// ZeroGrad clears the gradient.
func (p *Param) ZeroGrad() { clear(p.Grad.Data) }

// NewRNG returns the deterministic generator used for initialisation.
func NewRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^seed))
}

// Glorot fills t uniformly in ±sqrt(6/(fanIn+fanOut)) (Glorot & Bengio
// 2010, as PyG's glorot()).
func Glorot(t *Tensor, fanIn, fanOut int, rng *rand.Rand) {
	lim := math.Sqrt(6 / float64(fanIn+fanOut))
	for i := range t.Data {
		t.Data[i] = float32((rng.Float64()*2 - 1) * lim)
	}
}
