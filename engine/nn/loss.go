package nn

import (
	"fmt"
	"math"
)

// SoftmaxCrossEntropy returns the mean over labelled rows of −log softmax
// (logits)[label] and the number of rows whose arg-max equals the label.
// Rows with label < 0 are ignored. When grad is non-nil (same shape as
// logits) it receives d(loss)/d(logits) (zero on ignored rows).
func SoftmaxCrossEntropy(logits *Tensor, labels []int32, grad *Tensor) (loss float32, correct int) {
	if len(labels) != logits.Rows {
		panic(fmt.Sprintf("nn.SoftmaxCrossEntropy: %d labels for %v logits", len(labels), logits))
	}
	if grad != nil && (grad.Rows != logits.Rows || grad.Cols != logits.Cols) {
		panic(fmt.Sprintf("nn.SoftmaxCrossEntropy: grad is %v, logits %v", grad, logits))
	}
	C := logits.Cols
	n := 0
	for _, y := range labels {
		if y >= 0 {
			if int(y) >= C {
				panic(fmt.Sprintf("nn.SoftmaxCrossEntropy: label %d ≥ %d classes", y, C))
			}
			n++
		}
	}
	var total float64
	inv := float32(0)
	if n > 0 {
		inv = 1 / float32(n)
	}
	for r := 0; r < logits.Rows; r++ {
		row := logits.Row(r)
		y := labels[r]
		if y < 0 {
			if grad != nil {
				clear(grad.Row(r))
			}
			continue
		}
		mx, arg := row[0], 0
		for j, v := range row {
			if v > mx {
				mx, arg = v, j
			}
		}
		if arg == int(y) {
			correct++
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v - mx))
		}
		lse := float64(mx) + math.Log(sum)
		total += lse - float64(row[y])
		if grad != nil {
			g := grad.Row(r)
			for j, v := range row {
				g[j] = float32(math.Exp(float64(v)-lse)) * inv
			}
			g[y] -= inv
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float32(total / float64(n)), correct
}

// Accuracy is the fraction of rows with label ≥ 0 whose arg-max logit is the
// label (0 when no row is labelled).
func Accuracy(logits *Tensor, labels []int32) float64 {
	if len(labels) != logits.Rows {
		panic(fmt.Sprintf("nn.Accuracy: %d labels for %v logits", len(labels), logits))
	}
	n, ok := 0, 0
	for r := 0; r < logits.Rows; r++ {
		if labels[r] < 0 {
			continue
		}
		n++
		if Argmax(logits.Row(r)) == int(labels[r]) {
			ok++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(ok) / float64(n)
}

// Argmax returns the index of the largest element (the first on ties).
func Argmax(v []float32) int {
	arg := 0
	for j, x := range v {
		if x > v[arg] {
			arg = j
		}
	}
	return arg
}
