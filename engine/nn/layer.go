package nn

import (
	"fmt"

	"outcore/engine/graph"
)

// Layer is one message-passing layer over a graph.Block. Forward maps the
// block's source features x (NumSrc×InDim) to destination features
// (NumDst×OutDim) and keeps what Backward needs; Backward takes the gradient
// of the output, adds the parameter gradients into Params()[i].Grad, and
// returns the gradient of x when needDX is set (nil otherwise). Scratch
// memory and results come from ar, so they live until ar.Reset.
type Layer interface {
	Forward(ar *Arena, b *graph.Block, x *Tensor, train bool) *Tensor
	Backward(ar *Arena, dy *Tensor, needDX bool) *Tensor
	Params() []*Param
	InDim() int
	OutDim() int
}

func checkInput(name string, b *graph.Block, x *Tensor, in int) {
	if err := validateBlock(b); err != nil {
		panic(fmt.Sprintf("nn.%s.Forward: %v", name, err))
	}
	if x.Rows != b.NumSrc || x.Cols != in {
		panic(fmt.Sprintf("nn.%s.Forward: input is %v, want NumSrc×in = %d×%d", name, x, b.NumSrc, in))
	}
}

func checkGrad(name string, dy *Tensor, rows, cols int) {
	if dy.Rows != rows || dy.Cols != cols {
		panic(fmt.Sprintf("nn.%s.Backward: gradient is %v, want %d×%d (call Forward first)", name, dy, rows, cols))
	}
}

// aggregateFirst decides the order of a linear layer Y = Â·X·W: aggregating
// first costs E·in sparse multiply-adds plus dst·in·out dense ones,
// transforming first src·in·out dense plus E·out sparse. Sparse work is
// weighted 4× (it runs far below GEMM speed). Both orders give the same
// result up to rounding.
func aggregateFirst(edges, numDst, numSrc, in, out int) bool {
	agg := 4*edges*in + numDst*in*out
	tr := numSrc*in*out + 4*edges*out
	return agg <= tr
}
