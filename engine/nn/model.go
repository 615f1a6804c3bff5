package nn

import (
	"errors"
	"fmt"
	"time"

	"outcore/engine/graph"
)

// Model kinds accepted by NewModel.
const (
	KindSAGE = "sage"
	KindGCN  = "gcn"
	KindGAT  = "gat"
)

// ErrBadModel is returned (wrapped) by NewModel for an invalid configuration.
var ErrBadModel = errors.New("invalid model configuration")

// Model stacks L layers of one kind, one per block. Layer l maps
// blocks[l]'s sources to its destinations; between layers come the
// activation and dropout. The layouts follow the published reference
// models:
//
//	sage: conv → relu → dropout → … → conv                (no input dropout)
//	gcn:  dropout → conv → relu → dropout → … → conv       (Kipf & Welling)
//	gat:  dropout → conv → elu → dropout → … → conv        (Veličković et al.;
//	      hidden layers concatenate `heads` heads of hidden/heads… see NewModel;
//	      attention dropout = Dropout)
//
// Forward results live in the model's arena until the next Forward.
type Model struct {
	Kind         string
	Layers       []Layer
	Act          string  // activation between layers: relu or elu
	Dropout      float32 // feature dropout probability
	InputDropout bool    // also drop the input features before layer 0
	Seed         uint64
	Opt          *Adam

	arena Arena
	step  uint64 // training forwards so far; part of the dropout key
	// per-forward state for Backward
	outs   []*Tensor // activation(+dropout) output of layer l (input of l+1)
	blocks []graph.Block
	train  bool
	times  StepTimes
}

// StepTimes is the wall time of the parts of the last Step.
type StepTimes struct {
	Forward  time.Duration // forward pass and loss
	Backward time.Duration // backward pass
	Update   time.Duration // optimiser step (and ZeroGrad)
}

// LastStepTimes returns the timing of the most recent Step.
func (m *Model) LastStepTimes() StepTimes { return m.times }

// NewModel builds a model of kind sage, gcn or gat with `layers` layers:
// inDim → hidden → … → hidden → classes. For gat, hidden layers have `heads`
// heads of width hidden/heads each (so their output is `hidden` wide, as
// PyG's GAT with hidden_channels=hidden/heads) and the output layer has one
// head; heads must divide hidden. heads is ignored for sage and gcn. The
// optimiser is Adam with lr 0.01 and no weight decay; set m.Opt.LR and
// m.Opt.WeightDecay (or replace m.Opt) before training.
func NewModel(kind string, inDim, hidden, classes, layers, heads int, dropout float32, seed uint64) (*Model, error) {
	if layers < 1 || inDim < 1 || classes < 1 || (layers > 1 && hidden < 1) {
		return nil, fmt.Errorf("%w: layers=%d in=%d hidden=%d classes=%d (all must be ≥ 1)", ErrBadModel, layers, inDim, hidden, classes)
	}
	if dropout < 0 || dropout >= 1 {
		return nil, fmt.Errorf("%w: dropout %v not in [0,1)", ErrBadModel, dropout)
	}
	rng := NewRNG(seed)
	m := &Model{Kind: kind, Act: ActReLU, Dropout: dropout, Seed: seed}
	dims := make([]int, layers+1)
	dims[0], dims[layers] = inDim, classes
	for l := 1; l < layers; l++ {
		dims[l] = hidden
	}
	switch kind {
	case KindSAGE:
		for l := 0; l < layers; l++ {
			m.Layers = append(m.Layers, NewSAGE(dims[l], dims[l+1], rng))
		}
	case KindGCN:
		m.InputDropout = true
		for l := 0; l < layers; l++ {
			m.Layers = append(m.Layers, NewGCN(dims[l], dims[l+1], rng))
		}
	case KindGAT:
		if heads < 1 || (layers > 1 && hidden%heads != 0) {
			return nil, fmt.Errorf("%w: gat needs heads ≥ 1 dividing hidden (heads=%d hidden=%d)", ErrBadModel, heads, hidden)
		}
		m.InputDropout, m.Act = true, ActELU
		for l := 0; l < layers; l++ {
			var g *GAT
			if l < layers-1 {
				g = NewGAT(dims[l], heads, hidden/heads, true, rng)
			} else {
				g = NewGAT(dims[l], 1, classes, false, rng)
			}
			g.AttnDropout = dropout
			m.Layers = append(m.Layers, g)
		}
	default:
		return nil, fmt.Errorf("%w: unknown kind %q (want sage, gcn or gat)", ErrBadModel, kind)
	}
	m.Opt = NewAdam(m.Params(), 0.01, 0)
	return m, nil
}

// Params returns every trainable parameter, layer by layer.
func (m *Model) Params() []*Param {
	var ps []*Param
	for _, l := range m.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// NumParams is the total number of trainable scalars.
func (m *Model) NumParams() int {
	n := 0
	for _, p := range m.Params() {
		n += len(p.Value.Data)
	}
	return n
}

// ZeroGrad clears every parameter gradient.
func (m *Model) ZeroGrad() {
	for _, p := range m.Params() {
		p.ZeroGrad()
	}
}

// FreeScratch releases the model's scratch arena, e.g. after a one-off
// full-graph inference that made it much larger than training needs.
// Tensors returned by earlier Forward calls become invalid.
func (m *Model) FreeScratch() {
	m.arena.Release()
	m.outs, m.train = nil, false
}

// ArenaBytes reports the scratch memory the model holds.
func (m *Model) ArenaBytes() int { return m.arena.Bytes() }

// ArenaSizes reports the workspace's float32 and int32 elements.
func (m *Model) ArenaSizes() (floats, ints int) { return m.arena.Sizes() }

// ReserveArena sizes the workspace in advance (see Arena.Reserve).
func (m *Model) ReserveArena(floats, ints int) { m.arena.Reserve(floats, ints) }

// Validate checks that blocks and x fit the model: one block per layer,
// consecutive blocks chained (NumDst of l = NumSrc of l+1), x of
// blocks[0].NumSrc rows and InDim columns, and every block well formed.
func (m *Model) Validate(blocks []graph.Block, x *Tensor) error {
	if err := m.validateBlocks(blocks); err != nil {
		return err
	}
	if x.Rows != blocks[0].NumSrc || x.Cols != m.Layers[0].InDim() {
		return fmt.Errorf("features are %v, want blocks[0].NumSrc×in = %d×%d", x, blocks[0].NumSrc, m.Layers[0].InDim())
	}
	return nil
}

// validateBlocks checks one block per layer, chained and well formed.
func (m *Model) validateBlocks(blocks []graph.Block) error {
	if len(blocks) != len(m.Layers) {
		return fmt.Errorf("model has %d layers but got %d blocks", len(m.Layers), len(blocks))
	}
	for l := range blocks {
		if err := validateBlock(&blocks[l]); err != nil {
			return fmt.Errorf("blocks[%d]: %w", l, err)
		}
		if l > 0 && blocks[l].NumSrc != blocks[l-1].NumDst {
			return fmt.Errorf("blocks[%d].NumSrc=%d but blocks[%d].NumDst=%d", l, blocks[l].NumSrc, l-1, blocks[l-1].NumDst)
		}
	}
	return nil
}

func (m *Model) dropKey(site int) uint64 { return DropoutKey(m.Seed, m.step, uint64(site)) }

// Forward runs the model and returns the logits of the last block's
// destination nodes (NumDst×classes). train enables dropout and keeps what
// Backward needs; train=false is inference. x is not modified. It panics
// with Validate's message on inconsistent input.
func (m *Model) Forward(blocks []graph.Block, x *Tensor, train bool) *Tensor {
	if err := m.Validate(blocks, x); err != nil {
		panic("nn.Model.Forward: " + err.Error())
	}
	return m.forward(blocks, x, nil, train)
}

// forward runs the model on x, or on xi when x is nil (ForwardIndexed).
func (m *Model) forward(blocks []graph.Block, x *Tensor, xi *Indexed, train bool) *Tensor {
	m.arena.Reset()
	if train {
		m.step++
	}
	m.train, m.blocks = train, blocks
	m.outs = m.outs[:0]
	p := float32(0)
	if train {
		p = m.Dropout
	}
	var h *Tensor
	for l, layer := range m.Layers {
		if g, ok := layer.(*GAT); ok {
			g.DropKey = m.dropKey(1000 + l)
		}
		var y *Tensor
		switch {
		case l > 0:
			y = layer.Forward(&m.arena, &blocks[l], h, train)
		case xi != nil:
			y = m.forwardFirstIndexed(&blocks[0], *xi, p, train)
			if xi.Consumed != nil {
				xi.Consumed() // the rows live on only in the workspace
			}
		default:
			h = x
			if m.InputDropout && p > 0 {
				h = m.arena.TensorNoZero(x.Rows, x.Cols)
				copy(h.Data, x.Data)
				Dropout(h, p, m.dropKey(0))
			}
			y = layer.Forward(&m.arena, &blocks[0], h, train)
		}
		if l < len(m.Layers)-1 {
			actDropForward(m.Act, y, p, m.dropKey(l+1))
			m.outs = append(m.outs, y)
		}
		h = y
	}
	return h
}

// Backward propagates dLogits (the gradient of the loss w.r.t. Forward's
// result) through the model, adding into every Param's Grad. It must follow
// a Forward with train=true.
func (m *Model) Backward(dLogits *Tensor) {
	if !m.train {
		panic("nn.Model.Backward: the last Forward was not a training forward")
	}
	p := m.Dropout
	g := dLogits
	for l := len(m.Layers) - 1; l >= 0; l-- {
		dx := m.Layers[l].Backward(&m.arena, g, l > 0)
		if l == 0 {
			break
		}
		// through dropout and the activation of layer l-1's output
		actDropBackward(m.Act, m.outs[l-1], dx, p, m.dropKey(l))
		g = dx
	}
}

// Step runs one training step on a mini-batch: zero gradients, forward with
// dropout, softmax cross-entropy against labels (one per last-block
// destination; < 0 = ignore), backward and an Adam update. It returns the
// mean loss and the training accuracy of the batch.
func (m *Model) Step(blocks []graph.Block, x *Tensor, labels []int32) (loss, acc float32) {
	if err := m.Validate(blocks, x); err != nil {
		panic("nn.Model.Step: " + err.Error())
	}
	return m.step1(labels, func() *Tensor { return m.forward(blocks, x, nil, true) })
}

// StepIndexed is Step on an input read through x's index
// (indexed_input.go).
func (m *Model) StepIndexed(blocks []graph.Block, x Indexed, labels []int32) (loss, acc float32) {
	if err := m.validateIndexed(blocks, x); err != nil {
		panic("nn.Model.StepIndexed: " + err.Error())
	}
	return m.step1(labels, func() *Tensor { return m.forward(blocks, nil, &x, true) })
}

func (m *Model) step1(labels []int32, forward func() *Tensor) (loss, acc float32) {
	t0 := time.Now()
	m.ZeroGrad()
	t1 := time.Now()
	logits := forward()
	if len(labels) != logits.Rows {
		panic(fmt.Sprintf("nn.Model.Step: %d labels for %d output nodes", len(labels), logits.Rows))
	}
	d := m.arena.TensorNoZero(logits.Rows, logits.Cols)
	loss, correct := SoftmaxCrossEntropy(logits, labels, d)
	t2 := time.Now()
	m.Backward(d)
	t3 := time.Now()
	m.Opt.Step()
	t4 := time.Now()
	m.times = StepTimes{Forward: t2.Sub(t1), Backward: t3.Sub(t2), Update: t4.Sub(t3) + t1.Sub(t0)}
	n := 0
	for _, y := range labels {
		if y >= 0 {
			n++
		}
	}
	if n > 0 {
		acc = float32(correct) / float32(n)
	}
	return loss, acc
}

// Infer is the inference-mode forward (no dropout): logits of the last
// block's destination nodes, valid until the model's next Forward.
func (m *Model) Infer(blocks []graph.Block, x *Tensor) *Tensor { return m.Forward(blocks, x, false) }

// Evaluate returns the accuracy of Infer's predictions against labels
// (rows with label < 0 ignored).
func (m *Model) Evaluate(blocks []graph.Block, x *Tensor, labels []int32) float64 {
	return Accuracy(m.Infer(blocks, x), labels)
}
