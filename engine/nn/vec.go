package nn

import "gonum.org/v1/gonum/blas/gonum"

var vimpl gonum.Implementation

// axpy computes y += a·x over len(x) elements (SIMD through gonum's asm).
func axpy(a float32, x, y []float32) {
	if len(x) >= 16 {
		vimpl.Saxpy(len(x), a, x, 1, y, 1)
		return
	}
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// dot returns Σ x[i]·y[i].
func dot(x, y []float32) float32 {
	if len(x) >= 16 {
		return vimpl.Sdot(len(x), x, 1, y, 1)
	}
	y = y[:len(x)]
	var s float32
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// scal computes x *= a.
func scal(a float32, x []float32) {
	for i := range x {
		x[i] *= a
	}
}

// addBias adds b to every row of t.
func addBias(t *Tensor, b []float32) {
	parallelFor(t.Rows, grainFor(t.Cols), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := t.Row(r)
			for j, v := range b {
				row[j] += v
			}
		}
	})
}

// accumColSum adds the column sums of t to g (bias gradients).
func accumColSum(t *Tensor, g []float32) {
	parallelSum(t.Rows, grainFor(t.Cols), g, func(lo, hi int, acc []float32) {
		for r := lo; r < hi; r++ {
			axpy(1, t.Row(r), acc)
		}
	})
}
