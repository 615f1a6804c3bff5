package kit

// The memory plan (DESIGN §2 "One memory contract"): what a variant's
// sizing decided, in the terms the shared preparation acts on. A variant
// sizes with its pure function of one signature (its sizing.go, a Sizer
// that Register takes; Size gives the plan and its least budget)
// and hands the result to Budget.Apply as one Plan: Apply refuses a plan that does not fit, holds
// the device parts outside the host budget (the memory limit and the
// run's memory account), writes the deviation that states them with the
// cgroup limit in force, writes what the plan cut, and sets the Go
// runtime's memory limit for the first phase. A later phase (Ginex's
// sample stage and main loop, a heap known once a layout is built) is
// entered with Budget.Enter and a GoHeap the plan computed; no variant
// does the Go limit's arithmetic itself.

import (
	"fmt"
	"strings"
)

// GoHeap is the Go runtime's memory limit of one phase of a run, in the
// plan's numbers (GoMemoryLimit): memory held outside the Go heap
// (OffHeap: caches, buffers), page cache the variant keeps (KeepCached)
// and the heap it planned (HeapNeed; 0: the budget decides).
type GoHeap struct {
	OffHeap, KeepCached, HeapNeed int64
	// Strict leaves the model step's matrix-library buffers out of the Go
	// limit: they are held outside the budget with the step
	// (Workspace.LibBytes, part of DeviceBytes) but live in C memory, so a
	// Go limit that counts them lets the heap grow into memory the library
	// already holds. Ginex uses it (its sample stage ran at that limit and
	// was OOM-killed at the start of its second epoch, once the step's
	// arena was resident).
	Strict bool
}

// Part is one device part a plan holds outside the host budget: its name
// in the memory account ("gpu_cache") and its bytes, and What, the part
// in the deviation's words ("the GPU cache (1200 rows)").
type Part struct {
	Name  string
	Bytes int64
	What  string
}

// Plan is a variant's memory plan as the shared preparation applies it.
type Plan struct {
	// Fits is whether the plan fits the budget; Refusal, when it does not
	// and the variant refuses to start, is the error Apply returns (nil: a
	// plan that does not fit runs on, with the variant's warning).
	Fits    bool
	Refusal error
	// LeastBudget is the least budget for which the variant's plan fits
	// (Size: the same bisection as the floor, over the same sizing
	// with the run's workspace and profile); a refusal names it.
	LeastBudget int64
	// Device are the parts held outside the host budget, in the order the
	// deviation names them (nil: none, the memory account keeps the model
	// step alone). Why says why they are held there ("as the GPU memory
	// they occupy in the paper").
	Device []Part
	Why    string
	// Cuts are the plan's departures from the paper's sizes, as
	// deviations, their numbers taken from the plan.
	Cuts []string
	// Heap is the Go heap of the phase the run starts in; nil when it is
	// known only later (the variant then calls Enter).
	Heap *GoHeap
}

// DeviceBytes is the sum of the plan's device parts.
func (p Plan) DeviceBytes() int64 {
	var n int64
	for _, d := range p.Device {
		n += max(d.Bytes, 0)
	}
	return n
}

// Apply carries out a plan: a plan that does not fit is refused with its
// Refusal, which Apply ends with the plan's LeastBudget ("the least budget
// that fits is N MiB", rounded up; no variant computes it by hand); the device parts are held outside the budget (Hold) and, under
// a budget, stated in one deviation with the cgroup limit in force; the
// cuts are recorded; the Go memory limit of the first phase is set. It
// returns that limit (0: no budget, or no phase yet).
func (b *Budget) Apply(p Plan) (int64, error) {
	if !p.Fits && p.Refusal != nil {
		if p.LeastBudget > 0 {
			return 0, fmt.Errorf("%w; the least budget that fits is %d MiB", p.Refusal, (p.LeastBudget+(1<<20)-1)>>20)
		}
		return 0, p.Refusal
	}
	if p.Device != nil {
		if err := b.Hold(p.Device); err != nil {
			return 0, err
		}
		if b.Bytes() > 0 {
			b.env.Deviate("%s", HeldDeviation(p.Device, p.Why, b.Bytes(), b.ws.DeviceBytes, b.env.GPURuntimeBytes))
		}
	}
	for _, c := range p.Cuts {
		b.env.Deviate("%s", c)
	}
	if p.Heap == nil {
		return 0, nil
	}
	return b.Enter(*p.Heap), nil
}

// Hold sets the memory limit to the budget plus the profiled model step
// plus the device parts (GNNDrive's GPU-based feature buffer, DiskGNN's
// GPU cache and complete inputs, ...), and records them in the run's
// memory account (train.Env.HoldDevice, DESIGN §2 "One memory contract"):
// parts over the device budget are a recorded deviation. A later call
// replaces the parts (GIDS grows its batch buffers).
func (b *Budget) Hold(parts []Part) error {
	tiers := make(map[string]int64, len(parts))
	var extra int64
	for _, d := range parts {
		tiers[d.Name] += d.Bytes
		extra += max(d.Bytes, 0)
	}
	b.env.HoldDevice(tiers, b.ws.DeviceBytes)
	return HoldOutsideBudget(b.env, b.ws.DeviceBytes+extra)
}

// Enter sets the Go runtime's memory limit for a phase of the plan (see
// GoMemoryLimit) and returns it.
func (b *Budget) Enter(h GoHeap) int64 {
	step := b.ws.DeviceBytes
	if h.Strict {
		step = max(0, step-b.ws.LibBytes)
	}
	return ApplyGoMemoryLimit(b.Bytes(), step, h.OffHeap, h.KeepCached, h.HeapNeed)
}

// HeldDeviation is the deviation of device parts held outside a host
// budget beside the model step (step bytes) and the GPU runtime's host
// memory (gpuRuntime); the cgroup limit it names is the one in force
// (store.Run.CgroupLimit reads it back).
func HeldDeviation(parts []Part, why string, budget, step, gpuRuntime int64) string {
	var total int64
	list := make([]string, 0, len(parts))
	for _, d := range parts {
		total += max(d.Bytes, 0)
		list = append(list, fmt.Sprintf("%s %d MiB", d.What, max(d.Bytes, 0)>>20))
	}
	if why != "" {
		why = ", " + why
	}
	return fmt.Sprintf("device memory held outside the %d MiB host budget%s: %s, model step %d MiB; the cgroup limit is %d MiB",
		budget>>20, why, strings.Join(list, ", "), step>>20, (budget+step+total+gpuRuntime)>>20)
}
