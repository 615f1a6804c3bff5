package accel

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// GPUSpec is what a GPU's spec sheet says that the step-time model
// scales with: the FP32 (non-tensor) peak, the device memory bandwidth and
// the PCIe generation of its link to the host. A zero figure is unknown.
type GPUSpec struct {
	FP32FLOPs    float64
	MemBytesPerS float64
	PCIeGen      int
}

// H100SXM5 is the spec of the GPU the measured profile h100-pyg was timed
// on (NVIDIA H100 80GB HBM3, the SXM5 part): FP32 66.9 TFLOPS and PCIe
// Gen5 as h100-roofline cites from NVIDIA's H100 data sheet, HBM3 at
// 3.35 TB/s (the same data sheet, as tabulated at
// https://glennklockwood.com/garden/processors/h100).
var H100SXM5 = GPUSpec{FP32FLOPs: 66.9e12, MemBytesPerS: 3.35e12, PCIeGen: 5}

// Derivation ratios, as the derived profile's assumptions record them.
const (
	assumeComputeRatio = "compute_ratio"
	assumeH2DRatio     = "h2d_ratio"
)

// DeriveRatios are the rule of DESIGN §13 over two spec sheets: the
// compute term slows by the larger of the FP32-peak and memory-bandwidth
// ratios (a GNN step's sparse gathers and scatters are bound by memory,
// its dense layers by arithmetic; the slower roof binds), counting only
// the figures both sheets publish; the host-to-device term by the ratio of
// the PCIe links (each generation doubles the per-lane rate: 8, 16, 32
// GT/s for Gen3, 4, 5). The per-kernel and fixed terms are the host's
// launch and dispatch costs and stay as measured.
func DeriveRatios(ref, gpu GPUSpec) (compute, h2d float64, err error) {
	if gpu.FP32FLOPs > 0 && ref.FP32FLOPs > 0 {
		compute = ref.FP32FLOPs / gpu.FP32FLOPs
	}
	if gpu.MemBytesPerS > 0 && ref.MemBytesPerS > 0 {
		compute = math.Max(compute, ref.MemBytesPerS/gpu.MemBytesPerS)
	}
	if !(compute > 0) {
		return 0, 0, errors.New("derive: neither the FP32 peak nor the memory bandwidth of both GPUs is known")
	}
	if gpu.PCIeGen < 1 || ref.PCIeGen < 1 {
		return 0, 0, errors.New("derive: the PCIe generation of both GPUs is needed")
	}
	h2d = math.Pow(2, float64(ref.PCIeGen-gpu.PCIeGen))
	return compute, h2d, nil
}

// Derive makes the derived profile of a GPU from a measured profile of
// the reference GPU (DESIGN §13): every model's coefficients with the
// FLOP term scaled by the compute ratio and the host-to-device term by the
// PCIe ratio. Its assumptions record both specs and both ratios, so that
// a test recomputes it; provenance says where the figures come from.
func Derive(base *Profile, ref GPUSpec, name, gpu string, spec GPUSpec, provenance string) (*Profile, error) {
	if base == nil || base.Kind != KindMeasured {
		return nil, errors.New("derive: the base profile must be measured")
	}
	compute, h2d, err := DeriveRatios(ref, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &Profile{
		Format: ProfileFormat, Name: name, Kind: KindDerived, GPU: gpu,
		DerivedFrom: base.Name,
		Provenance:  strings.TrimSpace(provenance),
		Assumptions: map[string]float64{
			"peak_flops": spec.FP32FLOPs, "mem_bytes_per_s": spec.MemBytesPerS, "pcie_gen": float64(spec.PCIeGen),
			"ref_peak_flops": ref.FP32FLOPs, "ref_mem_bytes_per_s": ref.MemBytesPerS, "ref_pcie_gen": float64(ref.PCIeGen),
			assumeComputeRatio: compute, assumeH2DRatio: h2d,
		},
		Coefficients: map[string]Coefficients{},
	}
	for k, v := range p.Assumptions {
		if v == 0 {
			delete(p.Assumptions, k) // unknown: left out, not 0
		}
	}
	keys := make([]string, 0, len(base.Coefficients))
	for k := range base.Coefficients {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := base.Coefficients[k]
		c.SPerFLOP *= compute
		c.SPerH2DByte *= h2d
		p.Coefficients[k] = c
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("derive %s: %w", name, err)
	}
	return p, nil
}

// SpecOf reads the GPU spec and the reference spec back from a derived
// profile's assumptions.
func SpecOf(p *Profile) (ref, gpu GPUSpec) {
	a := p.Assumptions
	return GPUSpec{FP32FLOPs: a["ref_peak_flops"], MemBytesPerS: a["ref_mem_bytes_per_s"], PCIeGen: int(a["ref_pcie_gen"])},
		GPUSpec{FP32FLOPs: a["peak_flops"], MemBytesPerS: a["mem_bytes_per_s"], PCIeGen: int(a["pcie_gen"])}
}
