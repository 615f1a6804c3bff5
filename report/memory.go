package report

// The memory contract side by side (DESIGN §2 "One memory contract"): for
// every run, what its host budget, its device budget and the model step
// held outside both allowed, and what each part held at its peak. The
// cgroup holds all three here (device tiers live in host memory), so the
// host peak is the cgroup's peak less the device tiers and the model step.

import (
	"encoding/json"

	"outcore/engine/metrics"
	"outcore/store"
)

// MemoryRow is one run's memory, by part, in bytes.
type MemoryRow struct {
	HostBudget, HostPeak     int64
	DeviceBudget, DeviceHeld int64
	ModelStep                int64 // outside both budgets
	Allowance, CgroupPeak    int64 // host + device + model step; the cgroup's peak
	DeviceTiers              map[string]int64
}

// MemoryOf reads a run's memory account (its summary's "memory") beside
// its cgroup peak; false for a run whose summary has none (recorded before
// the account existed, or not finished).
func MemoryOf(r store.Run) (MemoryRow, bool) {
	a := memoryAccount(r.Summary)
	if a == nil {
		return MemoryRow{}, false
	}
	var peak int64
	if r.PeakCgroupBytes != nil {
		peak = *r.PeakCgroupBytes
	}
	return MemoryRow{
		HostBudget: a.HostBudgetBytes, HostPeak: a.HostPeakBytes(peak),
		DeviceBudget: a.DeviceBudgetBytes, DeviceHeld: a.DeviceTierBytes,
		ModelStep: a.ModelStepBytes, Allowance: a.AllowanceBytes(), CgroupPeak: peak,
		DeviceTiers: a.DeviceTiers,
	}, true
}

func memoryAccount(summary json.RawMessage) *metrics.MemoryAccount {
	if len(summary) == 0 {
		return nil
	}
	var s struct {
		Memory *metrics.MemoryAccount `json:"memory"`
	}
	if json.Unmarshal(summary, &s) != nil {
		return nil
	}
	return s.Memory
}

// memoryPeaks is the memory chart: per variant and grid point, the host
// peak, the GPU tiers (the device budget's: "device" is not shown, it
// would read as the SSD) and the model step outside the budgets, stacked,
// in MiB.
func (c *Comparison) memoryPeaks(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "variant · grid point", YLabel: "MiB at the run's peak", YUnit: "MiB",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Each run's memory contract (DESIGN §2): the host peak (the cgroup's peak less the GPU tiers and the model step, all three held in host memory here), the GPU tiers the variant placed in its GPU budget (GPU caches, GPU-side buffers and batch inputs), and the CPU model step held outside both budgets. At a grid point every variant has the same allowance — host budget + GPU budget + model step — and a variant whose tiers exceed the GPU budget records it as a deviation. Mean over repeated runs ± one standard deviation per layer; runs recorded before the memory account are left out."}
	part := map[string]func(MemoryRow) int64{
		"host peak":                    func(m MemoryRow) int64 { return m.HostPeak },
		"gpu tiers":                    func(m MemoryRow) int64 { return m.DeviceHeld },
		"model step (outside budgets)": func(m MemoryRow) int64 { return m.ModelStep },
	}
	ch = c.stacked(ch, []string{"host peak", "gpu tiers", "model step (outside budgets)"}, func(l string) func(RunData) (float64, bool) {
		return func(r RunData) (float64, bool) {
			if r.Memory == nil {
				return 0, false
			}
			return float64(part[l](*r.Memory)) / (1 << 20), true
		}
	})
	if ch.Empty == c.onlyLegacy() {
		ch.Empty = ""
	}
	return ch
}

// prepareOf is a summary's prepare_s (nil without a summary or the field).
func prepareOf(summary json.RawMessage) *float64 {
	if len(summary) == 0 {
		return nil
	}
	var s struct {
		PrepareS *float64 `json:"prepare_s"`
	}
	if json.Unmarshal(summary, &s) != nil {
		return nil
	}
	return s.PrepareS
}
