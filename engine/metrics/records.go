// Package metrics defines what a training run reports and how it measures it:
// the JSON-lines records that `outcore train` writes on stdout (the contract
// between the engine and the experiment runner), stage timers, counters and
// the per-second resource sampler.
package metrics

import "encoding/json"

// Record types, the value of every record's "type" field.
const (
	TypeStart    = "start"    // once, before any work: config, host, backend
	TypeProgress = "progress" // while an epoch runs, at most a few per second
	TypeEpoch    = "epoch"    // once per finished epoch
	TypeSample   = "sample"   // once per second of the run
	TypeLog      = "log"      // a human-readable event (cache sizes, fallbacks, deviations)
	TypeSummary  = "summary"  // once, last line of a run that ended by itself
)

// Outcomes of a run, as recorded in its summary and by the experiment runner.
const (
	OutcomeDone        = "done"
	OutcomeFailed      = "failed"
	OutcomeOOM         = "oom"
	OutcomeCancelled   = "cancelled"
	OutcomeInterrupted = "interrupted"
)

// HostFacts describes the machine a run ran on.
type HostFacts struct {
	Hostname  string `json:"hostname"`
	Kernel    string `json:"kernel"`
	Cores     int    `json:"cores"`
	MemBytes  int64  `json:"mem_bytes"`
	DiskModel string `json:"disk_model,omitempty"`
	GPU       string `json:"gpu"` // "none" when no GPU was found
	GoVersion string `json:"go_version"`
	Version   string `json:"outcore_version"`
	GEMM      string `json:"gemm"` // which matrix-multiply path ran: "openblas" or "gonum"
	// Storage names the file system holding the dataset (the child's) or
	// the data directory (the runner's): osutil.FileSystemID. With
	// Hostname it picks the device profile of the run's I/O floor.
	Storage string `json:"storage,omitempty"`
	// Reclaim is the proactive reclaim the host ran beside the memory
	// limits (osutil.ProactiveReclaim: DAMON pageout), "" when none: it
	// pages out idle page cache whatever the run's cgroup allows.
	Reclaim string `json:"reclaim,omitempty"`
}

// StartRecord opens a run's stream.
type StartRecord struct {
	Type          string            `json:"type"` // "start"
	System        string            `json:"system"`
	Dataset       string            `json:"dataset"`
	Config        json.RawMessage   `json:"config"` // the full run configuration
	Host          HostFacts         `json:"host"`
	IOBackend     string            `json:"io_backend"`           // "uring", "pread" or "mmap"
	MemLimitBytes int64             `json:"mem_limit_bytes"`      // 0 = none
	LimitEnforced bool              `json:"limit_enforced"`       // a memory cgroup holds the process
	Devices       map[string]string `json:"devices"`              // stage -> "cpu" or "gpu": who ran it
	Deviations    []string          `json:"deviations,omitempty"` // where this run departs from its paper
	// Testbed names the paper's host the run emulates (engine/testbed,
	// DESIGN §13); empty for this host as it is.
	Testbed string `json:"testbed,omitempty"`
}

// ProgressRecord reports progress inside an epoch.
type ProgressRecord struct {
	Type    string  `json:"type"` // "progress"
	Epoch   int     `json:"epoch"`
	Batch   int     `json:"batch"`
	Batches int     `json:"batches"`
	Phase   string  `json:"phase,omitempty"` // e.g. "prepare", "train", "eval"
	Elapsed float64 `json:"elapsed_s"`
}

// TierCount counts feature lookups served by one tier of a cache hierarchy.
type TierCount struct {
	Lookups int64 `json:"lookups"`
	Hits    int64 `json:"hits"`
}

// Tier names used in EpochRecord.Tiers (DESIGN §5 "Hit ratio"). Memory
// tiers (gpu, cpu) serve rows held in memory; disk-resident tiers
// (disk_cache, packed, partition_buffer) serve rows a variant read from its
// own on-disk copies for the batch or the buffer state during the epoch,
// which are device reads, not hits; device is a miss everywhere else.
const (
	TierGPU       = "gpu"
	TierCPU       = "cpu"
	TierDiskCache = "disk_cache" // DiskGNN's segmented disk cache: segments read from disk for the batch
	TierPacked    = "packed"     // DiskGNN's packed chunk rows: read from disk with the batch's chunk
	// TierPartition is MariusGNN's partition buffer: partitions read from
	// disk during the epoch (the buffer is released at each epoch's end).
	TierPartition = "partition_buffer"
	TierDevice    = "device" // read from the block device for the batch (a miss everywhere else)
)

// TierSSD is the name the device tier is shown by, in charts, pages and
// CSV headers: the rows read from the SSD (the block device holding the
// features). Records keep "device" (TierDevice) as stored; "device"
// means the GPU everywhere else a user reads it (the device budget).
const TierSSD = "ssd"

// TierLabel is the name a tier is shown by: gpu, cpu, ssd, or a
// disk-resident tier's own name.
func TierLabel(tier string) string {
	if tier == TierDevice {
		return TierSSD
	}
	return tier
}

// CounterRowsFilled is the epoch counter of feature rows a variant read
// from the device ahead of their lookups, into a cache or buffer (Ginex's
// switch, MariusGNN's partition loads): with the device and disk-resident
// tiers' rows, the most rows_from_device can be (DESIGN §5: every row from
// the device is counted once per read that delivered it to a lookup or a
// fill).
const CounterRowsFilled = "rows_filled"

// CounterRowsDelivered is the epoch counter of feature rows engine/storage
// delivered from the device (storage.Stats.DeliveredRows summed over the
// run's feature files, ReadAccount.AddDelivered): the storage layer's own
// count, which rows_from_device must equal (DESIGN §5).
const CounterRowsDelivered = "rows_delivered"

// MemoryTier reports whether a tier serves rows from memory (host or
// device) without a device read in the epoch: its hits are cache hits.
// Every other tier's rows were read from the block device in the epoch
// (DESIGN §5).
func MemoryTier(tier string) bool { return tier == TierGPU || tier == TierCPU }

// HitRatio is the epoch's cache hit ratio (DESIGN §5): lookups served by a
// memory tier over all lookups; false without lookups. Disk-resident tiers
// and the device are not hits, so it is below 1 whenever a looked-up row
// came from the device.
func (e *EpochRecord) HitRatio() (float64, bool) {
	var hits, lookups int64
	for tier, t := range e.Tiers {
		if MemoryTier(tier) {
			hits += t.Hits
		}
		lookups = max(lookups, t.Lookups)
	}
	if lookups == 0 {
		return 0, false
	}
	return float64(hits) / float64(lookups), true
}

// EpochMetricsVersion is the MetricsVersion of the epoch records this
// build writes (DESIGN §5). Version 1 is the original contract; version 2
// added the device reads by file kind and busy/wait; version 3 the
// wall-clock stages (wall_*_s); version 4 the page faults on memory maps
// (map_faults, map_fault_bytes); version 5 watches the host's proactive
// reclaim through the epoch (host_pressure.reclaim).
const EpochMetricsVersion = 5

// ReclaimWatchVersion is the first metrics version whose host pressure
// looked for proactive reclaim through the epoch, not only at the run's
// start.
const ReclaimWatchVersion = 5

// MapFaultsVersion is the first metrics version that counts page faults on
// memory maps.
const MapFaultsVersion = 4

// WallStagesVersion is the first metrics version with wall-clock stages.
const WallStagesVersion = 3

// EpochRecord is one finished epoch (DESIGN §5).
type EpochRecord struct {
	Type   string  `json:"type"` // "epoch"
	Epoch  int     `json:"epoch"`
	Warmup bool    `json:"warmup"`
	EpochS float64 `json:"epoch_s"` // first batch start -> last batch end, evaluation excluded

	SampleS  float64 `json:"sample_s"`
	ExtractS float64 `json:"extract_s"`
	TrainS   float64 `json:"train_s"`
	StallS   float64 `json:"stall_s"` // trainer waiting for data
	// Stages holds variant-specific stage seconds: "inspect_s", "switch_s",
	// "prep_s", "cache_update_s", "forward_s", "backward_s", ...
	Stages map[string]float64 `json:"stages,omitempty"`

	// The wall-clock stage breakdown (DESIGN §5, "Stage vocabulary"): the
	// epoch's critical path as the trainer sees it — computing (train), or
	// waiting while a load, else a sampling, was in progress (load,
	// sample), or waiting on neither (stall). They add up to EpochS, where
	// the stage seconds above sum concurrent workers' time. Since metrics
	// version 3.
	WallSampleS float64 `json:"wall_sample_s"`
	WallLoadS   float64 `json:"wall_load_s"`
	WallTrainS  float64 `json:"wall_train_s"`
	WallStallS  float64 `json:"wall_stall_s"`

	// HostPressure is how busy the host was during the epoch's training
	// (DESIGN §5, "Host pressure"); nil in records written before it was
	// measured.
	HostPressure *HostPressure `json:"host_pressure,omitempty"`
	// DiskService is how the dataset's disk served reads during the epoch
	// (disk_service.go), set beside its storage profile; nil when the
	// device could not be read or in records written before it was
	// measured.
	DiskService *DiskService `json:"disk_service,omitempty"`

	Batches int                  `json:"batches"`
	Tiers   map[string]TierCount `json:"tiers,omitempty"`
	// Counters holds variant-specific event counts ("io_requests",
	// "superbatches", "evictions", ...), added by EpochStats.Count.
	Counters map[string]int64 `json:"counters,omitempty"`

	// MetricsVersion is the version of the contract this record's I/O
	// and worker fields follow: EpochMetricsVersion for records written
	// now; 0 (absent) or 1 for records written before feature and topology
	// bytes, rows_from_device, rows_shared_in_flight and busy/wait existed,
	// whose read_amplification meant bytes_read / bytes_needed.
	MetricsVersion int `json:"metrics_version,omitempty"`

	BytesNeeded int64 `json:"bytes_needed"` // rows looked up × row size (every tier)
	// BytesRead is everything the process read from the block device
	// during the epoch (/proc/self/io read_bytes: every file, page-cache
	// misses of memory maps included; evaluation excluded).
	BytesRead int64 `json:"bytes_read"`
	// FeatureBytesRead and TopologyBytesRead split the device reads by
	// file kind (metrics.ReadAccount): feature files (features.bin and a
	// variant's own copies of feature rows on disk) and topology files
	// (indices.bin, a neighbour cache dumped to disk). Exact for direct
	// I/O; for memory maps, the page-fault reads of the threads that
	// touched the file, measured per thread (DESIGN §5 says which parts
	// are estimates). The rest of BytesRead is other files.
	FeatureBytesRead  int64 `json:"feature_bytes_read"`
	TopologyBytesRead int64 `json:"topology_bytes_read"`
	// RowsFromDevice is the feature rows whose bytes were read from the
	// device during the epoch: for the batches' misses and for cache
	// fills and prefetches alike.
	RowsFromDevice int64 `json:"rows_from_device"`
	// RowsSharedInFlight is lookups served by a read another batch had in
	// flight (counted apart from every tier's hits).
	RowsSharedInFlight int64 `json:"rows_shared_in_flight"`
	// ReadAmplification is FeatureBytesRead / (RowsFromDevice × row
	// size): the device bytes one feature row read from the device costs
	// (≥ 1 for reads of whole blocks or pages; below 1 only when rows
	// share the blocks read). Until metrics version 2 it was BytesRead /
	// BytesNeeded, which mixed cache hits and topology into it.
	ReadAmplification float64 `json:"read_amplification"`

	// Busy and wait worker-seconds of the sampling and extracting stages,
	// summed over each stage's workers (sampling goroutines, extractors,
	// gather threads): busy is their CPU time, wait the rest of the time
	// they belonged to the stage — blocked on queues, on the device, on
	// another worker's reads, or runnable without a core. Busy + wait is
	// the stage's worker-seconds (workers × the stage's wall time for a
	// pool that lives through the epoch).
	SampleBusyS  float64 `json:"sample_busy_s"`
	SampleWaitS  float64 `json:"sample_wait_s"`
	ExtractBusyS float64 `json:"extract_busy_s"`
	ExtractWaitS float64 `json:"extract_wait_s"`

	// IOFloorS is the time the epoch's device reads would take at this
	// host's measured storage capability (DESIGN §11: per request-size
	// class, requests / IOPS against bytes / bandwidth, the binding one),
	// and IOEfficiency is IOFloorS / EpochS: how close the epoch came to
	// what the disk allows. Absent when the host's storage was not
	// measured (`outcore bench device`).
	IOFloorS     *float64 `json:"io_floor_s,omitempty"`
	IOEfficiency *float64 `json:"io_efficiency,omitempty"`
	// IORequests are the epoch's device requests by size class (one count
	// per metrics.RequestClassBytes) and IOBytes their bytes (the run's
	// read account): what IOFloorS is computed from, kept so that the
	// floor of an epoch recorded before its host's storage was measured is
	// filled in once a profile of it exists (engine/devprofile). Absent in
	// records written before they were kept.
	IORequests []int64 `json:"io_requests,omitempty"`
	IOBytes    int64   `json:"io_bytes,omitempty"`
	// MapFaults are the epoch's major page faults on memory maps and
	// MapFaultBytes the device bytes they read (within IOBytes; the run's
	// read account, ReadAccount.AddFaults): the floor counts them as
	// MapFaults requests of MapFaultBytes / MapFaults bytes each, at a
	// depth of MapFaultThreads (the threads that could wait on them at
	// once; 0: unknown). A thread that faults on a page another thread is
	// already reading counts a fault and no bytes, so MapFaultBytes can be
	// below a page per fault, by at most that depth. Since metrics version 4.
	MapFaults       int64 `json:"map_faults,omitempty"`
	MapFaultBytes   int64 `json:"map_fault_bytes,omitempty"`
	MapFaultThreads int   `json:"map_fault_threads,omitempty"`

	// Compute is the run's compute mode (DESIGN §10): "cpu", "none" or
	// "model:PROFILE"; absent in records written before it existed (cpu).
	// Outside cpu no model is trained: train_loss and train_acc are 0 and
	// mean n/a, and the epoch is never evaluated.
	Compute string `json:"compute,omitempty"`

	TrainLoss float64 `json:"train_loss"`
	TrainAcc  float64 `json:"train_acc"`
	ValAcc    float64 `json:"val_acc"`
	TestAcc   float64 `json:"test_acc"`
	// Evaluated is false for epochs skipped by eval_every; their val_acc,
	// test_acc and eval_s are 0, not measurements.
	Evaluated bool    `json:"evaluated"`
	EvalS     float64 `json:"eval_s"`
	WallS     float64 `json:"wall_s"` // seconds since the run started, at the end of this epoch

	// Extra holds the record's JSON keys that no field above declares
	// (record_json.go): a metric declared only in engine/metrics/fields is
	// read from here by its key. Nil when there are none.
	Extra map[string]json.RawMessage `json:"-"`
}

// SampleRecord is one per-second resource sample.
type SampleRecord struct {
	Type          string   `json:"type"`    // "sample"
	T             float64  `json:"t"`       // seconds since the run started
	CPUPercent    float64  `json:"cpu_pct"` // of one core; 200 = two cores busy
	IOWaitPercent float64  `json:"iowait_pct"`
	RSSBytes      int64    `json:"rss_bytes"`
	CgroupBytes   int64    `json:"cgroup_bytes"` // memory cgroup usage incl. page cache; 0 without a cgroup
	DiskReadMBps  float64  `json:"disk_read_mbps"`
	GPUUtil       *float64 `json:"gpu_util_pct,omitempty"`
	GPUMemBytes   *int64   `json:"gpu_mem_bytes,omitempty"`
	// PCIe throughput in MB/s, GPU to host (tx) and host to GPU (rx),
	// when the GPU sampler reads it (GPUPCIeSampler)
	GPUPCIeTxMBps *float64 `json:"gpu_pcie_tx_mbps,omitempty"`
	GPUPCIeRxMBps *float64 `json:"gpu_pcie_rx_mbps,omitempty"`
	// Host is the host's pressure over the second (load average, other
	// processes' CPU, steal, PSI); nil where none could be read.
	Host *HostPressure `json:"host,omitempty"`
}

// DeviationLogPrefix starts the warn log line of a deviation from the
// paper decided while a run prepares (train.Env.Deviate); the runner
// stores each as it comes, so a run killed before its summary keeps them.
const DeviationLogPrefix = "deviation: "

// LogRecord is a human-readable event.
type LogRecord struct {
	Type  string  `json:"type"`  // "log"
	Level string  `json:"level"` // "info", "warn", "error"
	Msg   string  `json:"msg"`
	T     float64 `json:"t"`
}

// SummaryRecord closes a run that ended by itself.
type SummaryRecord struct {
	Type            string  `json:"type"` // "summary"
	Outcome         string  `json:"outcome"`
	Epochs          int     `json:"epochs"`
	BestEpoch       int     `json:"best_epoch"`
	BestValAcc      float64 `json:"best_val_acc"`
	TestAcc         float64 `json:"test_acc"`     // at the epoch of best val_acc
	MeanEpochS      float64 `json:"mean_epoch_s"` // over non-warm-up epochs
	TotalS          float64 `json:"total_s"`
	PeakRSSBytes    int64   `json:"peak_rss_bytes"`
	PeakCgroupBytes int64   `json:"peak_cgroup_bytes"`
	// PrepareS is the time of the variant's Prepare (offline phases);
	// PrepareStages splits it by phase ("inspect_s", "pack_s", ...).
	PrepareS      float64            `json:"prepare_s"`
	PrepareStages map[string]float64 `json:"prepare_stages,omitempty"`
	// HostPressure is how busy the host was from the start record to the
	// end of the run (DESIGN §5, "Host pressure").
	HostPressure *HostPressure `json:"host_pressure,omitempty"`
	// Deviations is every departure from the variant's paper, including
	// those decided while preparing (sizes that did not fit the budget, the
	// model step held outside it); the start record has only those known
	// before.
	Deviations []string `json:"deviations,omitempty"`
	Error      string   `json:"error,omitempty"`
	// Memory is the run's memory contract as it was held (DESIGN §2 "One memory contract"):
	// the host and device budgets, the device tiers the variant placed in
	// the device budget and the model step held outside both.
	Memory *MemoryAccount `json:"memory,omitempty"`
	// Testbed is the start record's: the paper's host the run emulates,
	// empty for this host as it is.
	Testbed string `json:"testbed,omitempty"`
	// FeatureDiskBytes is the disk space the variant's own copies of
	// feature rows took once Prepare wrote them (DiskGNN's packed chunks
	// and disk caches: its Fig. 12 and Fig. 13), and FeatureDiskBlowup
	// that over the dataset's feature table (the figures' "disk space
	// blowup"); DiskFiles is every file the variant wrote for training, by
	// name, in bytes (the feature copies and the rest: chunk addresses,
	// graph samples). Nil (absent) for a variant that records none
	// (train.Env.HoldDisk).
	FeatureDiskBytes  *int64           `json:"feature_disk_bytes,omitempty"`
	FeatureDiskBlowup *float64         `json:"feature_disk_blowup,omitempty"`
	DiskFiles         map[string]int64 `json:"disk_files,omitempty"`
}

// MemoryAccount is what a run's memory held, beside its peaks (DESIGN §2 "One memory contract"
// "One memory contract"): the allowance is host budget + device budget +
// model step, the same for every variant at a grid point.
type MemoryAccount struct {
	HostBudgetBytes   int64 `json:"host_budget_bytes"`   // mem_limit (0 = none)
	DeviceBudgetBytes int64 `json:"device_budget_bytes"` // device_mem
	// DeviceTiers are the variant's device tiers (GPU caches, device-side
	// buffers and batch inputs) by name; DeviceTierBytes their sum. They
	// live in host memory here, in the run's cgroup beside the host budget.
	DeviceTiers     map[string]int64 `json:"device_tiers,omitempty"`
	DeviceTierBytes int64            `json:"device_tier_bytes"`
	// ModelStepBytes is the profiled model step held outside the host
	// budget (model_mem "device"; 0 when charged to the host).
	ModelStepBytes int64 `json:"model_step_bytes"`
}

// AllowanceBytes is the run's total allowance: host budget + device budget
// + model step (0 without a host budget).
func (m *MemoryAccount) AllowanceBytes() int64 {
	if m == nil || m.HostBudgetBytes <= 0 {
		return 0
	}
	return m.HostBudgetBytes + m.DeviceBudgetBytes + m.ModelStepBytes
}

// HostPeakBytes is the host part of a cgroup peak: the peak less the
// device tiers and the model step it also held (never below 0).
func (m *MemoryAccount) HostPeakBytes(cgroupPeak int64) int64 {
	if m == nil {
		return cgroupPeak
	}
	return max(0, cgroupPeak-m.DeviceTierBytes-m.ModelStepBytes)
}
