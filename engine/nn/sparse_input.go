package nn

import (
	"math"
	"unsafe"
)

// Sparse inputs. Bag-of-words features (Cora: 1.3% non-zero) make the
// input layer's dense GEMM almost all multiplications by zero. A layer whose
// input is sparse enough multiplies through a CSR copy instead; the result is
// the same up to float32 rounding. Dense inputs (the usual case for the
// large datasets) cost only a strided sample of 4096 elements to detect.

// sparseDensity is the largest non-zero fraction for which the CSR path is used.
const sparseDensity = 1.0 / 16

// csrInput is a CSR copy of a rows×cols tensor.
type csrInput struct {
	rows, cols int
	ptr        []int32 // len rows+1
	idx        []int32
	val        []float32
}

// sparsify returns a CSR copy of x from ar when x is sparse enough, else nil.
func sparsify(ar *Arena, x *Tensor) *csrInput {
	n := x.Rows * x.Cols
	if n == 0 || x.Cols < 32 {
		return nil
	}
	d := x.Data[:n]
	// a strided sample first, so dense inputs cost almost nothing
	const samples = 4096
	step := max(1, n/samples)
	nz, seen := 0, 0
	for i := 0; i < n; i += step {
		seen++
		if d[i] != 0 {
			nz++
		}
	}
	if float64(nz) > sparseDensity*float64(seen) {
		return nil
	}
	// count per row, in parallel
	ptr := ar.Ints(x.Rows + 1)
	ptr[0] = 0
	parallelFor(x.Rows, grainFor(x.Cols), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			ptr[r+1] = int32(countNonzero(x.Row(r)))
		}
	})
	total := 0
	for r := 0; r < x.Rows; r++ {
		total += int(ptr[r+1])
		if total > math.MaxInt32 {
			return nil
		}
		ptr[r+1] = int32(total)
	}
	if float64(total) > sparseDensity*float64(n) {
		return nil
	}
	s := &csrInput{rows: x.Rows, cols: x.Cols, ptr: ptr, idx: ar.Ints(total), val: ar.Floats(total)}
	parallelFor(x.Rows, grainFor(x.Cols), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			appendNonzero(x.Row(r), s.idx, s.val, ptr[r])
		}
	})
	return s
}

// mulDense computes out = s[:rows]·W (+ out when accumulate), W cols×n row-major.
func (s *csrInput) mulDense(rows int, w []float32, n int, out []float32, accumulate bool) {
	nnzPerRow := max(1, len(s.idx)/max(1, s.rows))
	parallelFor(rows, grainFor(nnzPerRow*n), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := out[i*n : (i+1)*n]
			if !accumulate {
				clear(o)
			}
			for e := s.ptr[i]; e < s.ptr[i+1]; e++ {
				c := int(s.idx[e])
				axpy(s.val[e], w[c*n:(c+1)*n], o)
			}
		}
	})
}

// tMulDenseAdd computes dW += s[:rows]ᵀ·g, g rows×n, dW cols×n.
func (s *csrInput) tMulDenseAdd(rows int, g []float32, n int, dw []float32) {
	for i := 0; i < rows; i++ {
		gi := g[i*n : (i+1)*n]
		for e := s.ptr[i]; e < s.ptr[i+1]; e++ {
			c := int(s.idx[e])
			axpy(s.val[e], gi, dw[c*n:(c+1)*n])
		}
	}
}

// inputTimesW computes out = x[:rows]·W (W in×n), through xs when non-nil.
func inputTimesW(xs *csrInput, x *Tensor, rows int, w []float32, n int, out []float32, accumulate bool) {
	if xs != nil {
		xs.mulDense(rows, w, n, out, accumulate)
		return
	}
	beta := float32(0)
	if accumulate {
		beta = 1
	}
	Gemm(false, false, rows, n, x.Cols, 1, x.Data, x.Cols, w, n, beta, out, n)
}

// inputTGradAdd computes dW += x[:rows]ᵀ·g (g rows×n), through xs when non-nil.
func inputTGradAdd(xs *csrInput, x *Tensor, rows int, g []float32, n int, dw []float32) {
	if xs != nil {
		xs.tMulDenseAdd(rows, g, n, dw)
		return
	}
	Gemm(true, false, x.Cols, n, rows, 1, x.Data, x.Cols, g, n, 1, dw, n)
}

// asWords views pairs of float32 from row[off:] as uint64 words, so that a
// zero test covers two elements; off (0 or 1) makes the view 8-byte aligned
// and rest is the index of the first element after the words. -0.0 counts as
// non-zero there, which only adds an explicit zero entry.
func asWords(row []float32) (words []uint64, off, rest int) {
	if len(row) == 0 {
		return nil, 0, 0
	}
	if uintptr(unsafe.Pointer(&row[0]))%8 != 0 {
		off = 1
	}
	n := (len(row) - off) / 2
	if n == 0 {
		return nil, off, off
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&row[off])), n), off, off + 2*n
}

// countNonzero counts the non-zero elements of row.
func countNonzero(row []float32) int {
	words, off, rest := asWords(row)
	n := 0
	for _, v := range row[:off] {
		if v != 0 {
			n++
		}
	}
	for q, pair := range words {
		if pair == 0 {
			continue
		}
		if row[off+2*q] != 0 {
			n++
		}
		if row[off+2*q+1] != 0 {
			n++
		}
	}
	for _, v := range row[rest:] {
		if v != 0 {
			n++
		}
	}
	return n
}

// appendNonzero writes the non-zero elements of row (column, value) at
// idx[k:], val[k:] in column order.
func appendNonzero(row []float32, idx []int32, val []float32, k int32) {
	put := func(c int) {
		if v := row[c]; v != 0 {
			idx[k], val[k] = int32(c), v
			k++
		}
	}
	words, off, rest := asWords(row)
	for c := 0; c < off; c++ {
		put(c)
	}
	for q, pair := range words {
		if pair != 0 {
			put(off + 2*q)
			put(off + 2*q + 1)
		}
	}
	for c := rest; c < len(row); c++ {
		put(c)
	}
}
