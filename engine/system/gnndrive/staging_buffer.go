package gnndrive

// GNNDrive §4.2 "Reduced Memory Footprint": in the GPU-based layout the
// feature buffer is device memory and "a staging buffer in the host
// memory, solely used for transferring feature data from SSD to the
// feature buffer" takes every load first; "the size of staging buffer is
// bounded by the number of extractors and the number of features to be
// loaded to GPU for each extractor", N_e × M_b rows, which the artifact
// allocates in pinned host memory. Here each extractor owns M_b rows of it
// (off the Go heap, charged to the host budget, sizing.go): a load takes a
// free staging row, and when it completes the row is copied to its buffer
// slot (⑤, the stand-in for the asynchronous host-to-device copy) and the
// staging row is free again. The CPU-based variant (§4.4) has no staging
// buffer: loads land in the host feature buffer directly.

// stagingArea is one extractor's part of the staging buffer.
type stagingArea struct {
	rows  []float32 // M_b rows of dim float32s
	dim   int
	spare []int32 // free row indices
	used  map[int32]int32
}

func newStagingArea(rows []float32, dim int) *stagingArea {
	n := len(rows) / dim
	a := &stagingArea{rows: rows, dim: dim, spare: make([]int32, 0, n), used: make(map[int32]int32, n)}
	for r := n - 1; r >= 0; r-- {
		a.spare = append(a.spare, int32(r))
	}
	return a
}

// free is the number of staging rows a new load can take.
func (a *stagingArea) free() int { return len(a.spare) }

// take gives load `load` a free staging row and returns it (free() > 0).
func (a *stagingArea) take(load int32) []float32 {
	r := a.spare[len(a.spare)-1]
	a.spare = a.spare[:len(a.spare)-1]
	a.used[load] = r
	return a.row(r)
}

// transfer copies load's staging row into dst and frees the row.
func (a *stagingArea) transfer(load int32, dst []float32) {
	r := a.used[load]
	delete(a.used, load)
	copy(dst, a.row(r))
	a.spare = append(a.spare, r)
}

func (a *stagingArea) row(r int32) []float32 {
	o := int(r) * a.dim
	return a.rows[o : o+a.dim : o+a.dim]
}
