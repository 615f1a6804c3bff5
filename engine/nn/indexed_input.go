package nn

// Indexed input: the first layer reads its input rows through an index
// into a larger table instead of from a gathered copy. GNNDrive (§4.2,
// Algorithm 1) hands the trainer the node alias list of a mini-batch: row
// i of the batch input is the feature-buffer slot Aliases[i]. Gathering
// x = buffer[aliases] first doubles the batch input's memory (a second
// M_b rows next to the buffer that already holds them); a layer that reads
// the rows in place needs no copy. The artifact copies, so a variant that
// reads in place records it as a deviation (DESIGN §9).
//
// Which layers read in place:
//   - SAGE and GCN when they aggregate first (both only gather rows of x:
//     the self rows and the neighbour mean); aggregateFirst always holds
//     for the first layer when its input width is at most its output
//     width, so IndexedInPlace can decide it from the model's shape.
//   - Any kind whose input is dropped out before the first layer (gcn and
//     gat while training with dropout): the dropped-out copy is made in the
//     arena anyway, and is filled straight from the index.
//
// Anything else copies the rows into the arena first (same result, the
// arena grows by the batch input).

import (
	"fmt"

	"outcore/engine/graph"
)

// Indexed is a batch input read through an index: row i is
// Base[Idx[i]*Cols : (Idx[i]+1)*Cols].
type Indexed struct {
	Base []float32
	Cols int
	Idx  []int32
	// Consumed, when set, is called once the model reads the rows no more
	// (after the first layer's forward), so that their
	// owner may reuse the table's rows while the step goes on.
	Consumed func()
}

// Rows is the number of rows of the input.
func (x Indexed) Rows() int { return len(x.Idx) }

// Row returns row i, aliasing Base.
func (x Indexed) Row(i int) []float32 {
	o := int(x.Idx[i]) * x.Cols
	return x.Base[o : o+x.Cols : o+x.Cols]
}

// Check reports an index outside Base.
func (x Indexed) Check() error {
	if x.Cols <= 0 {
		return fmt.Errorf("indexed input: %d columns", x.Cols)
	}
	n := len(x.Base) / x.Cols
	for i, s := range x.Idx {
		if s < 0 || int(s) >= n {
			return fmt.Errorf("indexed input: row %d points at %d, outside the %d rows of the table", i, s, n)
		}
	}
	return nil
}

// GatherInto copies the rows into t (resized to Rows×Cols).
func (x Indexed) GatherInto(t *Tensor) {
	t.Resize(len(x.Idx), x.Cols)
	gatherRows(t.Data, x)
}

func gatherRows(dst []float32, x Indexed) {
	c := x.Cols
	parallelFor(len(x.Idx), grainFor(c), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(dst[i*c:(i+1)*c], x.Row(i))
		}
	})
}

// indexedLayer is a layer that can read its input through an index. ok is
// false when it would need a contiguous copy for this block (the caller
// then gathers one).
type indexedLayer interface {
	forwardIndexed(ar *Arena, b *graph.Block, x Indexed, train bool) (y *Tensor, ok bool)
}

// IndexedInPlace reports whether a model of this shape reads an Indexed
// input of a training step without a contiguous copy of it (see the top
// of this file): true for sage and gcn whose first layer is no wider in
// than out, and for gcn and gat training with dropout.
func IndexedInPlace(kind string, inDim, hidden, classes, layers int, dropout float64) bool {
	out0 := hidden
	if layers <= 1 {
		out0 = classes
	}
	switch kind {
	case KindSAGE:
		return inDim <= out0
	case KindGCN:
		return dropout > 0 || inDim <= out0
	case KindGAT:
		return dropout > 0
	}
	return false
}

// ForwardIndexed is Forward on an input read through x's index (the same
// result as Forward on the gathered rows, bit for bit).
func (m *Model) ForwardIndexed(blocks []graph.Block, x Indexed, train bool) *Tensor {
	if err := m.validateIndexed(blocks, x); err != nil {
		panic("nn.Model.ForwardIndexed: " + err.Error())
	}
	return m.forward(blocks, nil, &x, train)
}

// validateIndexed is Validate for an indexed input.
func (m *Model) validateIndexed(blocks []graph.Block, x Indexed) error {
	if err := m.validateBlocks(blocks); err != nil {
		return err
	}
	if x.Rows() != blocks[0].NumSrc || x.Cols != m.Layers[0].InDim() {
		return fmt.Errorf("indexed features are %d×%d, want blocks[0].NumSrc×in = %d×%d", x.Rows(), x.Cols, blocks[0].NumSrc, m.Layers[0].InDim())
	}
	return x.Check()
}

// forwardFirstIndexed runs the first layer on an indexed input.
func (m *Model) forwardFirstIndexed(b *graph.Block, x Indexed, p float32, train bool) *Tensor {
	if !(m.InputDropout && p > 0) {
		if il, ok := m.Layers[0].(indexedLayer); ok {
			if y, ok := il.forwardIndexed(&m.arena, b, x, train); ok {
				return y
			}
		}
	}
	h := m.arena.TensorNoZero(x.Rows(), x.Cols)
	gatherRows(h.Data, x)
	if m.InputDropout && p > 0 {
		Dropout(h, p, m.dropKey(0))
	}
	return m.Layers[0].Forward(&m.arena, b, h, train)
}

// forwardIndexed is SAGE's Forward reading x through its index; only the
// aggregate-first order reads rows in place.
func (l *SAGE) forwardIndexed(ar *Arena, b *graph.Block, x Indexed, train bool) (*Tensor, bool) {
	in, out, nd, ns := l.In, l.Out, b.NumDst, b.NumSrc
	if x.Rows() != ns || x.Cols != in {
		panic(fmt.Sprintf("nn.SAGE.forwardIndexed: input is %d×%d, want NumSrc×in = %d×%d", x.Rows(), x.Cols, ns, in))
	}
	if !aggregateFirst(len(b.Indices), nd, ns, in, out) {
		return nil, false
	}
	l.x, l.numDst, l.numSrc = nil, nd, ns
	l.sageWeights(ar, b)
	y := ar.TensorNoZero(nd, out)
	l.aggFirst = true
	l.cat = ar.TensorNoZero(nd, 2*in)
	cat := l.cat
	parallelFor(nd, grainFor(in), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(cat.Data[i*2*in:i*2*in+in], x.Row(i))
		}
	})
	l.a.spmmRows(x.Base, in, x.Idx, cat.Data[in:], 2*in, in, false)
	Gemm(false, false, nd, out, 2*in, 1, cat.Data, 2*in, l.wcat, out, 0, y.Data, out)
	addBias(y, l.Bias.Value.Data)
	return y, true
}

// forwardIndexed is GCN's Forward reading x through its index; only the
// aggregate-first order reads rows in place.
func (l *GCN) forwardIndexed(ar *Arena, b *graph.Block, x Indexed, train bool) (*Tensor, bool) {
	if x.Rows() != b.NumSrc || x.Cols != l.In {
		panic(fmt.Sprintf("nn.GCN.forwardIndexed: input is %d×%d, want NumSrc×in = %d×%d", x.Rows(), x.Cols, b.NumSrc, l.In))
	}
	if !aggregateFirst(len(b.Indices)+b.NumDst, b.NumDst, b.NumSrc, l.In, l.Out) {
		return nil, false
	}
	l.x, l.numDst, l.numSrc = nil, b.NumDst, b.NumSrc
	l.gcnWeights(ar, b)
	y := ar.TensorNoZero(b.NumDst, l.Out)
	l.aggFirst = true
	l.agg = ar.TensorNoZero(b.NumDst, l.In)
	l.a.spmmRows(x.Base, l.In, x.Idx, l.agg.Data, l.In, l.In, false)
	Gemm(false, false, b.NumDst, l.Out, l.In, 1, l.agg.Data, l.In, l.W.Value.Data, l.Out, 0, y.Data, l.Out)
	addBias(y, l.Bias.Value.Data)
	return y, true
}
