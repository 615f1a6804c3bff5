package report

import (
	"fmt"

	"outcore/engine/metrics"
	"outcore/store"
)

// RunChartIDs lists the run page's charts in page order.
var RunChartIDs = []string{"run-stages", "run-accuracy", "run-reads", "run-workers", "run-util", "run-memory", "run-disk"}

// RunCharts builds the run page's charts: stage seconds per epoch, accuracy
// per epoch, and the per-second CPU/GPU/iowait, memory and disk timeline
// (GNNDrive Fig. 3, 11).
func RunCharts(epochs []store.Epoch, samples []store.Sample) []Chart {
	return []Chart{runStages(epochs), runAccuracy(epochs), runReads(epochs), runWorkers(epochs), runUtil(samples), runMemory(samples), runDisk(samples)}
}

// RunChart builds one of the run page's charts by id.
func RunChart(id string, epochs []store.Epoch, samples []store.Sample) (Chart, bool) {
	for _, ch := range RunCharts(epochs, samples) {
		if ch.ID == id {
			return ch, true
		}
	}
	return Chart{}, false
}

func one(x float64, label string, y float64) Point {
	return Point{X: x, Label: label, Y: &y, N: 1, Status: StatusOK, Min: y, Max: y}
}

func runStages(epochs []store.Epoch) Chart {
	ch := Chart{ID: "run-stages", Title: "Stage breakdown per epoch", XLabel: "epoch", YLabel: "seconds",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Seconds each stage spent in each epoch as the run measured them (one run, n = 1). Stages of pipelined variants overlap, so a bar can exceed the epoch time; warm-up epochs are marked (w)."}
	if len(epochs) == 0 {
		ch.Empty = "No epoch has finished yet."
		return ch
	}
	recs := make([]metrics.EpochRecord, len(epochs))
	for i, e := range epochs {
		recs[i] = e.EpochRecord
		label := fmt.Sprintf("%d", e.EpochRecord.Epoch)
		if e.Warmup {
			label += " (w)"
		}
		ch.Categories = append(ch.Categories, label)
	}
	for i, name := range NewComparison([]RunData{{Digest: DigestEpochs(recs)}}).stageNames() {
		col, mk := style(i + 1)
		s := Series{Name: name[:len(name)-2], Color: col, Marker: mk, Stack: "stages"}
		for j, e := range epochs {
			s.Points = append(s.Points, one(float64(j), ch.Categories[j], stageValue(e.EpochRecord, name)))
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// perEpochStack is a stacked bar per epoch, one layer per metric, over
// the epochs recorded with metrics version 2 (DESIGN §5).
func perEpochStack(ch Chart, epochs []store.Epoch, layers []string, f func(layer string, e metrics.EpochRecord) float64) Chart {
	if len(epochs) == 0 {
		ch.Empty = "No epoch has finished yet."
		return ch
	}
	var eps []store.Epoch
	for _, e := range epochs {
		if e.MetricsVersion >= 2 {
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 {
		ch.Empty = "This run was recorded before metrics version 2 (DESIGN §5), which measures the device reads by file kind and workers' busy and wait time; its epochs have no such numbers (the epochs CSV keeps bytes_read / bytes_needed as bytes_read_per_byte_needed)."
		return ch
	}
	for _, e := range eps {
		label := fmt.Sprintf("%d", e.EpochRecord.Epoch)
		if e.Warmup {
			label += " (w)"
		}
		ch.Categories = append(ch.Categories, label)
	}
	for i, name := range layers {
		col, mk := style(i + 1)
		s := Series{Name: name, Color: col, Marker: mk, Stack: ch.ID}
		for j, e := range eps {
			s.Points = append(s.Points, one(float64(j), ch.Categories[j], f(name, e.EpochRecord)))
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// runReads is the device reads of each epoch by file kind.
func runReads(epochs []store.Epoch) Chart {
	ch := Chart{ID: "run-reads", Title: "Disk read per epoch by file kind", XLabel: "epoch", YLabel: "MiB",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Bytes each epoch read from the block device (one run, n = 1): feature files, topology files and the rest of the process's reads; evaluation excluded. Direct I/O is counted exactly, memory-mapped files by the page-fault reads of the threads that touch them (DESIGN §5)."}
	return perEpochStack(ch, epochs, []string{"features", "topology", "other"}, func(l string, e metrics.EpochRecord) float64 {
		switch l {
		case "features":
			return float64(e.FeatureBytesRead) / (1 << 20)
		case "topology":
			return float64(e.TopologyBytesRead) / (1 << 20)
		}
		return float64(max(0, e.BytesRead-e.FeatureBytesRead-e.TopologyBytesRead)) / (1 << 20)
	})
}

// runWorkers is each epoch's busy and wait worker-seconds of sampling and
// extracting.
func runWorkers(epochs []store.Epoch) Chart {
	ch := Chart{ID: "run-workers", Title: "Samplers and extractors: busy and waiting", XLabel: "epoch", YLabel: "worker-seconds",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Worker-seconds of each epoch's sampling and extracting stages, summed over their workers (one run, n = 1): busy is CPU time, wait the rest of the time the workers belonged to the stage — blocked on queues, the device, other workers' reads, or waiting for a core (DESIGN §5)."}
	return perEpochStack(ch, epochs, []string{"sample busy", "sample wait", "extract busy", "extract wait"}, func(l string, e metrics.EpochRecord) float64 {
		switch l {
		case "sample busy":
			return e.SampleBusyS
		case "sample wait":
			return e.SampleWaitS
		case "extract busy":
			return e.ExtractBusyS
		}
		return e.ExtractWaitS
	})
}

func runAccuracy(epochs []store.Epoch) Chart {
	ch := Chart{ID: "run-accuracy", Title: "Accuracy and loss per epoch", XLabel: "epoch", YLabel: "accuracy / loss",
		XType: "value", YType: "value", Kind: "line",
		Note: "Training loss and train, validation and test accuracy after each epoch (one run, n = 1)."}
	if len(epochs) == 0 {
		ch.Empty = "No epoch has finished yet."
		return ch
	}
	type metric struct {
		name      string
		f         func(metrics.EpochRecord) float64
		needsEval bool
	}
	for i, m := range []metric{
		{"train loss", func(e metrics.EpochRecord) float64 { return e.TrainLoss }, false},
		{"train acc", func(e metrics.EpochRecord) float64 { return e.TrainAcc }, false},
		{"val acc", func(e metrics.EpochRecord) float64 { return e.ValAcc }, true},
		{"test acc", func(e metrics.EpochRecord) float64 { return e.TestAcc }, true},
	} {
		col, mk := style(i + 1)
		s := Series{Name: m.name, Color: col, Marker: mk}
		for _, e := range epochs {
			if m.needsEval && !Evaluated(e.EpochRecord) {
				continue // skipped by eval_every: no accuracy to show
			}
			s.Points = append(s.Points, one(float64(e.EpochRecord.Epoch), fmt.Sprintf("epoch %d", e.EpochRecord.Epoch), m.f(e.EpochRecord)))
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// timeline makes one line per metric of the per-second samples.
func timeline(id, title, ylabel, note string, samples []store.Sample, lines []sampleMetric) Chart {
	ch := Chart{ID: id, Title: title, XLabel: "time since run start (s)", YLabel: ylabel,
		XType: "value", YType: "value", Kind: "line", Note: note}
	if len(samples) == 0 {
		ch.Empty = "No resource sample yet (one arrives every second while the run runs)."
		return ch
	}
	for i, m := range lines {
		col, mk := style(i + 1)
		s := Series{Name: m.name, Color: col, Marker: mk}
		for _, smp := range samples {
			if v, ok := m.f(smp.SampleRecord); ok {
				s.Points = append(s.Points, one(smp.T, fmt.Sprintf("t = %.0f s", smp.T), v))
			}
		}
		if len(s.Points) > 0 {
			ch.Series = append(ch.Series, s)
		}
	}
	return ch
}

type sampleMetric struct {
	name string
	f    func(metrics.SampleRecord) (float64, bool)
}

func runUtil(samples []store.Sample) Chart {
	return timeline("run-util", "CPU, GPU and iowait", "percent", "Per-second samples: the run's CPU time as a percentage of one core (200 = two cores busy), the system's iowait, and GPU utilisation where a GPU is present. After GNNDrive Fig. 3 and 11.",
		samples, []sampleMetric{
			{"CPU % (of one core)", func(s metrics.SampleRecord) (float64, bool) { return s.CPUPercent, true }},
			{"iowait %", func(s metrics.SampleRecord) (float64, bool) { return s.IOWaitPercent, true }},
			{"GPU util %", func(s metrics.SampleRecord) (float64, bool) {
				if s.GPUUtil == nil {
					return 0, false
				}
				return *s.GPUUtil, true
			}},
		})
}

func runMemory(samples []store.Sample) Chart {
	return timeline("run-memory", "Memory", "MiB", "Per-second samples: resident set size of the run, and its memory cgroup's usage including page cache (what the limit counts).",
		samples, []sampleMetric{
			{"RSS", func(s metrics.SampleRecord) (float64, bool) { return float64(s.RSSBytes) / (1 << 20), true }},
			{"cgroup (incl. page cache)", func(s metrics.SampleRecord) (float64, bool) {
				return float64(s.CgroupBytes) / (1 << 20), s.CgroupBytes > 0
			}},
			{"GPU memory", func(s metrics.SampleRecord) (float64, bool) {
				if s.GPUMemBytes == nil {
					return 0, false
				}
				return float64(*s.GPUMemBytes) / (1 << 20), true
			}},
		})
}

func runDisk(samples []store.Sample) Chart {
	return timeline("run-disk", "Disk read", "MB/s", "Per-second samples of the block device read rate while the run ran.",
		samples, []sampleMetric{
			{"disk read MB/s", func(s metrics.SampleRecord) (float64, bool) { return s.DiskReadMBps, true }},
		})
}
