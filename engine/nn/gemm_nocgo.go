//go:build !cgo

package nn

import "errors"

// loadOpenBLAS always fails without cgo: the pure-Go gonum sgemm is used.
func loadOpenBLAS(threads int) (string, error) {
	return "", errors.New("openblas not available: built without cgo")
}

func openblasGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	panic("nn: openblas gemm called in a build without cgo")
}
