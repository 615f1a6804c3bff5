//go:build cgo

package cuda

import (
	"outcore/engine/graph"
	"outcore/engine/nn"
)

// gatLayer is the GAT part of a layer (engine/nn gat.go, PyG GATConv
// semantics): z = x·W, scores a_srcᵀz_j + a_dstᵀz_i, LeakyReLU, softmax
// over N(i) ∪ {i}, attention dropout, heads concatenated or averaged, bias.
type gatLayer struct {
	H, F        int
	concat      bool
	slope, attP float32

	attS, attD, gAttS, gAttD, mS, vS, mD, vD Buf
	decayS, decayD                           bool

	in                         Buf   // the layer's input (x after input dropout, or the previous output)
	z, el, er, alpha, aw, full Buf   // forward state kept for the backward pass
	edges                      int64 // edges of the last forward, self loops included
}

func newGATLayer(d *Device, l *nn.GAT) (*layer, error) {
	HF := l.Heads * l.F
	g := &layer{in: l.In, out: l.OutDim(), wrows: l.In, wcols: HF, decayW: !l.W.NoDecay, decayB: !l.Bias.NoDecay}
	a := &gatLayer{H: l.Heads, F: l.F, concat: l.Concat, slope: l.NegSlope, attP: l.AttnDropout,
		decayS: !l.AttSrc.NoDecay, decayD: !l.AttDst.NoDecay}
	for _, b := range []*Buf{&a.attS, &a.attD, &a.gAttS, &a.gAttD, &a.mS, &a.vS, &a.mD, &a.vD} {
		var err error
		if *b, err = d.Alloc(int64(HF) * 4); err != nil {
			return nil, err
		}
	}
	if err := d.PutF32(a.attS, l.AttSrc.Value.Data); err != nil {
		return nil, err
	}
	if err := d.PutF32(a.attD, l.AttDst.Value.Data); err != nil {
		return nil, err
	}
	g.gat = a
	return g, nil
}

func (a *gatLayer) free(d *Device) {
	for _, b := range []Buf{a.attS, a.attD, a.gAttS, a.gAttD, a.mS, a.vS, a.mD, a.vD, a.z, a.el, a.er, a.alpha, a.aw, a.full} {
		d.Free(b)
	}
}

// gatForward runs GAT layer l on block b from input h into g.y, then (for
// a hidden layer) ELU and dropout as engine/nn's model does.
func (s *Model) gatForward(l int, g *layer, b *graph.Block, h Buf, train bool) error {
	d, a := s.dev, g.gat
	H, F, HF := a.H, a.F, a.H*a.F
	nd, ns := g.nd, g.ns
	a.in = h
	ptr, idx, _ := gcnAdj(b) // the block's edges and a self loop last in each row
	E := int64(len(idx))
	a.edges = E
	for _, e := range []error{
		s.ensure(&g.indptr, int64(len(ptr))*4), s.ensure(&g.indices, E*4),
		s.ensure(&a.z, int64(ns)*int64(HF)*4), s.ensure(&a.el, int64(ns)*int64(H)*4), s.ensure(&a.er, int64(nd)*int64(H)*4),
		s.ensure(&a.alpha, E*int64(H)*4), s.ensure(&a.aw, E*int64(H)*4), s.ensure(&a.full, int64(nd)*int64(HF)*4),
		s.ensure(&g.y, int64(nd)*int64(g.out)*4),
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
	if err := d.Gemm(false, false, ns, HF, g.in, 1, h, g.in, g.w, HF, 0, a.z, HF); err != nil {
		return err
	}
	if err := d.launch("head_dots", int64(ns)*int64(H), a.el.Ptr, a.z.Ptr, a.attS.Ptr, i32(ns), i32(H), i32(F)); err != nil {
		return err
	}
	if err := d.launch("head_dots", int64(nd)*int64(H), a.er.Ptr, a.z.Ptr, a.attD.Ptr, i32(nd), i32(H), i32(F)); err != nil {
		return err
	}
	p := float32(0)
	if train {
		p = a.attP
	}
	drop, thr, scale := dropParams(p)
	key := nn.DropoutKey(s.seed, s.step, uint64(1000+l))
	if err := d.launch("gat_alpha", int64(nd)*int64(H), a.alpha.Ptr, a.aw.Ptr, a.el.Ptr, a.er.Ptr, g.indptr.Ptr, g.indices.Ptr,
		i32(nd), i32(H), f32(a.slope), i32(drop), uint64(thr), f32(scale), key); err != nil {
		return err
	}
	if a.concat {
		if err := d.launch("gat_agg", int64(nd)*int64(HF), g.y.Ptr, a.z.Ptr, g.indptr.Ptr, g.indices.Ptr, a.aw.Ptr, i32(nd), i32(H), i32(F)); err != nil {
			return err
		}
		if err := d.launch("add_bias", int64(nd)*int64(HF), g.y.Ptr, g.b.Ptr, i32(nd), i32(HF)); err != nil {
			return err
		}
	} else {
		if err := d.launch("gat_agg", int64(nd)*int64(HF), a.full.Ptr, a.z.Ptr, g.indptr.Ptr, g.indices.Ptr, a.aw.Ptr, i32(nd), i32(H), i32(F)); err != nil {
			return err
		}
		if err := d.launch("head_mean", int64(nd)*int64(F), g.y.Ptr, a.full.Ptr, g.b.Ptr, i32(nd), i32(H), i32(F)); err != nil {
			return err
		}
	}
	if l == len(s.layers)-1 {
		return nil
	}
	n := int64(nd) * int64(g.out)
	if err := d.launch("elu_fwd", n, g.y.Ptr, uint64(n)); err != nil {
		return err
	}
	if train && s.p > 0 {
		_, thr, scale := dropParams(s.p)
		return d.launch("drop_fwd", n, g.y.Ptr, uint64(n), uint64(thr), f32(scale), nn.DropoutKey(s.seed, s.step, uint64(l+1)))
	}
	return nil
}

// gatBackward adds layer l's W and attention gradients for dy (its bias
// gradient is done) and, for l > 0, writes the gradient of its input,
// through the previous layer's dropout and ELU, into *dx.
func (s *Model) gatBackward(l int, g *layer, dy Buf, dx *Buf) error {
	d, a := s.dev, g.gat
	H, F, HF := a.H, a.F, a.H*a.F
	nd, ns := g.nd, g.ns
	dOut := dy
	if !a.concat {
		if err := s.ensure(&s.dOut, int64(nd)*int64(HF)*4); err != nil {
			return err
		}
		if err := d.launch("head_mean_back", int64(nd)*int64(HF), s.dOut.Ptr, dy.Ptr, i32(nd), i32(H), i32(F)); err != nil {
			return err
		}
		dOut = s.dOut
	}
	for _, e := range []error{s.ensure(&s.ds, a.edges*int64(H)*4), s.ensure(&s.der, int64(nd)*int64(H)*4),
		s.ensure(&s.dz, int64(ns)*int64(HF)*4), s.ensure(&s.del, int64(ns)*int64(H)*4)} {
		if e != nil {
			return e
		}
	}
	drop, thr, scale := dropParams(a.attP)
	key := nn.DropoutKey(s.seed, s.step, uint64(1000+l))
	if err := d.launch("gat_ds", int64(nd)*int64(H), s.ds.Ptr, s.der.Ptr, a.alpha.Ptr, dOut.Ptr, a.z.Ptr, a.el.Ptr, a.er.Ptr,
		g.indptr.Ptr, g.indices.Ptr, i32(nd), i32(H), i32(F), f32(a.slope), i32(drop), uint64(thr), f32(scale), key); err != nil {
		return err
	}
	if err := d.ZeroN(s.dz, int64(ns)*int64(HF)*4); err != nil {
		return err
	}
	if err := d.launch("gat_agg_t", int64(nd)*int64(HF), s.dz.Ptr, dOut.Ptr, g.indptr.Ptr, g.indices.Ptr, a.aw.Ptr, i32(nd), i32(H), i32(F)); err != nil {
		return err
	}
	if err := d.ZeroN(s.del, int64(ns)*int64(H)*4); err != nil {
		return err
	}
	if err := d.launch("gat_del", int64(nd)*int64(H), s.del.Ptr, s.ds.Ptr, g.indptr.Ptr, g.indices.Ptr, i32(nd), i32(H)); err != nil {
		return err
	}
	for _, t := range []struct {
		grad, dd, att Buf
		rows          int
	}{{a.gAttS, s.del, a.attS, ns}, {a.gAttD, s.der, a.attD, nd}} {
		if err := d.launch("att_grad", int64(HF), t.grad.Ptr, t.dd.Ptr, a.z.Ptr, i32(t.rows), i32(H), i32(F)); err != nil {
			return err
		}
		if err := d.launch("dz_add_att", int64(t.rows)*int64(HF), s.dz.Ptr, t.dd.Ptr, t.att.Ptr, i32(t.rows), i32(H), i32(F)); err != nil {
			return err
		}
	}
	// dW += inᵀ·dz
	if err := d.Gemm(true, false, g.in, HF, ns, 1, a.in, g.in, s.dz, HF, 1, g.gw, HF); err != nil {
		return err
	}
	if l == 0 {
		return nil
	}
	n := int64(ns) * int64(g.in)
	if err := s.ensure(dx, n*4); err != nil {
		return err
	}
	if err := d.Gemm(false, true, ns, g.in, HF, 1, s.dz, HF, g.w, HF, 0, *dx, g.in); err != nil {
		return err
	}
	// through the previous layer's dropout, then its ELU
	if s.p > 0 {
		_, thr, scale := dropParams(s.p)
		if err := d.launch("drop_fwd", n, dx.Ptr, uint64(n), uint64(thr), f32(scale), nn.DropoutKey(s.seed, s.step, uint64(l))); err != nil {
			return err
		}
	}
	return d.launch("elu_bwd", n, dx.Ptr, s.layers[l-1].y.Ptr, uint64(n), f32(1-s.p))
}

// gatAdam updates the attention vectors.
func (s *Model) gatAdam(g *layer, stepSize, sq2 float32) error {
	a := g.gat
	n := a.H * a.F
	for _, p := range []struct {
		w, gr, m, v Buf
		decay       bool
	}{{a.attS, a.gAttS, a.mS, a.vS, a.decayS}, {a.attD, a.gAttD, a.mD, a.vD, a.decayD}} {
		wd := s.wd
		if !p.decay {
			wd = 0
		}
		if err := s.dev.launch("adam", int64(n), p.w.Ptr, p.gr.Ptr, p.m.Ptr, p.v.Ptr, i32(n), f32(s.b1), f32(s.b2),
			f32(s.eps), f32(wd), f32(stepSize), f32(sq2)); err != nil {
			return err
		}
	}
	return nil
}
