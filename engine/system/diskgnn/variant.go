package diskgnn

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"outcore/engine/metrics"
	"outcore/engine/train"
)

// Name is the registered name of the DiskGNN variant.
const Name = "diskgnn"

func init() {
	train.RegisterVariant(train.Variant{
		Name:    Name,
		Paper:   "DiskGNN: Bridging I/O Efficiency and Model Accuracy for Out-of-Core GNN Training (arXiv:2405.05231)",
		Summary: "offline sampling, four-level feature store (device/host caches, segmented disk cache, packed chunks), batched packing, four-stage pipeline",
		Options: []train.Option{
			{Key: "disk_budget", Type: train.OptString, Default: "unlimited",
				Help: "disk space for the disk cache and packed chunks (Algorithm 2's c): unlimited (the paper's main runs: every cold row packed), <N>x = N × the feature table per epoch of samples (Fig. 11), or bytes (\"20GiB\", all epochs)"},
			{Key: "gpu_cache", Type: train.OptString, Default: "auto",
				Help: "device cache held outside the host budget: auto = as many rows as the CPU cache (the artifact's runs), bytes (\"256MiB\"), a percentage of the feature table, or 0"},
			{Key: "cpu_cache", Type: train.OptBytes, Default: "from the budget",
				Help: "host cache size (default: what the budget leaves after the pipeline's buffers, §4)"},
			{Key: "io_threads", Type: train.OptInt, Default: "4", Help: "io_uring threads reading the disk cache, one ring each (§6)"},
			{Key: "pipeline_queue", Type: train.OptInt, Default: "2", Help: "size limit of each pipeline queue (§6)"},
			{Key: "pipeline", Type: train.OptBool, Default: "true", Help: "false runs the four stages one after the other on one goroutine (Table 5's sequential baseline)"},
			{Key: "hashes", Type: train.OptInt, Default: "2", Help: "MinHash functions of the disk-cache reordering (§5.1)"},
			{Key: "samplers", Type: train.OptInt, Default: "number of CPUs", Help: "offline sampling workers"},
			{Key: "block_size", Type: train.OptBytes, Default: "4KiB", Help: "read granularity of the disk-cache reads (the artifact reads 4 KiB pages)"},
			{Key: "partition", Type: train.OptBytes, Default: "feature table / 8, at most budget / 32", Help: "rows read per batched-packing sweep step (§5.2; the artifact uses 8 partitions)"},
			{Key: "profile_batches", Type: train.OptInt, Default: "8", Help: "mini-batches sampled to measure the model step"},
			{Key: "keep_files", Type: train.OptBool, Default: "false", Help: "keep the graph samples, packed chunks and disk caches after the run"},
		},
		MinMemory: MinMemory,
		New:       func(cfg train.Config) (train.System, error) { return newDiskGNN(cfg) },
		Order:     50,
		NestedStages: map[string]string{
			"load_features_s": metrics.StageExtract, "assemble_s": metrics.StageExtract,
			"packed_read_s": metrics.StageExtract, "disk_cache_read_s": metrics.StageExtract,
		},
		// Offline sampling stores the reference's batches and the pipeline
		// trains them in order: the defaults are in order.
		InOrder: map[string]string{},
	})
}

// options are the parsed variant options.
type options struct {
	diskBudget string
	diskX      float64 // > 0: multiple of the feature table per epoch
	diskBytes  int64   // > 0: absolute; both 0: unlimited
	gpuAuto    bool
	gpuBytes   int64
	gpuPct     float64 // > 0: percentage of the feature table
	cpuBytes   int64   // -1 = from the budget
	ioThreads  int
	queue      int
	queueSet   bool // pipeline_queue was given: the plan keeps it
	pipeline   bool
	hashes     int
	samplers   int
	blockSize  int64
	partition  int64 // 0 = default
	profile    int
	keepFiles  bool
}

func parseOptions(cfg train.Config) (options, error) {
	o := train.Opts(cfg.Options)
	op := options{diskBudget: strings.TrimSpace(o.String("disk_budget", "unlimited"))}
	var err error
	get := func(name string, def int, dst *int) {
		if err == nil {
			*dst, err = o.Int(name, def)
		}
	}
	get("io_threads", 4, &op.ioThreads)
	get("pipeline_queue", 2, &op.queue)
	_, op.queueSet = cfg.Options["pipeline_queue"]
	get("hashes", 2, &op.hashes)
	get("samplers", runtime.NumCPU(), &op.samplers)
	get("profile_batches", 8, &op.profile)
	if err == nil {
		op.pipeline, err = o.Bool("pipeline", true)
	}
	if err == nil {
		op.keepFiles, err = o.Bool("keep_files", false)
	}
	if err == nil {
		op.cpuBytes, err = o.Bytes("cpu_cache", 0, -1)
	}
	if err == nil {
		op.blockSize, err = o.Bytes("block_size", 0, 4096)
	}
	if err == nil {
		op.partition, err = o.Bytes("partition", 0, 0)
	}
	if err != nil {
		return op, err
	}
	bad := func(f string, a ...any) (options, error) {
		return op, fmt.Errorf("%w: diskgnn: "+f, append([]any{train.ErrConfig}, a...)...)
	}
	switch d := strings.ToLower(op.diskBudget); {
	case d == "unlimited" || d == "":
	case strings.HasSuffix(d, "x"):
		x, perr := strconv.ParseFloat(strings.TrimSuffix(d, "x"), 64)
		if perr != nil || x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return bad("disk_budget %q: want unlimited, <N>x (N > 0) or bytes", op.diskBudget)
		}
		op.diskX = x
	default:
		b, perr := train.ParseMemLimit(d, 0)
		if perr != nil || b <= 0 {
			return bad("disk_budget %q: want unlimited, <N>x (N > 0) or bytes", op.diskBudget)
		}
		op.diskBytes = b
	}
	switch g := strings.TrimSpace(o.String("gpu_cache", "auto")); {
	case g == "auto":
		op.gpuAuto = true
	case strings.HasSuffix(g, "%"):
		pct, perr := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(g, "%")), 64)
		if perr != nil || pct < 0 || pct > 100 {
			return bad("gpu_cache %q: want auto, bytes or a percentage of the feature table (0–100%%)", g)
		}
		op.gpuPct = pct
	default:
		b, perr := train.ParseMemLimit(g, 0)
		if perr != nil {
			return bad("gpu_cache %q: want auto, bytes or a percentage of the feature table", g)
		}
		op.gpuBytes = b
	}
	switch {
	case op.ioThreads < 1 || op.ioThreads > 64:
		return bad("io_threads %d, want 1..64", op.ioThreads)
	case op.queue < 1:
		return bad("pipeline_queue %d, want >= 1", op.queue)
	case op.hashes < 1 || op.hashes > 16:
		return bad("hashes %d, want 1..16", op.hashes)
	case op.samplers < 1 || op.profile < 1:
		return bad("samplers and profile_batches must be >= 1")
	case op.blockSize < 512 || op.blockSize&(op.blockSize-1) != 0:
		return bad("block_size %d, want a power of two >= 512", op.blockSize)
	case op.partition < 0:
		return bad("partition %d", op.partition)
	}
	return op, nil
}

// diskBudgetRows is Algorithm 2's c in rows for a run of epochs epochs.
func (o options) diskBudgetRows(featureBytes, rowBytes int64, epochs int) int64 {
	switch {
	case o.diskX > 0:
		rows := o.diskX * float64(featureBytes) * float64(epochs) / float64(rowBytes)
		if rows >= math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(rows)
	case o.diskBytes > 0:
		return o.diskBytes / rowBytes
	}
	return math.MaxInt64
}

// gpuRows is the device cache in rows (-1: as many as the CPU cache).
func (o options) gpuRows(featureBytes, rowBytes int64) int64 {
	switch {
	case o.gpuAuto:
		return -1
	case o.gpuPct > 0:
		return int64(o.gpuPct / 100 * float64(featureBytes) / float64(rowBytes))
	}
	return o.gpuBytes / rowBytes
}

// trainReaderBytes is the staging of the storage readers an epoch holds:
// the graph samples, the chunks' addresses and packed rows (sequential), and io_threads
// disk-cache readers unless the disk budget is unlimited (then Algorithm 2
// picks segments of one sample, which share nothing: there is no disk
// cache).
func (o options) trainReaderBytes() int64 {
	b := int64(3 * seqArena)
	if o.diskX != 0 || o.diskBytes != 0 {
		b += int64(o.ioThreads) * randArena
	}
	return b
}
