package diskgnn

// DiskGNN's memory plan (§4 "Four-level hierarchical feature store", §6):
//
//   - "The GPU cache size is configured by excluding the working memory for
//     model training from the total GPU memory." There is no GPU here: the
//     device cache lives in the run's device budget (device_mem, DESIGN §2 "One memory contract"
//     "One memory contract"), outside the host budget (a recorded
//     deviation, like GNNDrive's feature_buffer=device). By default
//     (gpu_cache auto) it is the device budget less the working memory held
//     there, the q + 2 complete inputs. The artifact splits one total
//     between its two caches (ogbn-papers100M at 10 %: 2e9 bytes of GPU
//     cache + 3e9 of CPU cache = 5e9), not the same size twice: a total of
//     host + device budget here, the GPU part from device_mem and the CPU
//     part from mem_limit. Option gpu_cache sets it explicitly (over the
//     device budget is a recorded deviation).
//   - "The CPU cache size is configured by reserving the memory to assemble
//     the graph samples and node features of several mini-batches to
//     prepare for training": the host budget holds the process's base, the
//     reserve kept free, the pipeline's buffers — with queues of depth q,
//     q + 2 partial inputs (the features read from disk, in host memory)
//     and q + 2 graph samples — the readers' staging, the Go heap the
//     epochs keep (the base's, each partial's decoded chunk header, the
//     disk-cache readers' request bookkeeping) with the quarter the
//     collector lets it grow, and the CPU cache gets the rest. A partial
//     input is as large as the most cold rows of any batch, which depends
//     on the cache size (rankProfile.MaxCold), so the plan tries cache
//     sizes and keeps the largest that fits.
//   - The complete inputs the assembler builds are GPU memory in the paper
//     (q + 2 of them): held outside the host budget with the device cache.
//   - Pre-processing (layout, packing) must fit the same budget: the cache
//     being filled, one packing partition and one staging window, the
//     packed ids held between sweeps and 12 bytes per node of tables.
//
// planMemory is a pure function of its inputs; size, the variant's sizing,
// makes them of a kit.Sizing (inputOf), and the floor is its least
// feasible budget under the most optimistic inputs known before a run.

import (
	"fmt"
	"math"

	"outcore/engine/system/kit"
)

// sizingInput is what the plan depends on.
type sizingInput struct {
	Budget   int64 // host budget, 0 = unlimited
	Base     int64 // resident base: runtime, indptr, labels, model (if on the host)
	Reserve  int64 // kept free (kit.ReserveBytes)
	Nodes    int64
	RowBytes int64
	// Accessed is the number of nodes any sample reads (the most rows
	// worth caching).
	Accessed int64
	// MaxInputs is the most input nodes of a sample; MaxGraphBytes the
	// largest encoded graph sample.
	MaxInputs     int64
	MaxGraphBytes int64
	Queue         int // pipeline queue depth (§6: 2)
	// ReaderBytes and PrepReaderBytes are the staging arenas of the
	// storage readers an epoch and pre-processing hold; ReaderHeap is the
	// request bookkeeping the epoch's disk-cache readers keep on the Go
	// heap (storage.PlanBytesPerRow per row of their largest call, which
	// readDiskRows bounds to diskCallRows).
	ReaderBytes, PrepReaderBytes, ReaderHeap int64
	PartBytes                                int64 // packing partition buffer
	IDQuota                                  int64 // packed ids held between packing sweeps
	// GPURows is the device cache in rows, or -1 for "from the device
	// budget": Device less the complete inputs. CPURows is the host cache
	// in rows, or -1 for "from the budget".
	GPURows, CPURows int64
	// Device is the device budget (device_mem) for GPURows -1.
	Device int64
	// MaxCold bounds the cold rows (packed and disk cache) of any sample
	// when the cached most popular nodes are cached; nil = MaxInputs.
	MaxCold func(cached int64) int64
}

// plan is the memory plan.
type plan struct {
	CPURows, GPURows int64
	// PartialBytes is one partial-input buffer: a chunk region (header and
	// packed rows) followed by the disk-cache rows, at most the header and
	// every cold row plus a page of padding.
	PartialBytes int64
	// GraphBytes is one graph buffer: the encoded sample as read (off the
	// heap; the decoded mini-batch views it) and its degrees (Go heap).
	GraphBytes int64
	Buffers    int // of each kind: queue depth + 2
	// InputBytes is one complete input (device).
	InputBytes int64
	// HostTrain and HostPrepare are the host peaks of training and of
	// pre-processing; Device is what is held outside the host budget (the
	// model step is on top).
	HostTrain, HostPrepare, Device int64
	// HeapNeed is the Go heap the epoch needs (for the collector's limit):
	// the resident base (its Go heap with what it measured beside it), each
	// buffer's decoded degrees and chunk header, and the disk-cache
	// readers' bookkeeping. The collector lets it grow a quarter over
	// (heapSlack), which the host peaks count.
	HeapNeed int64
	Feasible bool
	// MinBudget is the least host peak among the host caches planMemory
	// tried at this budget (its reserve, quota and partition).
	MinBudget int64
	// Queue is the queue depth the plan is for (size: shorter than the
	// options' when the budget cannot hold theirs).
	Queue int
}

const (
	heapSlack        = 4 // the Go heap grows a quarter over its live data (GOGC 25)
	prepBytesPerNode = 12
	// partialHeapPerInput is what a partial input keeps on the Go heap
	// per input of its batch, at most: the decoded chunk header (two
	// int32 per input: a cached input's slot and position, a disk-cache
	// input's row and position, a packed input's position), the header
	// check's seen flags (a byte per input) and the disk-cache rows' file
	// rows (an int64 per disk-cache input).
	partialHeapPerInput = 8 + 1 + 8
	// diskCallRows bounds one ReadRows call of a disk-cache reader
	// (readDiskRows), so that the bookkeeping each reader keeps
	// (storage.PlanBytesPerRow per row of its largest call) is a constant
	// of the plan, not a share of the largest batch.
	diskCallRows = 4096
)

// gpuRows is the device cache: GPURows, or with -1 the rows the device
// budget holds next to the q + 2 complete inputs; at most the accessed
// nodes.
func (in sizingInput) gpuRows() int64 {
	g := in.GPURows
	if g < 0 {
		inputs := int64(max(in.Queue, 1)+2) * in.MaxInputs * in.RowBytes
		g = 0
		if in.RowBytes > 0 {
			g = max(0, in.Device-inputs) / in.RowBytes
		}
	}
	return min(max(g, 0), in.Accessed)
}

func (in sizingInput) maxCold(cached int64) int64 {
	if in.MaxCold == nil {
		return in.MaxInputs
	}
	return min(in.MaxCold(cached), in.MaxInputs)
}

// at evaluates the plan for a host cache of cpu rows.
func (in sizingInput) at(cpu int64) plan {
	p := plan{Buffers: in.Queue + 2}
	p.GPURows = in.gpuRows()
	p.CPURows = min(cpu, in.Accessed-p.GPURows)
	cold := in.maxCold(p.GPURows + p.CPURows)
	header := alignUp(chunkHeaderSize+8*in.MaxInputs, regionAlign) // at most two int32 per input
	p.PartialBytes = header + alignUp(cold*in.RowBytes, regionAlign) + regionAlign
	degrees := 4 * in.MaxInputs
	p.GraphBytes = in.MaxGraphBytes + degrees
	p.InputBytes = in.MaxInputs * in.RowBytes
	b := int64(p.Buffers)
	p.HeapNeed = in.Base + b*(degrees+partialHeapPerInput*in.MaxInputs) + in.ReaderHeap
	cache := p.CPURows * in.RowBytes
	p.HostTrain = in.Reserve + p.HeapNeed + p.HeapNeed/heapSlack + b*(p.PartialBytes+in.MaxGraphBytes) + in.ReaderBytes + cache
	prepHeap := prepBytesPerNode*in.Nodes + in.IDQuota + 2*in.PartBytes // partition and staging window
	p.HostPrepare = in.Base + in.Reserve + prepHeap + prepHeap/heapSlack + in.PrepReaderBytes + cache
	p.Device = p.GPURows*in.RowBytes + b*p.InputBytes
	p.Feasible = in.Budget <= 0 || max(p.HostTrain, p.HostPrepare) <= in.Budget
	return p
}

// planMemory chooses the caches: with CPURows -1 the largest host cache
// (among 257 evenly spaced sizes up to what is left to cache) whose plan
// fits the budget; without a budget the host caches every accessed row the
// device cache does not.
func planMemory(in sizingInput) plan {
	in.Queue = max(in.Queue, 1)
	in.Accessed = max(in.Accessed, 0)
	var cands []int64
	switch {
	case in.CPURows >= 0:
		cands = []int64{in.CPURows}
	case in.Budget <= 0:
		cands = []int64{max(0, in.Accessed-in.gpuRows())}
	default:
		most := max(0, in.Accessed-in.gpuRows()) // host rows worth trying
		for k := int64(0); k <= 256; k++ {
			cands = append(cands, most*k/256)
		}
	}
	best := plan{}
	least := plan{MinBudget: math.MaxInt64}
	found := false
	for _, c := range cands {
		p := in.at(c)
		if need := max(p.HostTrain, p.HostPrepare); need < least.MinBudget {
			least = p
			least.MinBudget = need
		}
		if p.Feasible && (!found || p.CPURows+p.GPURows >= best.CPURows+best.GPURows) {
			best, found = p, true
		}
	}
	if !found {
		// the plan of the least budget, to say what it holds
		return least
	}
	best.MinBudget = least.MinBudget
	return best
}

// planMemoryQueues is planMemory that shortens the pipeline's queues to
// one batch when the paper's depth (in.Queue, §6: 2) cannot fit the budget
// and the depth was not chosen by the user (fixed false). §4 sizes the CPU
// cache from what is left after "reserving the memory to assemble the graph
// samples and node features of several mini-batches"; a budget too small
// for several keeps fewer rather than refusing the run. It returns the plan
// and the queue depth it was made for; a run whose depth differs from §6's
// records it as a deviation. paperLeast is the least budget of the
// asked depth (its plan's MinBudget), for the deviation's message.
func planMemoryQueues(in sizingInput, fixed bool) (p plan, queue int, paperLeast int64) {
	in.Queue = max(in.Queue, 1)
	p = planMemory(in)
	if p.Feasible || fixed || in.Queue == 1 {
		return p, in.Queue, p.MinBudget
	}
	short := in
	short.Queue = 1
	if q := planMemory(short); q.Feasible {
		return q, 1, p.MinBudget
	}
	return p, in.Queue, p.MinBudget
}

// String is a one-line summary in MiB.
func (p plan) String() string {
	return fmt.Sprintf("cpu cache %d rows, gpu cache %d rows; %d buffers of each kind: partial %d MiB, graph %d MiB, input %d MiB (device); host peak train %d MiB, prepare %d MiB; device %d MiB",
		p.CPURows, p.GPURows, p.Buffers, p.PartialBytes>>20, p.GraphBytes>>20, p.InputBytes>>20, p.HostTrain>>20, p.HostPrepare>>20, p.Device>>20)
}

// minQueue is the shortest queue depth a run with options o may plan with
// (planMemoryQueues).
func minQueue(o options) int {
	if o.queueSet {
		return o.queue
	}
	return 1
}

// profile is what the plan depends on besides kit.Sizing (its Prof): what
// offline sampling measured. The zero profile is the floor's (run false):
// the most optimistic inputs known before a run — the first mini-batch's
// inputs and bytes (train.ProbeShape through kit.EstimateWorkspace), every
// node accessed, no host cache, the shortest queues the options allow, and
// every cached row one of a sample's inputs (the fewest cold rows) — so
// the floor is a lower bound of what a run needs, from the plan the run
// makes. The exact plan is made after offline sampling, and a budget it
// cannot fit is refused then, before training, with its least budget.
type profile struct {
	run           bool  // a run's profile (false: the floor's)
	accessed      int64 // nodes any sample reads
	maxInputs     int64 // the most input nodes of a sample
	maxGraphBytes int64 // the largest encoded graph sample
	// maxCold bounds the cold rows of any sample when the cached most
	// popular nodes are cached (rankProfile.MaxCold)
	maxCold func(cached int64) int64
	device  int64 // the device budget (kit.Budget.Device)
}

// partitionBytes is the packing partition: option partition, or the
// artifact's 8 partitions of the features, each a small share of the
// budget (pre-processing's peak must not shrink the caches).
func partitionBytes(s kit.Sizing[options, profile]) int64 {
	part := s.Opt.partition
	if part == 0 {
		part = s.Shape.FeatureBytes() / 8
		if s.Budget > 0 {
			part = min(part, s.Budget/32)
		}
	}
	return part
}

// partitionRows is the packing partition in rows.
func partitionRows(s kit.Sizing[options, profile]) int64 {
	return max(1, partitionBytes(s)/max(s.Shape.RowBytes(), 1))
}

// inputOf is planMemory's input of a sizing: the run's, or with the zero
// profile the floor's.
func inputOf(s kit.Sizing[options, profile]) sizingInput {
	rowBytes := s.Shape.RowBytes()
	in := sizingInput{
		Budget:          s.Budget,
		Base:            s.WS.BaseBytes + s.WS.ArenaBytes + s.WS.StepExtra,
		Reserve:         kit.ReserveBytes(s.Budget),
		Nodes:           s.Shape.Nodes,
		RowBytes:        rowBytes,
		Queue:           s.Opt.queue,
		ReaderBytes:     s.Opt.trainReaderBytes(),
		ReaderHeap:      s.Opt.trainReaderHeap(),
		PrepReaderBytes: prepReaderBytes,
		PartBytes:       partitionRows(s) * rowBytes,
		IDQuota:         idQuota(s.Budget),
		GPURows:         s.Opt.gpuRows(s.Shape.FeatureBytes(), rowBytes),
		CPURows:         -1,
	}
	if s.Budget <= 0 {
		in.Reserve = 0
	}
	if pr := s.Prof; pr.run {
		in.Accessed, in.MaxInputs, in.MaxGraphBytes, in.MaxCold, in.Device = pr.accessed, pr.maxInputs, pr.maxGraphBytes, pr.maxCold, pr.device
		if s.Opt.cpuBytes >= 0 {
			in.CPURows = s.Opt.cpuBytes / rowBytes
		}
		return in
	}
	inputs := int64(s.WS.MaxInputs)
	if s.Cfg.ResolveDeviceMem(s.Shape.FeatureBytes()) == nil {
		in.Device = s.Cfg.DeviceMemBytes
	}
	in.Accessed, in.MaxInputs, in.CPURows = s.Shape.Nodes, inputs, 0
	in.MaxGraphBytes = sampleHeaderSize + max(8*inputs, s.WS.BatchBytes)
	in.Queue = minQueue(s.Opt)
	in.MaxCold = func(cached int64) int64 { return max(0, inputs-cached) }
	return in
}

// size is DiskGNN's sizing (kit.Sizer: Register's floor and the run's
// plan): planMemory of the floor's input, or in a run planMemoryQueues,
// which shortens the queues the budget cannot hold unless the depth was
// chosen.
func size(s kit.Sizing[options, profile]) plan {
	in := inputOf(s)
	if !s.Prof.run {
		p := planMemory(in)
		p.Queue = max(in.Queue, 1)
		return p
	}
	p, queue, _ := planMemoryQueues(in, s.Opt.queueSet)
	p.Queue = queue
	return p
}

// askedDepth is s with the options' queue depth kept (as if chosen): its
// least budget (kit.Sizer.Least) is the one the deviation of shortened
// queues names.
func askedDepth(s kit.Sizing[options, profile]) kit.Sizing[options, profile] {
	s.Opt.queueSet = true
	return s
}

// Fits is whether the budget holds the plan (kit.Fitter).
func (p plan) Fits() bool { return p.Feasible }

// goHeap is the Go heap of the epochs: the CPU cache's cpuRows rows of
// rowBytes and each pipeline buffer's partial input and graph sample off
// the heap, the planned heap.
func (p plan) goHeap(cpuRows int, rowBytes, partialBytes, maxGraph int64) kit.GoHeap {
	return kit.GoHeap{OffHeap: int64(cpuRows)*rowBytes + int64(p.Buffers)*(partialBytes+maxGraph), HeapNeed: p.HeapNeed}
}
