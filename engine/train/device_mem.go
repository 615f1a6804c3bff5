package train

// The run's memory contract (docs/DESIGN.md §3 "One memory contract"): a
// run's memory is a host budget (mem_limit, the memory cgroup) plus a
// device budget (device_mem: the GPU memory of the papers, which outcore
// stands in for in host memory) plus the model step held outside both
// (model_mem "device", kit/model_mem.go). Every variant gets the same
// three at a given grid point; a variant places its device tiers (GPU
// caches, device-side buffers and batch inputs) within the device budget
// the way its artifact splits GPU memory, and a variant whose paper keeps
// nothing in GPU memory but the model leaves it unused. Tiers over the
// device budget (an explicit cache size larger than it) are recorded as a
// deviation. The summary's memory account (metrics.MemoryAccount) says
// what each part held.

import (
	"slices"
	"strings"

	"outcore/engine/metrics"
	"outcore/internal/units"
)

// DeviceBudget is the run's device budget in bytes (0: none).
func (e *Env) DeviceBudget() int64 { return e.Config.DeviceMemBytes }

// HoldDevice records what the variant holds outside the host budget: its
// device tiers by name (bytes) and the model step; tiers over the device
// budget are recorded as a deviation (Deviate). Prepare calls it once,
// through kit.Budget.Hold (kit.Budget.Apply); a later call replaces the account.
func (e *Env) HoldDevice(tiers map[string]int64, modelStep int64) {
	a := &metrics.MemoryAccount{
		HostBudgetBytes:   e.MemBudget,
		DeviceBudgetBytes: e.DeviceBudget(),
		ModelStepBytes:    modelStep,
	}
	var total int64
	for name, b := range tiers {
		if b <= 0 {
			continue
		}
		if a.DeviceTiers == nil {
			a.DeviceTiers = map[string]int64{}
		}
		a.DeviceTiers[name] = b
		total += b
	}
	a.DeviceTierBytes = total
	e.memory = a
	if over := total - a.DeviceBudgetBytes; over > 0 {
		e.Deviate("device tiers of %s (%s) exceed the %s device budget (device_mem) by %s: this run had more memory than the others at its grid point",
			mib(total), tierList(a.DeviceTiers), mib(a.DeviceBudgetBytes), mib(over))
	}
}

// MemoryAccount is what HoldDevice recorded (nil before), for the summary.
func (e *Env) MemoryAccount() *metrics.MemoryAccount {
	if e.memory == nil {
		return &metrics.MemoryAccount{HostBudgetBytes: e.MemBudget, DeviceBudgetBytes: e.DeviceBudget()}
	}
	return e.memory
}

func tierList(t map[string]int64) string {
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + " " + mib(t[k])
	}
	return strings.Join(parts, ", ")
}

// mib formats bytes in MiB with one decimal.
func mib(b int64) string {
	return units.ByteFormat{Unit: units.MiB, Space: true, Decimals: 1}.Format(b)
}
