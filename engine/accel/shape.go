package accel

import (
	"fmt"
)

// Layer is one layer's message-flow graph of a mini-batch: its source
// nodes, destination nodes and edges (graph.Block).
type Layer struct {
	Src   int64 `json:"src"`
	Dst   int64 `json:"dst"`
	Edges int64 `json:"edges"`
}

// StepShape is what a training step's time depends on: the model and its
// dimensions, and the batch's layers, input layer first (Layers[0]
// consumes the Rows input feature rows; the last layer's Dst are the
// Seeds). The PyG measurement script writes one per measured step, with
// the step time beside it (Point).
type StepShape struct {
	Model   string  `json:"model"` // sage, gcn or gat
	InDim   int     `json:"in_dim"`
	Hidden  int     `json:"hidden"`
	Classes int     `json:"classes"`
	Heads   int     `json:"heads,omitempty"` // gat only
	Rows    int64   `json:"rows"`            // input feature rows (Layers[0].Src)
	Seeds   int64   `json:"seeds"`
	Layers  []Layer `json:"layers"`
}

// Check reports a shape the model cannot be evaluated on.
func (s StepShape) Check() error {
	switch s.Model {
	case "sage", "gcn", "gat":
	default:
		return fmt.Errorf("step shape: model %q, want sage, gcn or gat", s.Model)
	}
	if s.InDim < 1 || s.Classes < 1 || len(s.Layers) == 0 || (len(s.Layers) > 1 && s.Hidden < 1) {
		return fmt.Errorf("step shape: in_dim %d, hidden %d, classes %d, %d layers (all must be ≥ 1)", s.InDim, s.Hidden, s.Classes, len(s.Layers))
	}
	if s.Model == "gat" && (s.Heads < 1 || (len(s.Layers) > 1 && s.Hidden%s.Heads != 0)) {
		return fmt.Errorf("step shape: gat with %d heads and hidden %d (heads must divide hidden)", s.Heads, s.Hidden)
	}
	if s.Rows < 0 || s.Seeds < 0 {
		return fmt.Errorf("step shape: rows %d, seeds %d (want ≥ 0)", s.Rows, s.Seeds)
	}
	for i, l := range s.Layers {
		if l.Src < 0 || l.Dst < 0 || l.Edges < 0 {
			return fmt.Errorf("step shape: layer %d has src %d, dst %d, edges %d (want ≥ 0)", i, l.Src, l.Dst, l.Edges)
		}
	}
	return nil
}

// Features are the step-time model's inputs for one step.
type Features struct {
	// FLOPs of forward, loss, backward and the optimizer update, counted
	// as PyTorch Geometric computes the layers (SAGEConv with mean
	// aggregation and a root weight, GCNConv transforming before it
	// propagates, GATConv), floating-point operations of GEMMs counted
	// 2·m·n·k.
	FLOPs float64 `json:"flops"`
	// H2DBytes is what the step copies host-to-device: the input
	// features (float32), each layer's edge index (two int64 per edge)
	// and the seeds' labels (int64).
	H2DBytes float64 `json:"h2d_bytes"`
	// Kernels is the number of kernels (and copies) the step launches,
	// counted per layer and op as PyG runs them in eager mode.
	Kernels float64 `json:"kernels"`
}

// Kernels launched per layer's forward pass (PyG eager: gather, scatter,
// normalise, linear(s), bias, activation, dropout; GAT adds the attention
// dots, leaky ReLU, softmax's max, exp, sum and divide, attention
// dropout). Backward launches about twice as many; loss, zero_grad and a
// foreach Adam update are a fixed number per step, and every tensor
// copied to the device (features, labels, one edge index per layer) is
// one copy.
var forwardKernels = map[string]float64{"sage": 8, "gcn": 7, "gat": 16}

const (
	fixedKernels = 4 + 1 + 12 // loss forward and backward, zero_grad, Adam (foreach)
	bytesF32     = 4
	bytesI64     = 8
)

// dims returns the input and output width of layer l and, for gat, its
// heads (PyG's GAT with hidden_channels = hidden/heads: hidden layers
// concatenate heads, the output layer has one).
func (s StepShape) dims(l int) (in, out, heads int) {
	in, out, heads = s.Hidden, s.Hidden, 1
	if l == 0 {
		in = s.InDim
	}
	if l == len(s.Layers)-1 {
		out = s.Classes
	} else if s.Model == "gat" {
		heads = s.Heads
	}
	return in, out, heads
}

// Features computes the step's model inputs. The shape must pass Check.
func (s StepShape) Features() Features {
	var f Features
	var params float64
	for l, ly := range s.Layers {
		din, dout, heads := s.dims(l)
		src, dst, e := float64(ly.Src), float64(ly.Dst), float64(ly.Edges)
		fi, fo, h := float64(din), float64(dout), float64(heads)
		var gemm, other float64
		switch s.Model {
		case "sage":
			// mean of the neighbours' rows, then lin_l(mean) + lin_r(x_dst)
			gemm = 2 * dst * fi * fo * 2
			other = e*fi + dst*fi + 3*dst*fo
			params += 2*fi*fo + fo
		case "gcn":
			// x·W on every source row, then the normalised sum over edges
			gemm = 2 * src * fi * fo
			other = 2*e*fo + 2*dst*fo
			params += fi*fo + fo
		case "gat":
			// x·W, both attention dots, per edge: add, leaky ReLU, exp,
			// sum, divide, dropout, then the weighted sum of messages
			gemm = 2 * src * fi * fo
			other = 2*(src+dst)*fo + 6*e*h + 2*e*fo + 2*dst*fo
			params += fi*fo + 2*fo + fo
		}
		// Backward: a GEMM's weight and input gradients are two GEMMs,
		// the input layer's input needs no gradient; elementwise and
		// scatter ops cost about their forward again.
		back := 2.0
		if l == 0 {
			back = 1
		}
		f.FLOPs += gemm*(1+back) + 2*other
		f.Kernels += 3 * forwardKernels[s.Model]
		f.H2DBytes += e * 2 * bytesI64
	}
	seeds := float64(s.Seeds)
	f.FLOPs += 2*5*seeds*float64(s.Classes) + 12*params // softmax cross-entropy both ways, Adam
	f.H2DBytes += float64(s.Rows)*float64(s.InDim)*bytesF32 + seeds*bytesI64
	f.Kernels += fixedKernels + float64(2+len(s.Layers))
	return f
}
