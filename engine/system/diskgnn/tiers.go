package diskgnn

// DiskGNN §4 "Feature assembling" (Fig. 3) and §5.3 stage ②: a batch's
// input is assembled from the four levels of the feature store. The
// feature loader (stage ①) has already read the disk levels — the rows of
// the batch's packed chunk and of its segment's disk cache — into the
// "partial input" in host memory; the assembler then "reads the GPU cache,
// CPU cache, and partial input to obtain all the required features", using
// the chunk header's interpreted addresses. The paper does this in one CUDA
// kernel (HBM reads of the GPU cache, UVA reads of the CPU cache and the
// partial input); here it is a copy per row on the CPU, into a batch input
// that the variant accounts as device memory.

import "fmt"

// store is the memory part of the four-level feature store: the device
// ("GPU") cache and the host ("CPU") cache rows, in tierPlan slot order.
type store struct {
	Dim  int
	GPU  []float32 // plan.GPURows() × Dim
	CPU  []float32 // plan.CPURows() × Dim
	gpuN int32
}

// newStore wraps cache memory for plan (gpu and cpu must hold its rows).
func newStore(plan *tierPlan, dim int, gpu, cpu []float32) (*store, error) {
	if len(gpu) < plan.GPURows()*dim || len(cpu) < plan.CPURows()*dim {
		return nil, fmt.Errorf("diskgnn: cache memory %d+%d floats for %d+%d rows of %d", len(gpu), len(cpu), plan.GPURows(), plan.CPURows(), dim)
	}
	return &store{Dim: dim, GPU: gpu[:plan.GPURows()*dim], CPU: cpu[:plan.CPURows()*dim], gpuN: int32(plan.GPURows())}, nil
}

// Row returns the cached row in slot s.
func (s *store) Row(slot int32) []float32 {
	d := s.Dim
	if slot < s.gpuN {
		return s.GPU[int(slot)*d : int(slot+1)*d]
	}
	i := int(slot - s.gpuN)
	return s.CPU[i*d : (i+1)*d]
}

// Fill copies row (dim floats) into slot s (pre-processing).
func (s *store) Fill(slot int32, row []float32) { copy(s.Row(slot), row) }

// tierHits counts where a batch's input rows came from.
type tierHits struct {
	GPU, CPU, Disk, Packed int64
}

// Assemble writes the batch input x (h.Inputs × Dim floats) from the
// caches, the packed rows (in chunk order) and the disk-cache rows (in
// h.DiskLoc order) of the partial input.
func (s *store) Assemble(h *chunkHeader, packed, disk, x []float32) (tierHits, error) {
	d := s.Dim
	var th tierHits
	if len(x) < int(h.Inputs)*d || len(packed) < len(h.PackedPos)*d || len(disk) < len(h.DiskPos)*d {
		return th, fmt.Errorf("diskgnn: assemble batch %d: buffers too small", h.Batch)
	}
	for k, p := range h.CachePos {
		slot := h.CacheSlot[k]
		copy(x[int(p)*d:int(p+1)*d], s.Row(slot))
		if slot < s.gpuN {
			th.GPU++
		} else {
			th.CPU++
		}
	}
	for k, p := range h.DiskPos {
		copy(x[int(p)*d:int(p+1)*d], disk[k*d:(k+1)*d])
	}
	for k, p := range h.PackedPos {
		copy(x[int(p)*d:int(p+1)*d], packed[k*d:(k+1)*d])
	}
	th.Disk, th.Packed = int64(len(h.DiskPos)), int64(len(h.PackedPos))
	return th, nil
}
