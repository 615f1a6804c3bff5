package train

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"outcore/engine/cuda"
	"outcore/engine/graph"
	"outcore/engine/nn"
)

// Trainer owns the model and its Adam optimiser, trains one mini-batch per
// Step, evaluates, and tracks the epoch of best validation accuracy. Its
// methods serialise on a mutex: a pipelined variant may call them from any
// goroutine, one batch at a time is what runs.
type Trainer struct {
	mu      sync.Mutex
	model   *nn.Model
	labels  []int32 // label of every node, -1 = unlabeled
	classes int
	inDim   int
	rowNorm bool

	norm *nn.Tensor // row-normalised copy of the input (RowNormalize)
	grad *nn.Tensor // d loss / d logits
	lbl  []int32    // labels of the current batch's seeds
	mb   graph.MiniBatch

	gpu     *cuda.Model // the GPU model when UseDevice put the trainer there
	gpuName string

	bestEpoch  int
	bestVal    float64
	testAtBest float64
	observed   bool
}

// StepResult is the outcome of one training step.
type StepResult struct {
	Loss     float64 // mean cross-entropy over the batch's labelled seeds
	Correct  int     // labelled seeds predicted right
	N        int     // labelled seeds
	Forward  time.Duration
	Backward time.Duration // backward pass and optimiser update
}

// NewTrainer builds the model of cfg (kind, layers, hidden, heads, dropout,
// seed) for inDim input features and `classes` classes, with Adam(lr,
// weight_decay). labels holds every node's label (-1 = unlabeled).
func NewTrainer(cfg Config, inDim, classes int, labels []int32) (*Trainer, error) {
	m, err := nn.NewModel(cfg.Model, inDim, cfg.Hidden, classes, len(cfg.Fanout), cfg.Heads, float32(cfg.Dropout), uint64(cfg.Seed))
	if err != nil {
		return nil, fmt.Errorf("build %s model: %w", cfg.Model, err)
	}
	m.Opt.LR = float32(cfg.LR)
	m.Opt.WeightDecay = float32(cfg.WeightDecay)
	return &Trainer{model: m, labels: labels, classes: classes, inDim: inDim, rowNorm: cfg.RowNormalize,
		norm: &nn.Tensor{}, grad: &nn.Tensor{}, bestEpoch: -1}, nil
}

// Model returns the model (for inspection; do not use it concurrently with
// the trainer).
func (t *Trainer) Model() *nn.Model { return t.model }

// ReserveWorkspace sizes the model's step workspace in advance (floats
// float32s, ints int32s), so that a memory budget holds it from the start
// and the first steps allocate nothing. Call it before training.
func (t *Trainer) ReserveWorkspace(floats, ints int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.model.ReserveArena(floats, ints)
}

// Classes is the number of output classes.
func (t *Trainer) Classes() int { return t.classes }

// InDim is the feature width the model takes.
func (t *Trainer) InDim() int { return t.inDim }

// input checks x against mb and returns the tensor the model reads (a
// row-normalised copy when RowNormalize is set; x itself is never changed).
func (t *Trainer) input(mb *graph.MiniBatch, x *nn.Tensor) (*nn.Tensor, error) {
	if len(mb.Blocks) != len(t.model.Layers) {
		return nil, fmt.Errorf("batch %d has %d blocks, model has %d layers", mb.Index, len(mb.Blocks), len(t.model.Layers))
	}
	if x.Rows != len(mb.InputNodes) || x.Cols != t.inDim {
		return nil, fmt.Errorf("batch %d: features %d×%d, want %d input nodes × %d", mb.Index, x.Rows, x.Cols, len(mb.InputNodes), t.inDim)
	}
	if err := t.model.Validate(mb.Blocks, x); err != nil {
		return nil, fmt.Errorf("batch %d: %w", mb.Index, err)
	}
	if !t.rowNorm {
		return x, nil
	}
	t.norm.Resize(x.Rows, x.Cols)
	RowNormalize(t.norm.Data, x.Data[:x.Rows*x.Cols], x.Cols)
	return t.norm, nil
}

// RowNormalize writes src's rows divided by their sums into dst (rows whose
// sum is 0 are copied unchanged), as Planetoid's preprocessing does.
func RowNormalize(dst, src []float32, cols int) {
	for r := 0; r+cols <= len(src); r += cols {
		row := src[r : r+cols]
		var s float32
		for _, v := range row {
			s += v
		}
		out := dst[r : r+cols]
		if s == 0 {
			copy(out, row)
			continue
		}
		inv := 1 / s
		for i, v := range row {
			out[i] = v * inv
		}
	}
}

// seedLabels fills t.lbl with the labels of mb's seeds.
func (t *Trainer) seedLabels(mb *graph.MiniBatch) ([]int32, int) {
	t.lbl = t.lbl[:0]
	n := 0
	for _, v := range mb.Seeds {
		y := t.labels[v]
		t.lbl = append(t.lbl, y)
		if y >= 0 {
			n++
		}
	}
	return t.lbl, n
}

// ErrNonFinite reports a step whose loss became NaN or infinite.
var ErrNonFinite = errors.New("loss is not finite")

// Step trains one mini-batch: x holds the feature rows of mb.InputNodes in
// order (len(InputNodes)×InDim). It runs forward with dropout, softmax
// cross-entropy on the seeds' labels, backward and one Adam update.
func (t *Trainer) Step(mb *graph.MiniBatch, x *nn.Tensor) (StepResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in, err := t.input(mb, x)
	if err != nil {
		return StepResult{}, err
	}
	if t.gpu != nil {
		return t.stepGPU(mb, in)
	}
	return t.step(mb, func() *nn.Tensor { return t.model.Forward(mb.Blocks, in, true) })
}

// stepGPU trains one batch on the GPU model. Forward holds the whole step
// (the GPU model returns once its update is done); Backward is 0.
func (t *Trainer) stepGPU(mb *graph.MiniBatch, in *nn.Tensor) (StepResult, error) {
	lbl, n := t.seedLabels(mb)
	t0 := time.Now()
	loss, acc, err := t.gpu.Step(mb.Blocks, in, lbl)
	if err != nil {
		return StepResult{}, fmt.Errorf("batch %d on the GPU: %w", mb.Index, err)
	}
	res := StepResult{Loss: float64(loss), Correct: int(acc*float32(n) + 0.5), N: n, Forward: time.Since(t0)}
	if math.IsNaN(res.Loss) || math.IsInf(res.Loss, 0) {
		return res, fmt.Errorf("batch %d: %w (%v)", mb.Index, ErrNonFinite, res.Loss)
	}
	return res, nil
}

// StepIndexed is Step with the batch input read through an index: row i of
// x is the feature row of mb.InputNodes[i] (GNNDrive's alias list into its
// feature buffer). The model reads the rows in place where it can
// (nn.IndexedInPlace); with RowNormalize set they are normalised into a
// copy first.
func (t *Trainer) StepIndexed(mb *graph.MiniBatch, x nn.Indexed) (StepResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(mb.Blocks) != len(t.model.Layers) {
		return StepResult{}, fmt.Errorf("batch %d has %d blocks, model has %d layers", mb.Index, len(mb.Blocks), len(t.model.Layers))
	}
	if x.Rows() != len(mb.InputNodes) || x.Cols != t.inDim {
		return StepResult{}, fmt.Errorf("batch %d: indexed features %d×%d, want %d input nodes × %d", mb.Index, x.Rows(), x.Cols, len(mb.InputNodes), t.inDim)
	}
	if err := x.Check(); err != nil {
		return StepResult{}, fmt.Errorf("batch %d: %w", mb.Index, err)
	}
	if t.rowNorm || t.gpu != nil {
		x.GatherInto(t.norm)
		if x.Consumed != nil {
			x.Consumed()
		}
		in, err := t.input(mb, t.norm)
		if err != nil {
			return StepResult{}, err
		}
		if t.gpu != nil {
			return t.stepGPU(mb, in)
		}
		return t.step(mb, func() *nn.Tensor { return t.model.Forward(mb.Blocks, in, true) })
	}
	if err := t.model.Validate(mb.Blocks, &nn.Tensor{Rows: x.Rows(), Cols: x.Cols}); err != nil {
		return StepResult{}, fmt.Errorf("batch %d: %w", mb.Index, err)
	}
	return t.step(mb, func() *nn.Tensor { return t.model.ForwardIndexed(mb.Blocks, x, true) })
}

// step runs forward (as given), the loss, backward and the update.
func (t *Trainer) step(mb *graph.MiniBatch, forward func() *nn.Tensor) (StepResult, error) {
	lbl, n := t.seedLabels(mb)
	m := t.model
	t0 := time.Now()
	m.ZeroGrad()
	logits := forward()
	t.grad.Resize(logits.Rows, logits.Cols)
	loss, correct := nn.SoftmaxCrossEntropy(logits, lbl, t.grad)
	t1 := time.Now()
	m.Backward(t.grad)
	m.Opt.Step()
	t2 := time.Now()
	res := StepResult{Loss: float64(loss), Correct: correct, N: n, Forward: t1.Sub(t0), Backward: t2.Sub(t1)}
	if math.IsNaN(res.Loss) || math.IsInf(res.Loss, 0) {
		return res, fmt.Errorf("batch %d: %w (%v)", mb.Index, ErrNonFinite, res.Loss)
	}
	return res, nil
}

// Predict runs inference on mb and returns how many labelled seeds are
// predicted right out of how many are labelled.
func (t *Trainer) Predict(mb *graph.MiniBatch, x *nn.Tensor) (correct, n int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in, err := t.input(mb, x)
	if err != nil {
		return 0, 0, err
	}
	lbl, n := t.seedLabels(mb)
	var logits *nn.Tensor
	if t.gpu != nil {
		if logits, err = t.gpu.Infer(mb.Blocks, in); err != nil {
			return 0, 0, fmt.Errorf("batch %d on the GPU: %w", mb.Index, err)
		}
	} else {
		logits = t.model.Infer(mb.Blocks, in)
	}
	for i, y := range lbl {
		if y >= 0 && nn.Argmax(logits.Row(i)) == int(y) {
			correct++
		}
	}
	return correct, n, nil
}

// Observe records one epoch's validation and test accuracy and reports
// whether validation improved (strictly; the earliest best epoch wins ties).
func (t *Trainer) Observe(epoch int, valAcc, testAcc float64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.observed && valAcc <= t.bestVal {
		return false
	}
	t.observed = true
	t.bestEpoch, t.bestVal, t.testAtBest = epoch, valAcc, testAcc
	return true
}

// Best returns the epoch of best validation accuracy (-1 before any
// Observe), that accuracy, and the test accuracy at that epoch.
func (t *Trainer) Best() (epoch int, valAcc, testAcc float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bestEpoch, t.bestVal, t.testAtBest
}
