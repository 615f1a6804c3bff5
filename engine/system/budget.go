package system

// Memory accounting shared by the variants. Each variant sizes its caches
// and buffers from the run's memory budget the way its paper does; all of
// them need the same few measurements first: what the process holds before
// any cache exists, how many input nodes a mini-batch has, and how much
// workspace one training step takes. Ginex §3.5 gets these "by a short
// offline profiling"; profileWorkspace is that profiling.

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"outcore/engine/graph"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/train"
)

// workspace is what profiling measured.
type workspace struct {
	baseBytes  int64 // resident memory before caches: runtime, indptr, labels, model
	maxInputs  int   // most input nodes of a profiled mini-batch (M_b)
	batchBytes int64 // memory of the largest profiled mini-batch (ids and blocks)
	meanInputs int
	arenaBytes int64 // model workspace of one training step on the largest batch
	// stepExtra is what the process held during the profiled step beyond
	// base, arena and batch input: matrix-library buffers, collector slack.
	stepExtra int64
	rowBytes  int64
	batches   int // mini-batches profiled
	// deviceBytes is the model step held outside the budget (model_mem.go):
	// parameters, optimizer state, arena and step extra with a margin. When
	// it is set, arenaBytes and stepExtra are zero (nothing of the step is
	// charged to the host budget) and stepArena/stepOther keep the measure.
	deviceBytes          int64
	stepArena, stepOther int64
	libBytes             int64 // matrix-library buffers kept after the step
}

// batchInputBytes is the size of one gathered batch input of the largest
// profiled batch.
func (w workspace) batchInputBytes() int64 { return int64(w.maxInputs) * w.rowBytes }

// profileWorkspace samples the first n training batches of epoch 0 and runs
// one training step of a throw-away copy of the model on the largest of them
// (constant dense features: only the shapes matter), so the real model is
// untouched.
func profileWorkspace(ctx context.Context, env *train.Env, topo sample.Topology, n int) (workspace, error) {
	w := workspace{rowBytes: env.Dataset.RowBytes()}
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
		w.batchBytes = max(w.batchBytes, mb.Bytes())
		if len(mb.InputNodes) > w.maxInputs {
			w.maxInputs = len(mb.InputNodes)
			largest = mb
		}
	}
	w.batches = n
	if n > 0 {
		w.meanInputs = sum / n
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
				_ = holdOutsideBudget(env, 0)
			}
		}()
		runtime.GC()
		debug.FreeOSMemory()
		before := anonRSS()
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
		w.arenaBytes = int64(m.ArenaBytes())
		floats, ints := m.ArenaSizes()
		during := anonRSS()
		x, m = nil, nil
		runtime.GC()
		debug.FreeOSMemory()
		after := anonRSS()
		// What stays after the step is freed: the matrix library's
		// per-thread buffers (OpenBLAS keeps them for the process's life).
		w.libBytes = max(0, after-before)
		w.stepExtra = max(0, during-after-w.arenaBytes-w.batchInputBytes())
		// The trainer's workspace is sized (at the end, after the base is
		// measured) for the largest profiled batch plus an eighth (batches
		// vary), so that it is held from the start instead of growing, and
		// re-chunking, in the first steps.
		reserveFloats, reserveInts = floats+floats/8, ints+ints/8
		w.arenaBytes += w.arenaBytes / 8
		if modelMemOutside(env) {
			// The reserved workspace (a larger batch would grow it: an
			// eighth more of margin), the step's extras and the parameters.
			params := env.Trainer.Model().NumParams() * 4 * 4 // weights, gradients, Adam m and v
			w.stepArena, w.stepOther = w.arenaBytes, w.stepExtra
			w.stepOther += w.libBytes
			w.deviceBytes = w.arenaBytes + w.arenaBytes/8 + w.stepOther + int64(params)
			w.arenaBytes, w.stepExtra = 0, 0
		}
		if lifted {
			settled = true
			if err := holdOutsideBudget(env, w.deviceBytes); err != nil {
				return w, err
			}
		}
		if w.deviceBytes > 0 {
			env.Deviate("the CPU trainer's model step (%d MiB: parameters and optimizer state, %d MiB of activations and gradients measured on the largest of %d profiled mini-batches plus 27%%, %d MiB of matrix-library buffers) is held outside the %d MiB memory budget, as the GPU memory it occupies in the papers; the cgroup limit is %d MiB",
				w.deviceBytes>>20, w.stepArena>>20, n, w.stepOther>>20, env.MemBudget>>20, (env.MemBudget+w.deviceBytes)>>20)
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
	w.baseBytes = anonRSS()
	if w.deviceBytes > 0 {
		w.baseBytes = max(0, w.baseBytes-w.libBytes) // counted in deviceBytes
	}
	if reserveFloats > 0 {
		env.Trainer.ReserveWorkspace(reserveFloats, reserveInts)
	}
	return w, nil
}

// anonRSS is the process's anonymous resident memory (/proc/self/status
// RssAnon): heap, stacks and allocations, without the file pages of its
// memory maps, which are page cache the kernel can reclaim.
func anonRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// reserveBytes is the region Ginex §3.5 keeps free "for memory
// fluctuations": a tenth of the budget, at least 32 MiB.
func reserveBytes(budget int64) int64 { return max(budget/10, 32<<20) }

// applyGoMemoryLimit keeps the Go heap close to its live size under a
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
func applyGoMemoryLimit(budget, device, offHeap, keepCached, heapNeed int64) int64 {
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

// maxInputBound is the most input nodes a training batch can have: the
// seeds times 1 + f1 + f1·f2 + … (all fanouts positive), or every node.
func maxInputBound(env *train.Env) int64 {
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
