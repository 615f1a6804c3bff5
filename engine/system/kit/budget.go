package kit

// Memory accounting shared by the variants. Each variant sizes its caches
// and buffers from the run's memory budget the way its paper does; all of
// them need the same few measurements first: what the process holds before
// any cache exists, how many input nodes a mini-batch has, and how much
// workspace one training step takes. Ginex §3.5 gets these "by a short
// offline profiling"; ProfileWorkspace is that profiling.

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"outcore/engine/graph"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

// Workspace is what profiling measured.
type Workspace struct {
	BaseBytes  int64 // resident memory before caches: runtime, indptr, labels, model
	MaxInputs  int   // most input nodes of a profiled mini-batch (M_b)
	BatchBytes int64 // memory of the largest profiled mini-batch (ids and blocks)
	MeanInputs int
	ArenaBytes int64 // model workspace of one training step on the largest batch
	// StepExtra is what the process held during the profiled step beyond
	// base, arena and batch input: matrix-library buffers, collector slack.
	StepExtra int64
	RowBytes  int64
	Batches   int // mini-batches profiled
	// DeviceBytes is the model step held outside the budget (model_mem.go):
	// parameters, optimizer state, arena and step extra with a margin. When
	// it is set, ArenaBytes and StepExtra are zero (nothing of the step is
	// charged to the host budget) and StepArena/StepOther keep the measure.
	DeviceBytes          int64
	StepArena, StepOther int64
	LibBytes             int64 // matrix-library buffers kept after the step
}

// BatchInputBytes is the size of one gathered batch input of the largest
// profiled batch.
func (w Workspace) BatchInputBytes() int64 { return int64(w.MaxInputs) * w.RowBytes }

// ProfileWorkspace samples the first n training batches of epoch 0 and runs
// one training step of a throw-away copy of the model on the largest of them
// (constant dense features: only the shapes matter), so the real model is
// untouched.
func ProfileWorkspace(ctx context.Context, env *train.Env, topo sample.Topology, n int) (Workspace, error) {
	w := Workspace{RowBytes: env.Dataset.RowBytes()}
	s, err := env.NewSampler(topo)
	if err != nil {
		return w, err
	}
	batches := env.EpochBatches(0)
	n = min(n, len(batches))
	var largest *graph.MiniBatch
	sum := 0
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return w, err
		}
		mb, err := s.Sample(0, i, batches[i])
		if err != nil {
			return w, fmt.Errorf("profile: %w", err)
		}
		sum += len(mb.InputNodes)
		w.BatchBytes = max(w.BatchBytes, mb.Bytes())
		if len(mb.InputNodes) > w.MaxInputs {
			w.MaxInputs = len(mb.InputNodes)
			largest = mb
		}
	}
	w.Batches = n
	if n > 0 {
		w.MeanInputs = sum / n
	}
	reserveFloats, reserveInts := 0, 0
	if largest != nil {
		lifted, err := liftForProfiling(env)
		if err != nil {
			return w, err
		}
		settled := !lifted
		defer func() {
			if !settled { // an error return: back to the budget alone
				_ = HoldOutsideBudget(env, 0)
			}
		}()
		runtime.GC()
		debug.FreeOSMemory()
		before := AnonRSS()
		cfg := env.Config
		m, err := nn.NewModel(cfg.Model, env.Trainer.InDim(), cfg.Hidden, env.Trainer.Classes(), len(cfg.Fanout), cfg.Heads, float32(cfg.Dropout), uint64(cfg.Seed))
		if err != nil {
			return w, fmt.Errorf("profile: %w", err)
		}
		x := nn.NewTensor(len(largest.InputNodes), env.Trainer.InDim())
		for i := range x.Data {
			// dense, like real features: zeros would take the layers'
			// sparse-input path, whose workspace is smaller
			x.Data[i] = 1
		}
		labels := make([]int32, len(largest.Seeds))
		m.Step(largest.Blocks, x, labels)
		w.ArenaBytes = int64(m.ArenaBytes())
		floats, ints := m.ArenaSizes()
		during := AnonRSS()
		x, m = nil, nil
		runtime.GC()
		debug.FreeOSMemory()
		after := AnonRSS()
		// What stays after the step is freed: the matrix library's
		// per-thread buffers (OpenBLAS keeps them for the process's life).
		w.LibBytes = max(0, after-before)
		w.StepExtra = max(0, during-after-w.ArenaBytes-w.BatchInputBytes())
		// The trainer's workspace is sized (at the end, after the base is
		// measured) for the largest profiled batch plus an eighth (batches
		// vary), so that it is held from the start instead of growing, and
		// re-chunking, in the first steps.
		reserveFloats, reserveInts = floats+floats/8, ints+ints/8
		w.ArenaBytes += w.ArenaBytes / 8
		if ModelMemOutside(env) {
			// The reserved workspace (a larger batch would grow it: an
			// eighth more of margin), the step's extras and the parameters.
			params := env.Trainer.Model().NumParams() * 4 * 4 // weights, gradients, Adam m and v
			w.StepArena, w.StepOther = w.ArenaBytes, w.StepExtra
			w.StepOther += w.LibBytes
			w.DeviceBytes = w.ArenaBytes + w.ArenaBytes/8 + w.StepOther + int64(params)
			w.ArenaBytes, w.StepExtra = 0, 0
		}
		if lifted {
			settled = true
			if err := HoldOutsideBudget(env, w.DeviceBytes); err != nil {
				return w, err
			}
		}
		if w.DeviceBytes > 0 {
			env.Deviate("the CPU trainer's model step (%d MiB: parameters and optimizer state, %d MiB of activations and gradients measured on the largest of %d profiled mini-batches plus 27%%, %d MiB of matrix-library buffers) is held outside the %d MiB memory budget, as the GPU memory it occupies in the papers; the cgroup limit is %d MiB",
				w.DeviceBytes>>20, w.StepArena>>20, n, w.StepOther>>20, env.MemBudget>>20, (env.MemBudget+w.DeviceBytes)>>20)
		}
	}
	s, largest = nil, nil
	if r, ok := topo.Indices.(interface{ Release() error }); ok {
		// readers' buffers sized by profiling's gathers are not base memory
		if err := r.Release(); err != nil {
			return w, fmt.Errorf("profile: %w", err)
		}
	}
	runtime.GC()
	debug.FreeOSMemory()
	w.BaseBytes = AnonRSS()
	if w.DeviceBytes > 0 {
		w.BaseBytes = max(0, w.BaseBytes-w.LibBytes) // counted in deviceBytes
	}
	if reserveFloats > 0 {
		env.Trainer.ReserveWorkspace(reserveFloats, reserveInts)
	}
	return w, nil
}

// AnonRSS is the process's anonymous resident memory (RssAnon): heap,
// stacks and allocations, without the file pages of its memory maps, which
// are page cache the kernel can reclaim. 0 when it cannot be read.
func AnonRSS() int64 {
	v, _ := osutil.AnonRSSBytes()
	return v
}

// ReserveBytes is the region Ginex §3.5 keeps free "for memory
// fluctuations": a tenth of the budget, at least 32 MiB.
func ReserveBytes(budget int64) int64 { return max(budget/10, 32<<20) }

// ApplyGoMemoryLimit keeps the Go heap close to its live size under a
// budget. The papers' systems free tensors as soon as they die (reference
// counting), so their anonymous memory is their live data; Go's default
// (GOGC=100) lets the heap grow to twice the live data, and that slack would
// come out of the page cache the budget leaves to the OS (PyG+ and
// GNNDrive's topology live there) or push the process over the limit. So,
// under a budget, collect at 25% growth, and cap the Go runtime at the heap
// the variant planned for (heapNeed plus that quarter), or at what the
// budget leaves after the memory held outside the Go heap (offHeap: caches,
// buffers) and the page cache the variant wants to keep (keepCached),
// whichever is smaller, but never below heapNeed (below it the collector
// would run without pause). heapNeed 0 means "no plan": the budget decides.
// device is the model step held outside the budget (model_mem.go), added
// on top. It returns the soft limit set (0 when there is no budget).
func ApplyGoMemoryLimit(budget, device, offHeap, keepCached, heapNeed int64) int64 {
	if budget <= 0 {
		return 0
	}
	debug.SetGCPercent(25)
	limit := budget - budget/8 - offHeap - keepCached
	if heapNeed > 0 {
		limit = min(limit, heapNeed+heapNeed/4)
	}
	limit = max(limit, heapNeed, 32<<20) + device
	debug.SetMemoryLimit(limit)
	return limit
}

// MaxInputBound is the most input nodes a training batch can have: the
// seeds times 1 + f1 + f1·f2 + … (all fanouts positive), or every node.
func MaxInputBound(env *train.Env) int64 {
	b := int64(env.Config.Batch)
	if b <= 0 || b > int64(len(env.Train)) {
		b = int64(len(env.Train))
	}
	total, level := b, b
	for _, f := range env.Config.Fanout {
		if f < 0 {
			return env.Dataset.Nodes()
		}
		level *= int64(f)
		total += level
		if total >= env.Dataset.Nodes() {
			return env.Dataset.Nodes()
		}
	}
	return total
}
