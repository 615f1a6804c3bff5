package fields

import "outcore/engine/metrics"

type rec = metrics.EpochRecord

// f and n read a float or an integer field of the record, always measured.
func f(get func(*rec) float64) func(*rec) (float64, bool) {
	return func(e *rec) (float64, bool) { return get(e), true }
}

func n(get func(*rec) int64) func(*rec) (float64, bool) {
	return func(e *rec) (float64, bool) { return float64(get(e)), true }
}

// opt reads an optional number: absent (nil) is not measured.
func opt(get func(*rec) *float64) func(*rec) (float64, bool) {
	return func(e *rec) (float64, bool) {
		if p := get(e); p != nil {
			return *p, true
		}
		return 0, false
	}
}

// host reads a number of the epoch's host pressure (not recorded: nil).
func host(get func(*metrics.HostPressure) *float64) func(*rec) (float64, bool) {
	return func(e *rec) (float64, bool) {
		if e.HostPressure == nil {
			return 0, false
		}
		if p := get(e.HostPressure); p != nil {
			return *p, true
		}
		return 0, false
	}
}

// disk reads a number of how the dataset's disk served the epoch (not
// measured: no disk service, or an optional part of it nil), as host does
// the host pressure.
func disk(get func(*metrics.DiskService) *float64) func(*rec) (float64, bool) {
	return func(e *rec) (float64, bool) {
		if e.DiskService == nil {
			return 0, false
		}
		if p := get(e.DiskService); p != nil {
			return *p, true
		}
		return 0, false
	}
}

// count is a count of the disk service as a number.
func count(n int64) *float64 {
	v := float64(n)
	return &v
}

// Epochs declares every epoch measurement (DESIGN §5), in the order of the
// epoch CSV's columns (after the run's cell, epoch, warmup and
// metrics_version; before the open-ended stage_, tier_ and counter_
// columns, whose names come from the records).
var Epochs = []Field{
	{Key: "epoch_s", Unit: "s", Mean: true, Doc: "first batch start to last batch end, evaluation excluded",
		Get: f(func(e *rec) float64 { return e.EpochS })},
	{Key: "sample_s", Unit: "s", Mean: true, Doc: "sampling stage seconds, summed over its workers",
		Get: f(func(e *rec) float64 { return e.SampleS })},
	{Key: "extract_s", Unit: "s", Mean: true, Doc: "feature-extraction stage seconds, summed over its workers",
		Get: f(func(e *rec) float64 { return e.ExtractS })},
	{Key: "train_s", Unit: "s", Mean: true, Doc: "training stage seconds",
		Get: f(func(e *rec) float64 { return e.TrainS })},
	{Key: "stall_s", Unit: "s", Mean: true, Doc: "the trainer waiting for data",
		Get: f(func(e *rec) float64 { return e.StallS })},
	{Key: "batches", Unit: "count", Int: true, Doc: "mini-batches trained",
		Get: n(func(e *rec) int64 { return int64(e.Batches) })},
	{Key: "bytes_needed", Unit: "bytes", Int: true, Doc: "rows looked up × row size, every tier",
		Get: n(func(e *rec) int64 { return e.BytesNeeded })},
	{Key: "bytes_read", Unit: "bytes", Int: true, Mean: true, Doc: "everything the process read from the block device (/proc/self/io)",
		Get: n(func(e *rec) int64 { return e.BytesRead })},
	{Key: "feature_bytes_read", Unit: "bytes", Int: true, Since: 2, Mean: true, Doc: "device reads of feature files",
		Get: n(func(e *rec) int64 { return e.FeatureBytesRead })},
	{Key: "topology_bytes_read", Unit: "bytes", Int: true, Since: 2, Mean: true, Doc: "device reads of topology files",
		Get: n(func(e *rec) int64 { return e.TopologyBytesRead })},
	{Key: "rows_from_device", Unit: "rows", Int: true, Since: 2, Mean: true, Doc: "feature rows whose bytes were read from the device",
		Get: n(func(e *rec) int64 { return e.RowsFromDevice })},
	{Key: "rows_shared_in_flight", Unit: "rows", Int: true, Since: 2, Mean: true, Doc: "lookups served by a read another batch had in flight",
		Get: n(func(e *rec) int64 { return e.RowsSharedInFlight })},
	{Key: "read_amplification", Unit: "ratio", Since: 2, Doc: "feature bytes read / (rows from the device × row size)",
		Get: f(func(e *rec) float64 { return e.ReadAmplification })},
	{Key: "bytes_read_per_byte_needed", Unit: "ratio", Derived: true, Doc: "bytes_read / bytes_needed (read_amplification before metrics version 2)",
		Get: f(func(e *rec) float64 { return metrics.BytesReadPerNeeded(e.BytesRead, e.BytesNeeded) })},
	{Key: "other_bytes_read", Unit: "bytes", Int: true, Since: 2, Mean: true, NoCSV: true, Derived: true,
		Doc: "device reads of files other than features and topology",
		Get: n(func(e *rec) int64 { return max(0, e.BytesRead-e.FeatureBytesRead-e.TopologyBytesRead) })},
	{Key: "sample_busy_s", Unit: "s", Since: 2, Mean: true, Doc: "CPU time of the sampling workers",
		Get: f(func(e *rec) float64 { return e.SampleBusyS })},
	{Key: "sample_wait_s", Unit: "s", Since: 2, Mean: true, Doc: "the sampling workers' time not on a CPU",
		Get: f(func(e *rec) float64 { return e.SampleWaitS })},
	{Key: "extract_busy_s", Unit: "s", Since: 2, Mean: true, Doc: "CPU time of the extracting workers",
		Get: f(func(e *rec) float64 { return e.ExtractBusyS })},
	{Key: "extract_wait_s", Unit: "s", Since: 2, Mean: true, Doc: "the extracting workers' time not on a CPU",
		Get: f(func(e *rec) float64 { return e.ExtractWaitS })},
	{Key: "wall_sample_s", Unit: "s", Since: metrics.WallStagesVersion, Mean: true, Doc: "wall clock: waiting while a sampling was in progress",
		Get: f(func(e *rec) float64 { return e.WallSampleS })},
	{Key: "wall_load_s", Unit: "s", Since: metrics.WallStagesVersion, Mean: true, Doc: "wall clock: waiting while a load was in progress",
		Get: f(func(e *rec) float64 { return e.WallLoadS })},
	{Key: "wall_train_s", Unit: "s", Since: metrics.WallStagesVersion, Mean: true, Doc: "wall clock: computing",
		Get: f(func(e *rec) float64 { return e.WallTrainS })},
	{Key: "wall_stall_s", Unit: "s", Since: metrics.WallStagesVersion, Mean: true, Doc: "wall clock: waiting on neither",
		Get: f(func(e *rec) float64 { return e.WallStallS })},
	{Key: "host_load1", Derived: true, Doc: "host pressure: 1-minute load average",
		Get: host(func(h *metrics.HostPressure) *float64 { return &h.Load1 })},
	{Key: "host_others_cpu_pct", Unit: "%", Derived: true, Doc: "host pressure: other processes' CPU, of all cores",
		Get: host(func(h *metrics.HostPressure) *float64 { return &h.OthersCPUPct })},
	{Key: "host_steal_pct", Unit: "%", Derived: true, Doc: "host pressure: CPU stolen by the hypervisor, of all cores",
		Get: host(func(h *metrics.HostPressure) *float64 { return &h.StealPct })},
	{Key: "psi_cpu_pct", Unit: "%", Derived: true, Doc: "host pressure: PSI cpu some",
		Get: host(func(h *metrics.HostPressure) *float64 { return h.PSICPUPct })},
	{Key: "psi_io_pct", Unit: "%", Derived: true, Doc: "host pressure: PSI io some",
		Get: host(func(h *metrics.HostPressure) *float64 { return h.PSIIOPct })},
	{Key: "psi_memory_pct", Unit: "%", Derived: true, Doc: "host pressure: PSI memory some",
		Get: host(func(h *metrics.HostPressure) *float64 { return h.PSIMemoryPct })},
	{Key: "train_loss", Trained: true, Doc: "mean training loss",
		Get: f(func(e *rec) float64 { return e.TrainLoss })},
	{Key: "train_acc", Unit: "ratio", Trained: true, Doc: "training accuracy",
		Get: f(func(e *rec) float64 { return e.TrainAcc })},
	{Key: "val_acc", Unit: "ratio", Trained: true, Doc: "validation accuracy (0 when not evaluated)",
		Get: f(func(e *rec) float64 { return e.ValAcc })},
	{Key: "test_acc", Unit: "ratio", Trained: true, Doc: "test accuracy (0 when not evaluated)",
		Get: f(func(e *rec) float64 { return e.TestAcc })},
	{Key: "eval_s", Unit: "s", Doc: "evaluation time",
		Get: f(func(e *rec) float64 { return e.EvalS })},
	{Key: "wall_s", Unit: "s", Doc: "seconds since the run started, at the end of the epoch",
		Get: f(func(e *rec) float64 { return e.WallS })},
	{Key: "io_floor_s", Unit: "s", Mean: true, Doc: "the epoch's device reads at the host's measured storage capability (DESIGN §11)",
		Get: opt(func(e *rec) *float64 { return e.IOFloorS })},
	{Key: "io_efficiency", Unit: "ratio", Mean: true, Doc: "io_floor_s / epoch_s",
		Get: opt(func(e *rec) *float64 { return e.IOEfficiency })},
	{Key: "map_faults", Unit: "count", Int: true, Since: metrics.MapFaultsVersion, Mean: true, Doc: "major page faults on memory maps (each a device request of the kernel's size)",
		Get: n(func(e *rec) int64 { return e.MapFaults })},
	{Key: "map_fault_bytes", Unit: "bytes", Int: true, Since: metrics.MapFaultsVersion, Mean: true, Doc: "device bytes the page faults on memory maps read",
		Get: n(func(e *rec) int64 { return e.MapFaultBytes })},
	{Key: "map_fault_threads", Unit: "count", Int: true, Since: metrics.MapFaultsVersion, Doc: "threads that could wait on page faults at once: the faults' depth in the I/O floor (0: unknown, the device's best)",
		Get: n(func(e *rec) int64 { return int64(e.MapFaultThreads) })},
	{Key: "disk_reads", Unit: "count", Int: true, Derived: true, Doc: "disk service: reads the dataset's block device served, every process's (DESIGN §5 \"Disk service\")",
		Get: disk(func(d *metrics.DiskService) *float64 { return count(d.Reads) })},
	{Key: "disk_read_bytes", Unit: "bytes", Int: true, Derived: true, Doc: "disk service: bytes those reads read",
		Get: disk(func(d *metrics.DiskService) *float64 { return count(d.ReadBytes) })},
	{Key: "disk_read_ms", Derived: true, Doc: "disk service: a read's mean time in the device and its queue, in milliseconds",
		Get: disk(func(d *metrics.DiskService) *float64 { return &d.ReadMs })},
	{Key: "disk_depth", Derived: true, Doc: "disk service: mean reads in flight while the device was busy",
		Get: disk(func(d *metrics.DiskService) *float64 { return &d.Depth })},
	{Key: "disk_busy_s", Unit: "s", Derived: true, Doc: "disk service: time the device had a request in flight",
		Get: disk(func(d *metrics.DiskService) *float64 { return &d.BusyS })},
	{Key: "disk_profile_read_ms", Derived: true, Doc: "disk service: the storage profile's time for a read of that size at that depth, in milliseconds (empty: not judged)",
		Get: disk(func(d *metrics.DiskService) *float64 { return d.ProfileMs })},
	{Key: "disk_slowdown", Derived: true, Doc: "disk service: disk_read_ms / disk_profile_read_ms (empty: not judged)",
		Get: disk(func(d *metrics.DiskService) *float64 { return d.Slowdown })},
	{Key: "disk_lost_s", Unit: "s", Derived: true, Doc: "disk service: the most the slowdown can have cost the epoch, disk_busy_s × (1 − 1/disk_slowdown) (empty: not judged)",
		Get: disk(func(d *metrics.DiskService) *float64 {
			if d.Slowdown == nil {
				return nil
			}
			v := metrics.DiskLostS(d)
			return &v
		})},
	{Key: "host_reclaim", Int: true, Derived: true, Since: metrics.ReclaimWatchVersion, Doc: "host pressure: 1 when the host's proactive reclaim (DAMON pageout, named in host_pressure.reclaim) was on at some look in the epoch, 0 when never",
		Get: host(func(h *metrics.HostPressure) *float64 {
			on := 0.0
			if h.Reclaim != "" {
				on = 1
			}
			return &on
		})},
}
