//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"outcore/engine/graph"
	"outcore/engine/nn"
)

// Model is an engine/nn model on the GPU: GraphSAGE (nn.KindSAGE: mean
// aggregator, root weight) or GCN (nn.KindGCN: symmetric normalisation with
// self loops, input dropout), ReLU and dropout between layers, softmax
// cross-entropy, Adam. Every layer aggregates first: SAGE cat = [x_dst |
// mean_{N(i)} x_j], y = cat·[W_self; W_neigh] + b; GCN agg = Â·x, y =
// agg·W + b (engine/nn picks aggregate- or transform-first by cost; the
// two are the same function).
type Model struct {
	kind      string
	inputDrop bool
	dev       *Device
	layers    []*layer
	p         float32
	seed      uint64
	step      uint64 // training forwards so far (engine/nn's dropout key)

	lr, b1, b2, eps, wd float32
	t                   int

	// per-step scratch, grown as needed
	x, ones, grad, ga, gb, dcat, labels, rowloss, correct Buf
	dz, dOut, ds, der, del                                Buf // GAT backward scratch
	nDst                                                  int
}

type layer struct {
	in, out                         int
	w, b, gw, gbias, mw, vw, mb, vb Buf
	decayW, decayB                  bool
	indptr, indices, cat, y         Buf // cat: SAGE's [x_dst | mean], GCN's Â·x
	wts                             Buf // GCN: the normalised edge weights (self loops last)
	nd, ns, wrows                   int // wrows: rows of W (2·in for SAGE, in for GCN and GAT)
	wcols                           int // columns of W (out; GAT: heads·F)
	gat                             *gatLayer
}

// NewModel copies a fresh engine/nn model of kind sage or gcn (its
// weights, dropout, seed and Adam settings) to the GPU. The model must not
// have stepped yet: its Adam moments are not copied.
func NewModel(d *Device, m *nn.Model) (*Model, error) {
	switch {
	case (m.Kind == nn.KindSAGE || m.Kind == nn.KindGCN) && m.Act == nn.ActReLU:
	case m.Kind == nn.KindGAT && m.Act == nn.ActELU:
	default:
		return nil, fmt.Errorf("cuda: model %q with activation %q on the GPU: sage and gcn with relu, gat with elu", m.Kind, m.Act)
	}
	if m.Opt.Steps() != 0 {
		return nil, errors.New("cuda: NewModel needs a model that has not stepped (Adam state is not copied)")
	}
	s := &Model{kind: m.Kind, inputDrop: m.InputDropout, dev: d, p: m.Dropout, seed: m.Seed, lr: m.Opt.LR, b1: m.Opt.Beta1, b2: m.Opt.Beta2,
		eps: m.Opt.Eps, wd: m.Opt.WeightDecay}
	for _, ly := range m.Layers {
		var g *layer
		var w, bias []float32
		switch l := ly.(type) {
		case *nn.SAGE:
			g = &layer{in: l.In, out: l.Out, wrows: 2 * l.In, decayW: !l.WSelf.NoDecay, decayB: !l.Bias.NoDecay}
			w = append(append([]float32{}, l.WSelf.Value.Data...), l.WNeigh.Value.Data...)
			bias = l.Bias.Value.Data
		case *nn.GCN:
			g = &layer{in: l.In, out: l.Out, wrows: l.In, decayW: !l.W.NoDecay, decayB: !l.Bias.NoDecay}
			w, bias = l.W.Value.Data, l.Bias.Value.Data
		case *nn.GAT:
			var err error
			if g, err = newGATLayer(d, l); err != nil {
				return nil, err
			}
			w, bias = l.W.Value.Data, l.Bias.Value.Data
		default:
			return nil, fmt.Errorf("cuda: layer %T in a %s model", ly, m.Kind)
		}
		if g.wcols == 0 {
			g.wcols = g.out
		}
		wn := int64(g.wrows * g.wcols)
		for _, b := range []*Buf{&g.w, &g.gw, &g.mw, &g.vw} {
			var err error
			if *b, err = d.Alloc(wn * 4); err != nil {
				return nil, err
			}
		}
		for _, b := range []*Buf{&g.b, &g.gbias, &g.mb, &g.vb} {
			var err error
			if *b, err = d.Alloc(int64(g.out) * 4); err != nil {
				return nil, err
			}
		}
		if err := d.PutF32(g.w, w); err != nil {
			return nil, err
		}
		if err := d.PutF32(g.b, bias); err != nil {
			return nil, err
		}
		s.layers = append(s.layers, g)
	}
	return s, nil
}

// SetAdam sets the optimiser's learning rate and weight decay (as
// m.Opt.LR and m.Opt.WeightDecay on the CPU model).
func (s *Model) SetAdam(lr, weightDecay float32) { s.lr, s.wd = lr, weightDecay }

// ensure grows *b to at least n bytes (contents not kept).
func (s *Model) ensure(b *Buf, n int64) error {
	if b.Bytes >= n && b.Ptr != 0 {
		return nil
	}
	s.dev.Free(*b)
	grow := n + n/4
	nb, err := s.dev.Alloc(grow)
	if err != nil {
		return err
	}
	*b = nb
	return nil
}

func (s *Model) check(blocks []graph.Block, x *nn.Tensor) error {
	if len(blocks) != len(s.layers) {
		return fmt.Errorf("cuda: model has %d layers but got %d blocks", len(s.layers), len(blocks))
	}
	for l := range blocks {
		b := &blocks[l]
		if len(b.Indptr) != b.NumDst+1 || int(b.Indptr[b.NumDst]) != len(b.Indices) || b.NumDst > b.NumSrc {
			return fmt.Errorf("cuda: blocks[%d] malformed (dst %d, src %d, indptr %d, indices %d)", l, b.NumDst, b.NumSrc, len(b.Indptr), len(b.Indices))
		}
		if l > 0 && b.NumSrc != blocks[l-1].NumDst {
			return fmt.Errorf("cuda: blocks[%d].NumSrc=%d but blocks[%d].NumDst=%d", l, b.NumSrc, l-1, blocks[l-1].NumDst)
		}
		for _, j := range b.Indices {
			if j < 0 || int(j) >= b.NumSrc {
				return fmt.Errorf("cuda: blocks[%d] has source %d of %d", l, j, b.NumSrc)
			}
		}
	}
	if x.Rows != blocks[0].NumSrc || x.Cols != s.layers[0].in {
		return fmt.Errorf("cuda: features are %dx%d, want %dx%d", x.Rows, x.Cols, blocks[0].NumSrc, s.layers[0].in)
	}
	return nil
}

// forward runs the layers; the logits are in the last layer's y.
func (s *Model) forward(blocks []graph.Block, x *nn.Tensor, train bool) error {
	if err := s.check(blocks, x); err != nil {
		return err
	}
	d := s.dev
	if train {
		s.step++
	}
	if err := s.ensure(&s.x, int64(len(x.Data[:x.Rows*x.Cols]))*4); err != nil {
		return err
	}
	// through page-locked staging (staging.go), not from pageable memory
	if err := d.PutF32Staged(s.x, x.Data[:x.Rows*x.Cols]); err != nil {
		return err
	}
	if s.inputDrop && train && s.p > 0 {
		_, thr, scale := dropParams(s.p)
		n := int64(x.Rows) * int64(x.Cols)
		if err := d.launch("drop_fwd", n, s.x.Ptr, uint64(n), uint64(thr), f32(scale), nn.DropoutKey(s.seed, s.step, 0)); err != nil {
			return err
		}
	}
	h := s.x
	L := len(s.layers)
	for l, g := range s.layers {
		b := &blocks[l]
		g.nd, g.ns = b.NumDst, b.NumSrc
		if g.gat != nil {
			if err := s.gatForward(l, g, b, h, train); err != nil {
				return err
			}
			h = g.y
			continue
		}
		if err := s.aggregate(g, b, h); err != nil {
			return err
		}
		if err := d.Gemm(false, false, g.nd, g.out, g.wrows, 1, g.cat, g.wrows, g.w, g.out, 0, g.y, g.out); err != nil {
			return err
		}
		if err := d.launch("add_bias", int64(g.nd)*int64(g.out), g.y.Ptr, g.b.Ptr, i32(g.nd), i32(g.out)); err != nil {
			return err
		}
		if l < L-1 {
			p := float32(0)
			if train {
				p = s.p
			}
			drop, thr, scale := dropParams(p)
			key := nn.DropoutKey(s.seed, s.step, uint64(l+1))
			if err := d.launch("relu_drop_fwd", int64(g.nd)*int64(g.out), g.y.Ptr, uint64(g.nd)*uint64(g.out),
				i32(drop), uint64(thr), f32(scale), key); err != nil {
				return err
			}
		}
		h = g.y
	}
	return nil
}

// aggregate uploads block b and computes layer g's aggregated input from
// h into g.cat (SAGE: [x_dst | mean]; GCN: Â·x with engine/nn's weights).
func (s *Model) aggregate(g *layer, b *graph.Block, h Buf) error {
	d := s.dev
	ptr, idx := b.Indptr, b.Indices
	var wts []float32
	if s.kind == nn.KindGCN {
		ptr, idx, wts = gcnAdj(b)
	}
	for _, e := range []error{
		s.ensure(&g.indptr, int64(len(ptr))*4), s.ensure(&g.indices, int64(len(idx))*4),
		s.ensure(&g.cat, int64(g.nd)*int64(g.wrows)*4), s.ensure(&g.y, int64(g.nd)*int64(g.out)*4),
	} {
		if e != nil {
			return e
		}
	}
	if err := d.PutI32(g.indptr, ptr); err != nil {
		return err
	}
	if err := d.PutI32(g.indices, idx); err != nil {
		return err
	}
	if s.kind == nn.KindGCN {
		if err := s.ensure(&g.wts, int64(len(wts))*4); err != nil {
			return err
		}
		if err := d.PutF32(g.wts, wts); err != nil {
			return err
		}
		return d.launch("spmm_w", int64(g.nd)*int64(g.in), g.cat.Ptr, h.Ptr, g.indptr.Ptr, g.indices.Ptr, g.wts.Ptr, i32(g.nd), i32(g.in))
	}
	return d.launch("sage_cat", int64(g.nd)*int64(g.in), g.cat.Ptr, h.Ptr, g.indptr.Ptr, g.indices.Ptr, i32(g.nd), i32(g.in))
}

// gcnAdj is engine/nn's GCN adjacency of block b: every destination's
// edges then its self loop, weighted 1/sqrt((deg_i+1)(deg_j+1)) with the
// full-graph degrees when the block carries them (SrcDeg, DstDeg), else
// the block's own.
func gcnAdj(b *graph.Block) (ptr, idx []int32, w []float32) {
	inv := make([]float32, b.NumSrc)
	var cnt []int32
	if b.SrcDeg == nil {
		cnt = make([]int32, b.NumSrc)
	}
	nn.GCNInvSqrtDeg(b, inv, cnt)
	E := len(b.Indices) + b.NumDst
	ptr, idx, w = make([]int32, b.NumDst+1), make([]int32, 0, E), make([]float32, 0, E)
	for i := 0; i < b.NumDst; i++ {
		for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
			idx = append(idx, j)
			w = append(w, inv[i]*inv[j])
		}
		idx = append(idx, int32(i))
		w = append(w, inv[i]*inv[i])
		ptr[i+1] = int32(len(idx))
	}
	return ptr, idx, w
}

// dropParams mirrors engine/nn's dropout: the 16-bit threshold and the
// kept elements' scale; drop is 0 for p ≤ 0 (ReLU alone).
func dropParams(p float32) (drop int, thr uint32, scale float32) {
	if p <= 0 {
		return 0, 0, 1
	}
	t := uint32(p*65536 + 0.5)
	t = min(t, 65536)
	return 1, t, 1 / (1 - p)
}

// Step runs one training step (zero gradients, forward with dropout,
// softmax cross-entropy, backward, Adam) and returns the mean loss and the
// batch's training accuracy, as nn.Model.Step.
func (s *Model) Step(blocks []graph.Block, x *nn.Tensor, labels []int32) (loss, acc float32, err error) {
	d := s.dev
	for _, g := range s.layers {
		if err := d.Zero(g.gw); err != nil {
			return 0, 0, err
		}
		if err := d.Zero(g.gbias); err != nil {
			return 0, 0, err
		}
		if g.gat != nil {
			if err := d.Zero(g.gat.gAttS); err != nil {
				return 0, 0, err
			}
			if err := d.Zero(g.gat.gAttD); err != nil {
				return 0, 0, err
			}
		}
	}
	if err := s.forward(blocks, x, true); err != nil {
		return 0, 0, err
	}
	last := s.layers[len(s.layers)-1]
	if len(labels) != last.nd {
		return 0, 0, fmt.Errorf("cuda: %d labels for %d output nodes", len(labels), last.nd)
	}
	loss, correct, n, err := s.lossGrad(last, labels)
	if err != nil {
		return 0, 0, err
	}
	if err := s.backward(); err != nil {
		return 0, 0, err
	}
	if err := s.adamStep(); err != nil {
		return 0, 0, err
	}
	if n > 0 {
		acc = float32(correct) / float32(n)
	}
	return loss, acc, d.Sync()
}

// lossGrad computes the softmax cross-entropy of the last layer's output
// and its gradient into s.grad.
func (s *Model) lossGrad(last *layer, labels []int32) (loss float32, correct, n int, err error) {
	d := s.dev
	nd, C := last.nd, last.out
	for _, y := range labels {
		if y >= int32(C) {
			return 0, 0, 0, fmt.Errorf("cuda: label %d ≥ %d classes", y, C)
		}
		if y >= 0 {
			n++
		}
	}
	for _, e := range []error{s.ensure(&s.labels, int64(nd)*4), s.ensure(&s.grad, int64(nd)*int64(C)*4),
		s.ensure(&s.rowloss, int64(nd)*8), s.ensure(&s.correct, int64(nd)*4)} {
		if e != nil {
			return 0, 0, 0, e
		}
	}
	if err := d.PutI32(s.labels, labels); err != nil {
		return 0, 0, 0, err
	}
	inv := float32(0)
	if n > 0 {
		inv = 1 / float32(n)
	}
	if err := d.launch("softmax_ce", int64(nd), last.y.Ptr, s.labels.Ptr, s.grad.Ptr, s.rowloss.Ptr, s.correct.Ptr,
		i32(nd), i32(C), f32(inv)); err != nil {
		return 0, 0, 0, err
	}
	rl := make([]float64, nd)
	cr := make([]int32, nd)
	if nd > 0 {
		if err := d.getBytes(unsafe.Pointer(&rl[0]), s.rowloss, int64(nd)*8); err != nil {
			return 0, 0, 0, err
		}
		if err := d.getBytes(unsafe.Pointer(&cr[0]), s.correct, int64(nd)*4); err != nil {
			return 0, 0, 0, err
		}
	}
	var total float64
	for r := range rl {
		if labels[r] >= 0 {
			total += rl[r]
			correct += int(cr[r])
		}
	}
	if n == 0 {
		return 0, 0, 0, nil
	}
	return float32(total / float64(n)), correct, n, nil
}

func (s *Model) backward() error {
	d := s.dev
	g := s.grad
	bufs := [2]*Buf{&s.ga, &s.gb}
	for l := len(s.layers) - 1; l >= 0; l-- {
		ly := s.layers[l]
		if err := s.ensure(&s.ones, int64(ly.nd)*4); err != nil {
			return err
		}
		if err := d.launch("fill", int64(ly.nd), s.ones.Ptr, f32(1), i32(ly.nd)); err != nil {
			return err
		}
		// db += 1ᵀ·dy, dW += catᵀ·dy
		if err := d.Gemm(false, false, 1, ly.out, ly.nd, 1, s.ones, ly.nd, g, ly.out, 1, ly.gbias, ly.out); err != nil {
			return err
		}
		if ly.gat != nil {
			dx := bufs[l%2]
			if err := s.gatBackward(l, ly, g, dx); err != nil {
				return err
			}
			if l == 0 {
				break
			}
			g = *dx
			continue
		}
		if err := d.Gemm(true, false, ly.wrows, ly.out, ly.nd, 1, ly.cat, ly.wrows, g, ly.out, 1, ly.gw, ly.out); err != nil {
			return err
		}
		if l == 0 {
			break
		}
		// dcat = dy·Wᵀ; SAGE: dx = [dcat_self] + scatter(dcat_neigh / deg);
		// GCN: dx = Âᵀ·dcat
		if err := s.ensure(&s.dcat, int64(ly.nd)*int64(ly.wrows)*4); err != nil {
			return err
		}
		if err := d.Gemm(false, true, ly.nd, ly.wrows, ly.out, 1, g, ly.out, ly.w, ly.out, 0, s.dcat, ly.wrows); err != nil {
			return err
		}
		dx := bufs[l%2]
		n := int64(ly.ns) * int64(ly.in)
		if err := s.ensure(dx, n*4); err != nil {
			return err
		}
		if err := d.ZeroN(*dx, n*4); err != nil {
			return err
		}
		var err error
		if s.kind == nn.KindGCN {
			err = d.launch("spmm_w_t", int64(ly.nd)*int64(ly.in), dx.Ptr, s.dcat.Ptr, ly.indptr.Ptr, ly.indices.Ptr, ly.wts.Ptr,
				i32(ly.nd), i32(ly.in))
		} else {
			err = d.launch("sage_cat_back", int64(ly.nd)*int64(ly.in), dx.Ptr, s.dcat.Ptr, ly.indptr.Ptr, ly.indices.Ptr,
				i32(ly.nd), i32(ly.in))
		}
		if err != nil {
			return err
		}
		// through dropout and ReLU of layer l-1's output
		_, _, scale := dropParams(s.p)
		if err := d.launch("relu_drop_bwd", n, dx.Ptr, s.layers[l-1].y.Ptr, uint64(n), f32(scale)); err != nil {
			return err
		}
		g = *dx
	}
	return nil
}

func (s *Model) adamStep() error {
	s.t++
	b1, b2 := float64(s.b1), float64(s.b2)
	bc1 := 1 - math.Pow(b1, float64(s.t))
	bc2 := 1 - math.Pow(b2, float64(s.t))
	stepSize := float32(float64(s.lr) / bc1)
	sq2 := float32(math.Sqrt(bc2))
	for _, g := range s.layers {
		if g.gat != nil {
			if err := s.gatAdam(g, stepSize, sq2); err != nil {
				return err
			}
		}
		for _, p := range []struct {
			w, gr, m, v Buf
			n           int
			decay       bool
		}{{g.w, g.gw, g.mw, g.vw, g.wrows * g.wcols, g.decayW}, {g.b, g.gbias, g.mb, g.vb, g.out, g.decayB}} {
			wd := s.wd
			if !p.decay {
				wd = 0
			}
			if err := s.dev.launch("adam", int64(p.n), p.w.Ptr, p.gr.Ptr, p.m.Ptr, p.v.Ptr, i32(p.n), f32(s.b1), f32(s.b2),
				f32(s.eps), f32(wd), f32(stepSize), f32(sq2)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Infer is the inference forward (no dropout): the logits of the last
// block's destinations, copied to the host.
func (s *Model) Infer(blocks []graph.Block, x *nn.Tensor) (*nn.Tensor, error) {
	if err := s.forward(blocks, x, false); err != nil {
		return nil, err
	}
	last := s.layers[len(s.layers)-1]
	out := nn.NewTensor(last.nd, last.out)
	if err := s.dev.GetF32(out.Data, last.y); err != nil {
		return nil, err
	}
	return out, nil
}

// CopyTo writes the GPU weights into an engine/nn model of the same kind
// and shape (to compare with the CPU trainer, or to evaluate on the CPU).
func (s *Model) CopyTo(m *nn.Model) error {
	if len(m.Layers) != len(s.layers) || m.Kind != s.kind {
		return fmt.Errorf("cuda: CopyTo a %d-layer %s model from %d %s layers", len(m.Layers), m.Kind, len(s.layers), s.kind)
	}
	for i, g := range s.layers {
		w := make([]float32, g.wrows*g.wcols)
		if err := s.dev.GetF32(w, g.w); err != nil {
			return err
		}
		var bias []float32
		switch l := m.Layers[i].(type) {
		case *nn.SAGE:
			if l.In != g.in || l.Out != g.out {
				return fmt.Errorf("cuda: CopyTo layer %d: not %dx%d", i, g.in, g.out)
			}
			copy(l.WSelf.Value.Data, w[:g.in*g.out])
			copy(l.WNeigh.Value.Data, w[g.in*g.out:])
			bias = l.Bias.Value.Data
		case *nn.GCN:
			if l.In != g.in || l.Out != g.out {
				return fmt.Errorf("cuda: CopyTo layer %d: not %dx%d", i, g.in, g.out)
			}
			copy(l.W.Value.Data, w)
			bias = l.Bias.Value.Data
		case *nn.GAT:
			if g.gat == nil || l.In != g.in || l.OutDim() != g.out || l.Heads != g.gat.H {
				return fmt.Errorf("cuda: CopyTo layer %d: not the GAT layer %dx%d", i, g.in, g.out)
			}
			copy(l.W.Value.Data, w)
			if err := s.dev.GetF32(l.AttSrc.Value.Data, g.gat.attS); err != nil {
				return err
			}
			if err := s.dev.GetF32(l.AttDst.Value.Data, g.gat.attD); err != nil {
				return err
			}
			bias = l.Bias.Value.Data
		default:
			return fmt.Errorf("cuda: CopyTo layer %d: %T", i, l)
		}
		if err := s.dev.GetF32(bias, g.b); err != nil {
			return err
		}
	}
	return nil
}

// Close frees the model's device memory.
func (s *Model) Close() {
	for _, g := range s.layers {
		for _, b := range []Buf{g.w, g.b, g.gw, g.gbias, g.mw, g.vw, g.mb, g.vb, g.indptr, g.indices, g.cat, g.y, g.wts} {
			s.dev.Free(b)
		}
		if g.gat != nil {
			g.gat.free(s.dev)
		}
	}
	for _, b := range []Buf{s.x, s.ones, s.grad, s.ga, s.gb, s.dcat, s.labels, s.rowloss, s.correct, s.dz, s.dOut, s.ds, s.der, s.del} {
		s.dev.Free(b)
	}
	s.layers = nil
}
