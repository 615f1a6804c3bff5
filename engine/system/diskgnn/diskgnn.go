package diskgnn

// "diskgnn": DiskGNN (Liu et al., arXiv:2405.05231), CPU-training variant.
// Implemented, in the order of a run:
//
//   - §3 offline sampling (offline_sampling.go): Prepare samples the
//     pool of mini-batches — under sample_pool=reuse (the artifact's
//     default) one epoch's, which every epoch trains again; under
//     sample_pool=epoch every epoch's, the batches the reference trains —
//     and stores the graph samples on disk, counting accesses.
//   - §4 four-level feature store (tier_plan.go, sizing.go): device cache
//     (the most accessed features; held outside the host budget), host
//     cache (the next ones; what the budget leaves after the pipeline's
//     buffers), and the disk levels.
//   - §5.1 segmented disk cache: Algorithm 2 searches the segment size
//     under option disk_budget (segment_search.go), or option segment_size
//     fixes it (all: one global disk cache); per segment, the cold
//     features several of its samples share go to its disk cache, reordered
//     by MinHash (Algorithm 1, minhash_reorder.go,
//     segmented_disk_cache.go; reorder=none: node order); every other cold
//     feature is packed into its sample's chunk, with the interpreted
//     addresses (chunk_format.go). The layout's files are the summary's
//     disk space (holdDisk: Fig. 12, Fig. 13).
//   - §5.2 batched packing (packing.go, layout.go): one sequential sweep of
//     the feature table fills every chunk and the memory caches.
//   - §5.3 four-stage pipeline (pipeline.go) with queues of 2 (§6):
//     ① the feature loader reads a batch's chunk with one sequential
//     O_DIRECT read and its disk-cache rows with io_threads io_uring
//     readers (page-merged, feature_loader.go); ② the assembler builds the
//     batch input from the caches and that partial input (tiers.go);
//     ③ the graph loader reads the graph sample; ④ the trainer.
//
// Prepare's time is the summary's prepare_s, with its stages
// (offline_sample_s, search_s, segment_s, pack_s, ...); the epoch time
// holds none of it. Epoch records: tiers gpu, cpu, disk_cache, packed
// (ep.Lookup: lookups that reached the tier, hits there; packed rows are
// rows from the device, the disk-cache rows are counted by their row
// reads); stages sample_s (stage ③ loading the stored graph samples; the
// sampling itself is prepare's offline_sample_s), extract_s (stages ① and
// ②, with load_features_s, packed_read_s, disk_cache_read_s and assemble_s
// inside it), stall_s (trainer waiting); sample and extract worker times;
// counters packed_bytes_read, address_bytes_read (the chunks' address
// headers), disk_cache_bytes_read, graph_bytes_read,
// disk_cache_requests, disk_cache_rows, packed_rows, segments_read
// (batches that read their segment's disk cache), and the layout's
// pool_samples (graph samples sampled offline: one epoch's under reuse),
// segments, segment_size, disk_cache_entries, search_us and pack_ms
// (pre-processing, repeated in every epoch for reference).

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/internal/osutil"
)

const (
	randDepth = 64                                       // disk-cache (random) reads in flight per ring
	randArena = randDepth * storage.DefaultMaxMergeBytes // staging of one random reader
	seqMerge  = 512 << 10                                // sequential reads: 512 KiB requests
	seqDepth  = 4                                        // in flight
	seqArena  = seqDepth * seqMerge                      // staging of one sequential reader
	syncEvery = 16 << 20                                 // written bytes between flushes in pre-processing
	// pre-processing reads the feature table and the graph samples
	prepReaderBytes = 2 * seqArena
)

type diskGNN struct {
	kit.Base
	cfg train.Config
	o   options

	scratch  string
	indptr   []int64
	dim      int
	rowBytes int64
	perEpoch int
	refs     []sampleRef
	layout   *layout
	plan     tierPlan
	store    *store
	cacheMem kit.OffHeap // host cache, partial inputs (host budget)
	devMem   kit.OffHeap // device cache, complete inputs (outside the budget)
	sp       segmentPlan
	mp       plan

	samples, packed, headers, diskc *storage.File
	sampleR, packedR, headerR       storage.Reader
	diskR                           []storage.Reader
	partialBytes                    int64
	maxGraph                        int64

	searchTime, packTime time.Duration
}

var newDiskGNN = kit.New(parseOptions, func(cfg train.Config, o options) *diskGNN {
	dev := []string{
		"training and feature assembling run on the CPU: the GPU cache and the assembled batch inputs (the complete-feature queue) are host memory accounted as device memory outside the host budget, and the assembler copies rows instead of one CUDA kernel with UVA reads of the host cache",
		poolDeviation(o.samplePool, cfg.Epochs),
		"Algorithm 1 line 11 as the artifact computes it: one MinHash minimum per hash function, signatures compared lexicographically",
		"the disk caches are filled by the batched sequential sweep through a staging file, window by window (the artifact gathers them with random O_DIRECT row reads; the paper does not say)",
		"the four pipeline stages and the io_uring readers are goroutines (the paper: threads, OpenMP for the 4 io_uring threads)",
	}
	if o.diskX > 0 {
		dev = append(dev, fmt.Sprintf("disk_budget %s is %g × the feature table per epoch of samples (the run holds one layout for %d epochs of samples)", o.diskBudget, o.diskX, o.pooledEpochs(cfg.Epochs)))
	}
	if !o.pipeline {
		dev = append(dev, "pipeline=false: the four stages run one after the other (Table 5's sequential baseline)")
	}
	if o.queue != 2 {
		dev = append(dev, fmt.Sprintf("pipeline_queue=%d: pipeline queues of %d batches (§6: 2)", o.queue, o.queue))
	}
	if o.ioThreads != 4 {
		dev = append(dev, fmt.Sprintf("%d io_uring threads read the disk cache (§6: 4)", o.ioThreads))
	}
	if o.hashes != 2 && o.reorder != reorderNone {
		dev = append(dev, fmt.Sprintf("MinHash reordering with %d hash functions (§5.1: 2)", o.hashes))
	}
	if o.reorder == reorderNone {
		dev = append(dev, "reorder=none: every disk cache keeps its rows in node order, without Algorithm 1's MinHash reordering (Fig. 5a's and Fig. 13's No-reorder baseline)")
	}
	switch {
	case o.segmentSize == segmentGlobal:
		dev = append(dev, "segment_size=all: one global disk cache shared by all graph samples (§5.1 \"Reordering for global disk cache\", Fig. 5's Global), not the segmented disk cache; disk_budget does not bound it")
	case o.segmentSize > 0:
		dev = append(dev, fmt.Sprintf("segment_size=%d: every segment of the disk cache holds %d graph samples (Fig. 13's fixed segment sizes), not Algorithm 2's search; disk_budget does not bound the layout", o.segmentSize, o.segmentSize))
	}
	return &diskGNN{Base: kit.NewBase(Name, kit.OnCPU("sample", "extract", "assemble", "train"), dev...), cfg: cfg, o: o}
})

// poolDeviation says what the sample pool departs from: the reference
// (a reused pool trains the same mini-batches every epoch) or the
// artifact (a pool per epoch).
func poolDeviation(pool string, epochs int) string {
	if pool == poolReuse {
		return fmt.Sprintf("sample_pool=reuse (the artifact's): one epoch's graph samples are sampled and packed once in Prepare and each of the %d epochs trains them again, so every epoch sees the same mini-batches in the same order (the reference samples each epoch anew); pre-processing is amortised over the epochs", epochs)
	}
	return "sample_pool=epoch: offline sampling samples every epoch of the run (the batches the reference trains, one layout over all of them); the artifact samples one pool of batches and reuses it across epochs"
}

// freeDisk is the space left on the file system holding dir (unbounded
// where it cannot be read).
func freeDisk(dir string) int64 {
	n, err := osutil.FreeDiskBytes(dir)
	if err != nil {
		return math.MaxInt64
	}
	return n
}

func (d *diskGNN) storageOpts(env *train.Env, random bool) storage.Options {
	o := env.Storage
	if o.Backend == storage.BackendAuto {
		if random {
			o.Backend = storage.BackendUring
		} else {
			o.Backend = storage.BackendPread
		}
	}
	if random {
		o.QueueDepth, o.BlockSize = randDepth, d.o.blockSize
	} else {
		o.QueueDepth, o.MaxMergeBytes, o.Workers = seqDepth, seqMerge, 2
	}
	return o
}

func (d *diskGNN) Prepare(ctx context.Context, env *train.Env) error {
	ds := env.Dataset
	if env.Storage.Backend != storage.BackendAuto {
		env.Deviate("every read goes through the %s backend (--io) instead of pread for chunks and io_uring for the disk cache", env.Storage.Backend)
	}
	if int64(len(env.Train)) > math.MaxInt32 || ds.Nodes() > math.MaxInt32 {
		return fmt.Errorf("diskgnn: %d nodes exceed the int32 address tables", ds.Nodes())
	}
	budget := kit.NewBudget(env)
	d.indptr = ds.Indptr
	d.dim = ds.Meta.FeatureDim
	d.rowBytes = ds.RowBytes()
	d.perEpoch = env.NumBatches()
	var err error
	if d.scratch, err = env.ScratchDir(); err != nil {
		return err
	}
	off, err := d.profileAndSample(ctx, env, budget)
	if err != nil {
		return err
	}
	si := &sampleInputs{d: d, nodes: ds.Nodes()}
	rp, err := d.rank(ctx, env, off, si)
	if err != nil {
		return err
	}
	partRows, err := d.planMemory(env, budget, off, rp)
	if err != nil {
		return err
	}
	off.counts = nil
	if err := d.searchSegments(ctx, env, off.n, si); err != nil {
		return err
	}

	// The memory tiers and the disk levels (§5.1–§5.2).
	gpu, err := d.devMem.Float32s(d.plan.GPURows() * d.dim)
	if err != nil {
		return fmt.Errorf("diskgnn: gpu cache: %w", err)
	}
	cpu, err := d.cacheMem.Float32s(d.plan.CPURows() * d.dim)
	if err != nil {
		return fmt.Errorf("diskgnn: cpu cache: %w", err)
	}
	if d.store, err = newStore(&d.plan, d.dim, gpu, cpu); err != nil {
		return err
	}
	if err := d.buildLayout(ctx, env, off.n, partRows, si.read); err != nil {
		return err
	}
	si.buf, si.cold, si.ids = nil, nil, nil
	d.plan.release() // the chunk headers hold the addresses
	runtime.GC()
	debug.FreeOSMemory()

	// The epoch's readers.
	t6 := time.Now()
	if err := d.openStore(env); err != nil {
		return err
	}
	env.PrepareStage("open_s", time.Since(t6))
	budget.Enter(d.mp.goHeap(d.plan.CPURows(), d.rowBytes, d.partialBytes, d.maxGraph))
	return nil
}

// offline is what profiling and offline sampling leave for the plan: the
// profiled workspace, the samples of the run (n), each node's accesses
// and the sampling's statistics.
type offline struct {
	ws     kit.Workspace
	n      int
	counts []int32
	ost    offlineStats
}

// sampleInputs reads a graph sample's input nodes back from samples.bin
// (read), and the cold inputs of one (coldOf) against the tier plan.
type sampleInputs struct {
	d     *diskGNN
	nodes int64
	buf   []byte
	ids   []int64
	cold  []int32
}

func (si *sampleInputs) read(ctx context.Context, g int, ids []int64) ([]int64, error) {
	ref := si.d.refs[g]
	si.buf = growSlice(si.buf, int(ref.InputsLen()))
	if err := si.d.sampleR.ReadRange(ctx, ref.Off, si.buf); err != nil {
		return ids, fmt.Errorf("diskgnn: read sample %d: %w", g, err)
	}
	return decodeInputs(si.buf, si.nodes, ids)
}

func (si *sampleInputs) coldOf(ctx context.Context, i int) ([]int32, error) {
	var err error
	if si.ids, err = si.read(ctx, i, si.ids); err != nil {
		return nil, err
	}
	si.cold = coldInputs(si.ids, si.d.plan.Slot, si.cold)
	return si.cold, nil
}

// profileAndSample profiles one training step (the model step outside
// the budget) and samples every batch of the run offline (§3) into
// samples.bin, which it opens for reading back.
func (d *diskGNN) profileAndSample(ctx context.Context, env *train.Env, budget *kit.Budget) (offline, error) {
	var off offline
	t0 := time.Now()
	topo, closeTopo, err := env.Topology("mmap")
	if err != nil {
		return off, err
	}
	defer func() {
		if closeTopo != nil {
			closeTopo()
		}
	}()
	if off.ws, err = budget.ProfileStage(ctx, t0, topo, d.o.profile); err != nil {
		return off, err
	}
	t1 := time.Now()
	pooled := d.o.pooledEpochs(d.cfg.Epochs)
	off.n = pooled * d.perEpoch
	w, err := createSampleWriter(filepath.Join(d.scratch, "samples.bin"), off.n, syncEvery)
	if err != nil {
		return off, err
	}
	off.counts = make([]int32, env.Dataset.Nodes())
	proto, err := env.NewSampler(topo)
	if err != nil {
		return off, err
	}
	off.ost, err = offlineSample(ctx, proto, pooled, d.perEpoch, env.EpochBatches, d.o.samplers, w, off.counts,
		func(done, total int) { env.Progress(0, done, total, "prepare") })
	refs, written, cerr := w.Close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		return off, err
	}
	d.refs = refs
	proto = nil
	closeTopo()
	closeTopo = nil
	osutil.DropFileCache(env.IndicesPath())
	osutil.DropFileCache(filepath.Join(d.scratch, "samples.bin"))
	env.PrepareStage("offline_sample_s", time.Since(t1))
	env.Logf("diskgnn: offline sampling: %d samples (%d epochs × %d), %d input nodes in all (largest sample %d), %d MiB of graph samples; sampling %.1fs busy over %d workers",
		off.n, pooled, d.perEpoch, off.ost.Accesses, off.ost.MaxInputs, written>>20, off.ost.SampleBusy.Seconds(), d.o.samplers)
	so := d.storageOpts(env, false)
	so.Kind = metrics.FileTopology // graph samples: the batches' blocks
	if d.samples, err = storage.OpenFile(filepath.Join(d.scratch, "samples.bin"), so); err != nil {
		return off, fmt.Errorf("diskgnn: open graph samples: %w", err)
	}
	d.sampleR, err = d.samples.NewReader()
	return off, err
}

// rank profiles every sample's inputs by the nodes' popularity rank (§4:
// the memory plan's cold inputs), as the preparation stage rank_s.
func (d *diskGNN) rank(ctx context.Context, env *train.Env, off offline, si *sampleInputs) (*rankProfile, error) {
	t2 := time.Now()
	rp := newRankProfile(popularityOrder(off.counts), env.Dataset.Nodes(), off.n, 1024)
	var ids []int64
	var err error
	for g := 0; g < off.n; g++ {
		if ids, err = si.read(ctx, g, ids); err != nil {
			return nil, err
		}
		rp.Add(g, ids)
	}
	rp.Release()
	env.PrepareStage("rank_s", time.Since(t2))
	return rp, nil
}

// planMemory is §4's memory plan from the access counts (sizing.go),
// applied through kit.Budget.Apply (memory), and the tiers placed; it
// returns the rows of a pre-processing partition.
func (d *diskGNN) planMemory(env *train.Env, budget *kit.Budget, off offline, rp *rankProfile) (int64, error) {
	var accessed int64
	for _, c := range off.counts {
		if c > 0 {
			accessed++
		}
	}
	s := kit.SizingOf(env, off.ws, d.o, profile{run: true, accessed: accessed, maxInputs: int64(off.ost.MaxInputs), maxGraphBytes: off.ost.MaxBytes, maxCold: rp.MaxCold, device: budget.Device()})
	partRows := partitionRows(s)
	var least int64
	d.mp, least = kit.Size(size, s)
	var asked int64 // the least budget of the options' queues, when cut
	if d.mp.Feasible && d.mp.Queue != d.o.queue {
		asked = kit.Sizer[options, profile, plan](size).Least(askedDepth(s))
	}
	m := d.memory(env, inputOf(s), least, asked)
	if queue := d.mp.Queue; d.mp.Feasible && queue != d.o.queue {
		env.Logf("diskgnn: the %d MiB budget cannot hold pipeline queues of %d batches (least %d MiB): queues of %d", env.MemBudget>>20, d.o.queue, asked>>20, queue)
		d.o.queue = queue
	}
	if !d.mp.Feasible {
		return 0, m.Refusal
	}
	var err error
	if d.plan, err = planTiers(off.counts, d.mp.GPURows, d.mp.CPURows); err != nil {
		return 0, err
	}
	env.Logf("diskgnn: memory plan: %s; %d nodes accessed; the caches hold %d (%.1f%%)", d.mp, accessed, d.plan.Cached(), 100*float64(d.plan.Cached())/float64(env.Dataset.Nodes()))
	gpuBytes := int64(d.plan.GPURows()) * d.rowBytes
	m.Device = []kit.Part{
		{Name: "gpu_cache", Bytes: gpuBytes, What: fmt.Sprintf("the GPU cache (%d rows)", d.plan.GPURows())},
		{Name: "batch_inputs", Bytes: d.mp.Device - gpuBytes, What: fmt.Sprintf("%d assembled batch inputs (up to %d MiB each)", d.mp.Buffers, d.mp.InputBytes>>20)},
	}
	_, err = budget.Apply(m)
	return partRows, err
}

// memory is the plan as the shared preparation applies it (kit.Plan),
// before the tiers are placed (planMemory adds the device parts): the
// refusal of a plan that does not fit (Apply names its least budget) and
// the queues the budget cut (asked: the least budget of the options'
// depth).
func (d *diskGNN) memory(env *train.Env, in sizingInput, least, asked int64) kit.Plan {
	m := kit.Plan{Fits: d.mp.Feasible, LeastBudget: least, Why: fmt.Sprintf("in the %d MiB device budget, as the GPU memory they are in the paper", in.Device>>20)}
	if !d.mp.Feasible {
		m.Refusal = fmt.Errorf("diskgnn: the memory budget (%d MiB) cannot hold the pipeline and pre-processing (base %d MiB, reserve %d MiB, %s)",
			env.MemBudget>>20, in.Base>>20, in.Reserve>>20, d.mp)
	}
	if queue := d.mp.Queue; d.mp.Feasible && queue != d.o.queue && queue != 2 {
		m.Cuts = append(m.Cuts, fmt.Sprintf("pipeline queues hold %d batches (§6: 2): the %d MiB budget cannot hold queues of %d (least %d MiB)", queue, env.MemBudget>>20, d.o.queue, asked>>20))
	}
	return m
}

// searchSegments runs §5.1's Algorithm 2 (or Table 4's brute force) under
// the disk budget, searching again under the free disk space when the
// disk cannot hold what the budget allows.
func (d *diskGNN) searchSegments(ctx context.Context, env *train.Env, n int, si *sampleInputs) error {
	t3 := time.Now()
	nodes := env.Dataset.Nodes()
	budgetRows := d.o.diskBudgetRows(env.Dataset.FeatureBytes(), d.rowBytes, d.o.pooledEpochs(d.cfg.Epochs))
	coldOf := func(i int) ([]int32, error) { return si.coldOf(ctx, i) }
	var brute bruteForcePlan
	search := func(budgetRows int64) (segmentPlan, error) {
		if d.o.segmentSize != 0 {
			// Fig. 5's global and Fig. 13's fixed segment sizes
			return fixedSegmentPlan(n, int(nodes), d.o.segmentSize, coldOf)
		}
		if d.o.search == searchBrute {
			// Table 4's baseline: every (s, m) built and measured
			var err error
			brute, err = bruteForceSegments(ctx, n, &d.plan, budgetRows, d.rowBytes, d.o.blockSize, d.o.layoutHashes(), uint64(d.cfg.Seed), si.read)
			return brute.segmentPlan, err
		}
		return searchSegmentSize(n, int(nodes), budgetRows, coldOf)
	}
	var err error
	if d.sp, err = search(budgetRows); err != nil {
		return err
	}
	if free := freeDisk(d.scratch) - 2<<30; d.sp.EstimatedRows > free/d.rowBytes {
		if d.o.segmentSize != 0 {
			return fmt.Errorf("diskgnn: segment_size=%s needs about %d MiB on disk, more than the %d MiB free in %s (2 GiB kept free)",
				d.o.segmentSizeName(), (d.sp.EstimatedRows*d.rowBytes)>>20, max(0, free)>>20, d.scratch)
		}
		// The disk cannot hold what the budget allows: search again under
		// the space left (2 GiB kept free).
		budgetRows = max(0, free/d.rowBytes)
		if d.sp, err = search(budgetRows); err != nil {
			return err
		}
		env.Deviate("disk_budget %s exceeds the free disk space: the segment search ran under %d MiB", d.o.diskBudget, (budgetRows*d.rowBytes)>>20)
	}
	if !d.sp.Fits {
		return fmt.Errorf("diskgnn: disk_budget %s (%d MiB) is below the least the layout needs, one segment of all %d samples: %d MiB (every cold row stored once)",
			d.o.diskBudget, (budgetRows*d.rowBytes)>>20, n, (d.sp.EstimatedRows*d.rowBytes)>>20)
	}
	d.searchTime = time.Since(t3)
	env.PrepareStage("search_s", d.searchTime)
	switch {
	case d.o.segmentSize != 0:
		env.Logf("diskgnn: segment size %s (option segment_size): %d of %d samples per segment, %d disk-cache entries per segment, %d MiB estimated on disk",
			d.o.segmentSizeName(), d.sp.Size, n, d.sp.DiskEntries, (d.sp.EstimatedRows*d.rowBytes)>>20)
	case d.o.search == searchBrute:
		env.Deviate("search=brute: the segmented disk cache's segment size and entries come from the brute-force search of Table 4's baseline (%d combinations built and measured), not Algorithm 2", brute.Combinations)
		env.Logf("diskgnn: brute-force segment search: segment size %d of %d samples, %d disk-cache entries per segment, %d MiB on disk, %d MiB of pages an epoch reads; %d combinations in %.2fs",
			d.sp.Size, n, d.sp.DiskEntries, (d.sp.EstimatedRows*d.rowBytes)>>20, brute.TrafficBytes>>20, brute.Combinations, d.searchTime.Seconds())
	default:
		env.Logf("diskgnn: segment search (Algorithm 2): segment size %d of %d samples, %d disk-cache entries per segment, %d MiB estimated on disk (budget %s)",
			d.sp.Size, n, d.sp.DiskEntries, (d.sp.EstimatedRows*d.rowBytes)>>20, d.o.diskBudget)
	}
	switch {
	case d.sp.DiskEntries == 0 && d.o.segmentSize != 0:
		env.Warnf("diskgnn: no cold row is read by two samples of a segment of %d (segment_size=%s): the disk cache is empty, so Algorithm 1's reordering and the disk-cache reads do not run", d.sp.Size, d.o.segmentSizeName())
	case d.sp.DiskEntries == 0:
		env.Warnf("diskgnn: the disk budget (%s) packs every cold row: the segmented disk cache is empty, so Algorithm 1's reordering and the disk-cache reads do not run", d.o.diskBudget)
	}
	return nil
}

// idQuota is the memory for packed node ids between packing sweeps.
func idQuota(budget int64) int64 {
	if budget <= 0 {
		return 1 << 30
	}
	return max(budget/64, 4<<20)
}

// buildLayout writes the disk levels and fills the memory caches.
func (d *diskGNN) buildLayout(ctx context.Context, env *train.Env, n int, partRows int64, inputs func(context.Context, int, []int64) ([]int64, error)) error {
	ds := env.Dataset
	feats, err := storage.OpenFile(env.FeaturesPath(), d.storageOpts(env, false))
	if err != nil {
		return fmt.Errorf("diskgnn: open features: %w", err)
	}
	defer feats.Close()
	fr, err := feats.NewReader()
	if err != nil {
		return err
	}
	defer fr.Close()
	var files []*os.File
	create := func(name string) (*os.File, error) {
		f, err := os.Create(filepath.Join(d.scratch, name))
		if err != nil {
			return nil, fmt.Errorf("diskgnn: %w", err)
		}
		files = append(files, f)
		return f, nil
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
		os.Remove(filepath.Join(d.scratch, "disk_cache.stage"))
	}()
	packed, err := create("packed.bin")
	if err != nil {
		return err
	}
	disk, err := create("disk_cache.bin")
	if err != nil {
		return err
	}
	stage, err := create("disk_cache.stage")
	if err != nil {
		return err
	}
	headers, err := create("chunk_addresses.bin")
	if err != nil {
		return err
	}
	rb := d.rowBytes
	var readRows func(context.Context, []int64, []byte) error
	if d.o.packing == packingIndividual {
		// Fig. 14's baseline: every chunk's rows read one by one
		ro := d.storageOpts(env, true)
		ro.RowBytes = rb
		rfeats, err := storage.OpenFile(env.FeaturesPath(), ro)
		if err != nil {
			return fmt.Errorf("diskgnn: open features: %w", err)
		}
		defer rfeats.Close()
		rr, err := rfeats.NewReader()
		if err != nil {
			return err
		}
		defer rr.Close()
		readRows = rr.ReadRows
		env.Deviate("packing=individual: each chunk's rows are gathered with random row reads (Fig. 14's naive individual packing), not batched packing's partition sweeps; the memory tiers are filled by a sweep of their own")
	}
	lio := layoutIO{
		ReadRows:  readRows,
		Inputs:    inputs,
		ReadRange: fr.ReadRange,
		Packed:    packed, Headers: headers, DiskCache: disk, Stage: stage,
		Sync: func() error {
			for _, f := range files {
				if err := syncDrop(f); err != nil {
					return err
				}
			}
			return nil
		},
		OnPartition: func(lo int64, rows []byte) error {
			for k := int64(0); k < int64(len(rows))/rb; k++ {
				if s := d.plan.Slot[lo+k]; s >= 0 {
					d.store.Fill(s, osutil.View[float32](rows[k*rb:(k+1)*rb]))
				}
			}
			return nil
		},
	}
	cfg := layoutConfig{Nodes: ds.Nodes(), RowBytes: rb, Samples: n, Plan: &d.plan, Segment: d.sp,
		Hashes: d.o.layoutHashes(), Seed: uint64(d.cfg.Seed), PartRows: partRows, IDQuota: idQuota(env.MemBudget), SyncEvery: syncEvery,
		Progress: func(done, total int) { env.Progress(0, done, total, "prepare") }}
	t0 := time.Now()
	l, err := buildLayout(ctx, cfg, lio)
	if err != nil {
		return err
	}
	d.layout = l
	d.packTime = time.Since(t0)
	st := l.Stats
	env.PrepareStage("segment_s", st.SegmentTime)
	env.PrepareStage("disk_cache_s", st.DiskCacheTime)
	env.PrepareStage("classify_s", st.ClassifyTime)
	env.PrepareStage("pack_s", st.Pack.ReadTime+st.Pack.DispatchTime+st.Pack.WriteTime)
	env.PrepareStage("pack_read_s", st.Pack.ReadTime)
	if st.FillTime > 0 {
		env.PrepareStage("fill_cache_s", st.FillTime)
	}
	fb := ds.FeatureBytes()
	env.Logf("diskgnn: layout: %d segments, %d disk-cache rows (%d MiB), %d packed rows (packed file %d MiB, address file %d MiB); disk caches and packed rows %.2f× the feature table (%.2f× per epoch); %d packing sweeps of %d partitions (%d MiB read, %d MiB written)",
		st.Segments, st.DiskCacheRows, st.DiskCacheBytes>>20, st.PackedRows, st.PackedBytes>>20, st.HeaderBytes>>20,
		float64(st.DiskCacheBytes+st.PackedBytes)/float64(fb), float64(st.DiskCacheBytes+st.PackedBytes)/float64(fb)/float64(d.o.pooledEpochs(d.cfg.Epochs)),
		st.Sweeps, st.Pack.Partitions, st.Pack.BytesRead>>20, st.Pack.BytesWritten>>20)
	return d.holdDisk(env, st)
}

// holdDisk records the disk space of the layout for the run's summary
// (Fig. 12, Fig. 13's right plot): the packed chunks' rows and the disk
// caches are the copies of feature rows, as the paper's disk space
// counts "(|Vd| + |Vp|) × f × 4" bytes (Algorithm 2 line 7); the chunks'
// interpreted addresses and the graph samples are listed beside them.
func (d *diskGNN) holdDisk(env *train.Env, st layoutStats) error {
	files := map[string]int64{"packed.bin": st.PackedBytes, "disk_cache.bin": st.DiskCacheBytes, "chunk_addresses.bin": st.HeaderBytes}
	if fi, err := os.Stat(filepath.Join(d.scratch, "samples.bin")); err == nil {
		files["samples.bin"] = fi.Size()
	}
	return env.HoldDisk(files, "packed.bin", "disk_cache.bin")
}

// syncDrop flushes f and drops its clean pages from the page cache: the
// files are read back with O_DIRECT, and clean pages left behind would be
// charged to the run until reclaimed.
func syncDrop(f *os.File) error {
	if err := f.Sync(); err != nil {
		return err
	}
	_ = osutil.DropCache(f)
	return nil
}

// openStore opens the packed and disk-cache files for the epochs and
// sizes the partial inputs.
func (d *diskGNN) openStore(env *train.Env) error {
	var err error
	po := d.storageOpts(env, false)
	po.Kind = metrics.FileFeatures // copies of feature rows
	po.RowBytes = d.rowBytes       // a chunk's read delivers its packed rows
	if d.packed, err = storage.OpenFile(filepath.Join(d.scratch, "packed.bin"), po); err != nil {
		return fmt.Errorf("diskgnn: open packed chunks: %w", err)
	}
	if d.packedR, err = d.packed.NewReader(); err != nil {
		return err
	}
	ho := d.storageOpts(env, false)
	ho.Kind = metrics.FileOther // the interpreted addresses
	if d.headers, err = storage.OpenFile(filepath.Join(d.scratch, "chunk_addresses.bin"), ho); err != nil {
		return fmt.Errorf("diskgnn: open chunk addresses: %w", err)
	}
	if d.headerR, err = d.headers.NewReader(); err != nil {
		return err
	}
	if d.layout.Stats.DiskCacheRows > 0 {
		o := d.storageOpts(env, true)
		o.RowBytes = d.rowBytes
		o.Kind = metrics.FileFeatures
		if d.diskc, err = storage.OpenFile(filepath.Join(d.scratch, "disk_cache.bin"), o); err != nil {
			return fmt.Errorf("diskgnn: open disk cache: %w", err)
		}
		for i := 0; i < d.o.ioThreads; i++ {
			r, err := d.diskc.NewReader()
			if err != nil {
				return err
			}
			d.diskR = append(d.diskR, r)
		}
	}
	for _, c := range d.layout.Chunks {
		d.partialBytes = max(d.partialBytes, partialBytes(c, d.rowBytes))
	}
	for _, r := range d.refs {
		d.maxGraph = max(d.maxGraph, r.Len)
	}
	return nil
}

// graphBuf is one graph sample in the pipeline.
type graphBuf struct {
	raw []byte
	mb  graph.MiniBatch
}

func (d *diskGNN) RunEpoch(ctx context.Context, env *train.Env, epoch int, ep *metrics.EpochStats) error {
	// the pool's epoch this epoch trains: 0 under sample_pool=reuse
	pe := epoch % d.o.pooledEpochs(d.cfg.Epochs)
	first := pe * d.perEpoch
	if first+d.perEpoch > len(d.refs) {
		return fmt.Errorf("diskgnn: epoch %d was not sampled offline (the run sampled %d epochs)", epoch, len(d.refs)/d.perEpoch)
	}
	ep.BatchStarted()
	fl := &featureLoader{layout: d.layout, headers: d.headerR, packed: d.packedR, disk: d.diskR, rowBytes: d.rowBytes, slots: int32(d.plan.Cached()), ep: ep}
	var st0, sd0, sg0, sh0 storage.Stats
	st0, sg0, sh0 = d.packed.Stats(), d.samples.Stats(), d.headers.Stats()
	if d.diskc != nil {
		sd0 = d.diskc.Stats()
	}
	var partialMem, inputMem, graphMem kit.OffHeap
	defer partialMem.Free()
	defer inputMem.Free()
	defer graphMem.Free()
	var allocP, allocX, allocG error // set by NewP (loader), NewX (assembler), NewG (graph loader)
	nb := d.perEpoch
	hasGPU, hasDisk := d.plan.GPURows() > 0, d.layout.Stats.DiskCacheRows > 0
	stages := stages[partial, nn.Tensor, graphBuf]{
		LoadFeatures: func(ctx context.Context, i int, p *partial) error {
			if p.buf == nil {
				return allocP
			}
			w := ep.StartWorker(metrics.WorkExtract)
			t0 := time.Now()
			err := fl.load(ctx, first+i, p)
			ep.Add(metrics.StageExtract, time.Since(t0))
			ep.Add("load_features_s", time.Since(t0))
			w.Stop()
			return err
		},
		Assemble: func(ctx context.Context, i int, p *partial, x *nn.Tensor) error {
			if x.Data == nil {
				return allocX
			}
			w := ep.StartWorker(metrics.WorkExtract)
			t0 := time.Now()
			x.Resize(int(p.h.Inputs), d.dim)
			th, err := d.store.Assemble(&p.h, p.packed, p.disk, x.Data)
			ep.Add(metrics.StageExtract, time.Since(t0))
			ep.Add("assemble_s", time.Since(t0))
			w.Stop()
			if err != nil {
				return err
			}
			// The four levels in lookup order; nothing is read from
			// features.bin (no "device" rows): the disk levels are the
			// chunks and disk caches, counted as rows from the device.
			tiers := make([]metrics.TierRows, 0, 4)
			if hasGPU {
				tiers = append(tiers, metrics.TierRows{Tier: metrics.TierGPU, Rows: th.GPU})
			}
			tiers = append(tiers, metrics.TierRows{Tier: metrics.TierCPU, Rows: th.CPU})
			if hasDisk {
				tiers = append(tiers, metrics.TierRows{Tier: metrics.TierDiskCache, Rows: th.Disk})
			}
			tiers = append(tiers, metrics.TierRows{Tier: metrics.TierPacked, Rows: th.Packed})
			ep.Lookup(int64(p.h.Inputs), d.rowBytes, 0, tiers...)
			ep.AddRowsFromDevice(th.Packed) // read as byte ranges of the chunk; disk-cache rows are counted by their row reads
			return nil
		},
		LoadGraph: func(ctx context.Context, i int, g *graphBuf) error {
			// The graph sample was drawn offline (prepare_s); this is the
			// epoch's sampling stage: loading it (stage ③).
			w := ep.StartWorker(metrics.WorkSample)
			t0 := time.Now()
			defer func() { ep.Add(metrics.StageSample, time.Since(t0)); w.Stop() }()
			ref := d.refs[first+i]
			if int64(len(g.raw)) < ref.Len {
				if allocG != nil {
					return allocG
				}
				return fmt.Errorf("diskgnn: graph sample %d of %d bytes, buffer %d", first+i, ref.Len, len(g.raw))
			}
			raw := g.raw[:ref.Len]
			if err := d.sampleR.ReadRange(ctx, ref.Off, raw); err != nil {
				return fmt.Errorf("diskgnn: read graph sample %d: %w", first+i, err)
			}
			if err := decodeSampleView(raw, d.indptr, &g.mb); err != nil {
				return fmt.Errorf("diskgnn: graph sample %d: %w", first+i, err)
			}
			if g.mb.Epoch != pe || g.mb.Index != i {
				return fmt.Errorf("diskgnn: graph sample %d holds epoch %d batch %d, want epoch %d batch %d", first+i, g.mb.Epoch, g.mb.Index, pe, i)
			}
			g.mb.Epoch = epoch // a reused sample trains (and reports progress) in this epoch
			return nil
		},
		Train: func(ctx context.Context, i int, g *graphBuf, x *nn.Tensor) error {
			if x.Rows != len(g.mb.InputNodes) {
				return fmt.Errorf("diskgnn: batch %d: input of %d rows for %d input nodes", i, x.Rows, len(g.mb.InputNodes))
			}
			_, err := env.TrainStep(ep, &g.mb, x)
			return err
		},
		NewP: func() *partial {
			b, err := partialMem.Bytes(int(d.partialBytes))
			if err != nil {
				allocP = fmt.Errorf("diskgnn: partial input: %w", err)
			}
			return &partial{buf: b}
		},
		NewX: func() *nn.Tensor {
			x, err := inputMem.Float32s(int(d.layout.MaxInputs) * d.dim)
			if err != nil {
				allocX = fmt.Errorf("diskgnn: batch input: %w", err)
			}
			return &nn.Tensor{Data: x[:0]}
		},
		NewG: func() *graphBuf {
			b, err := graphMem.Bytes(int(d.maxGraph))
			if err != nil {
				allocG = fmt.Errorf("diskgnn: graph sample buffer: %w", err)
			}
			return &graphBuf{raw: b}
		},
		Wait: func(w time.Duration) { ep.Add(metrics.StageStall, w) },
	}
	_, err := runPipeline(ctx, nb, d.o.queue, !d.o.pipeline, stages)
	st1, sg1, sh1 := d.packed.Stats(), d.samples.Stats(), d.headers.Stats()
	ep.Count("packed_bytes_read", st1.BytesRead-st0.BytesRead)
	ep.Count("address_bytes_read", sh1.BytesRead-sh0.BytesRead)
	ep.Count("graph_bytes_read", sg1.BytesRead-sg0.BytesRead)
	if d.diskc != nil {
		sd1 := d.diskc.Stats()
		ep.Count("disk_cache_bytes_read", sd1.BytesRead-sd0.BytesRead)
		ep.Count("disk_cache_requests", sd1.Requests-sd0.Requests)
	}
	ep.Count("disk_cache_rows", fl.diskRows.Load())
	ep.Count("packed_rows", fl.packedRows.Load())
	ep.Count("segments_read", fl.segmentsRead.Load())
	ep.Count("pool_samples", int64(len(d.refs)))
	ep.Count("segments", int64(d.layout.Stats.Segments))
	ep.Count("segment_size", int64(d.sp.Size))
	ep.Count("disk_cache_entries", d.sp.DiskEntries)
	ep.Count("search_us", d.searchTime.Microseconds())
	ep.Count("pack_ms", d.packTime.Milliseconds())
	return err
}

func (d *diskGNN) Close() error {
	var c kit.Closer
	for _, r := range d.diskR {
		c.Add(r.Close())
	}
	c.Close(d.packedR, d.headerR, d.sampleR, d.diskc, d.packed, d.headers, d.samples)
	d.store = nil
	c.Add(d.cacheMem.Free(), d.devMem.Free())
	c.Remove(d.scratch, d.o.keepFiles)
	return c.Err(Name)
}

var _ train.Describer = (*diskGNN)(nil)
