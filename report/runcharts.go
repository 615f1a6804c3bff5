package report

import (
	"fmt"

	"outcore/engine/metrics"
	"outcore/store"
)

// RunCharts builds the run page's charts: the wall-clock stage breakdown
// and the seconds in each stage's calls per epoch, accuracy
// per epoch, and the per-second CPU/GPU/iowait, memory and disk timeline
// (GNNDrive Fig. 3, 11). The run says how far it got (what an empty chart
// says), its variant (how its stages nest) and its memory limit (the
// memory chart's limit lines).
func RunCharts(run store.Run, epochs []store.Epoch, samples []store.Sample) []Chart {
	out := make([]Chart, 0, len(RunChartIDs))
	for _, id := range RunChartIDs {
		ch, _ := RunChart(id, run, epochs, samples)
		out = append(out, ch)
	}
	return out
}

// RunChart builds one of the run page's charts by id.
func RunChart(id string, run store.Run, epochs []store.Epoch, samples []store.Sample) (Chart, bool) {
	e, ok := chartOf(ScopeRun, id)
	if !ok {
		return Chart{}, false
	}
	ch, _ := e.Build(e, ChartInput{Run: run, Epochs: epochs, Samples: samples})
	return ch, true
}

func one(x float64, label string, y float64) Point {
	return Point{X: x, Label: label, Y: &y, N: 1, Status: StatusOK, Min: y, Max: y}
}

// noEpochYet says why a run's per-epoch chart is empty.
func noEpochYet(run store.Run) string {
	switch {
	case run.ID == 0 || run.Status == store.StatusRunning || run.Status == "":
		return "No epoch has finished yet."
	case run.Status == store.StatusQueued:
		return "The run has not started yet."
	}
	return fmt.Sprintf("The run ended (%s) before its first epoch finished.", run.Status)
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
		ch.Empty = "This run was recorded before metrics version 2 (DESIGN §5), which measures the SSD reads by file kind and workers' busy and wait time; its epochs have no such numbers (the epochs CSV keeps bytes_read / bytes_needed as bytes_read_per_byte_needed)."
		return ch
	}
	ch.Categories = epochCategories(eps)
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
func runReads(e ChartEntry, _ store.Run, epochs []store.Epoch, _ []store.Sample) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "epoch", YLabel: "MiB", YUnit: "MiB",
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
func runWorkers(e ChartEntry, _ store.Run, epochs []store.Epoch, _ []store.Sample) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "epoch", YLabel: "worker-seconds", YUnit: "s",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Worker-seconds of each epoch's sampling and extracting stages, summed over their workers (one run, n = 1): busy is CPU time, wait the rest of the time the workers belonged to the stage — blocked on queues, the SSD, other workers' reads, or waiting for a core (DESIGN §5)."}
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

// noSampleYet says why a run's timeline is empty.
func noSampleYet(run store.Run) string {
	switch {
	case run.ID == 0 || run.Status == store.StatusRunning || run.Status == "":
		return "No resource sample yet (one arrives every second while the run runs)."
	case run.Status == store.StatusQueued:
		return "The run has not started yet; resource samples arrive every second while it runs."
	}
	d := ""
	if run.TotalS != nil {
		d = fmt.Sprintf(" after %.1f s", *run.TotalS)
	}
	return fmt.Sprintf("The run ended (%s)%s without a resource sample (they are taken once a second while the child trains).", run.Status, d)
}

func runAccuracy(e ChartEntry, run store.Run, epochs []store.Epoch, _ []store.Sample) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "epoch", YLabel: "accuracy / loss",
		XType: "value", YType: "value", Kind: "line", XUnit: "epoch",
		Note: "Training loss and train, validation and test accuracy after each epoch (one run, n = 1)."}
	if len(epochs) == 0 {
		ch.Empty = noEpochYet(run)
		return ch
	}
	if !run.Trains() {
		ch.Empty = fmt.Sprintf("Loss and accuracy are n/a: the run's compute mode is %s, which trains no model (DESIGN §10).", run.Compute)
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
func timeline(run store.Run, id, title, ylabel, note string, samples []store.Sample, lines []sampleMetric) Chart {
	ch := Chart{ID: id, Title: title, XLabel: "time since run start (s)", YLabel: ylabel,
		XType: "value", YType: "value", Kind: "line", Note: note, XUnit: "s"}
	if len(samples) == 0 {
		ch.Empty = noSampleYet(run)
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

func runUtil(e ChartEntry, run store.Run, _ []store.Epoch, samples []store.Sample) Chart {
	return timeline(run, e.ID, e.Title, "percent", "Per-second samples: the run's CPU time as a percentage of one core (200 = two cores busy), the system's iowait, and GPU utilisation where a GPU is present. After "+e.Paper+".",
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

func runMemory(e ChartEntry, run store.Run, _ []store.Epoch, samples []store.Sample) Chart {
	ch := timeline(run, e.ID, e.Title, "MiB", "Per-second samples: resident set size of the run, and its memory cgroup's usage including page cache (what the limit counts). Dashed lines: the run's memory budget, and the cgroup's limit where the model step is held outside the budget (budget + step, see the deviations).",
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
	ch.YUnit = "MiB"
	if ch.Empty != "" || run.MemLimitBytes <= 0 {
		return ch
	}
	t0, t1 := samples[0].T, samples[len(samples)-1].T
	limitLine := func(name string, bytes int64, dash int, col string) Series {
		s := Series{Name: name, Color: col, Marker: "none", Dash: dash}
		y := float64(bytes) / (1 << 20)
		s.Points = []Point{one(t0, fmt.Sprintf("t = %.0f s", t0), y), one(t1, fmt.Sprintf("t = %.0f s", t1), y)}
		return s
	}
	ch.Series = append(ch.Series, limitLine("memory budget ("+MemLabel(run.MemLimitBytes)+")", run.MemLimitBytes, 1, "#D55E00"))
	if cg := run.CgroupLimit(); cg > run.MemLimitBytes {
		ch.Series = append(ch.Series, limitLine("cgroup limit ("+MemLabel(cg)+", budget + model step)", cg, 2, "#CC79A7"))
	}
	return ch
}

func runDisk(e ChartEntry, run store.Run, _ []store.Epoch, samples []store.Sample) Chart {
	return timeline(run, e.ID, e.Title, "MB/s", "Per-second samples of the block device read rate while the run ran, and, where a GPU is present, its PCIe throughput (NVML): host to GPU and GPU to host.",
		samples, []sampleMetric{
			{"disk read MB/s", func(s metrics.SampleRecord) (float64, bool) { return s.DiskReadMBps, true }},
			{"PCIe host→GPU MB/s", func(s metrics.SampleRecord) (float64, bool) { return deref(s.GPUPCIeRxMBps) }},
			{"PCIe GPU→host MB/s", func(s metrics.SampleRecord) (float64, bool) { return deref(s.GPUPCIeTxMBps) }},
		})
}

// deref is a sample's optional reading (false when absent).
func deref(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}
