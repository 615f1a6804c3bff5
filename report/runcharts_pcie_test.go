package report

import (
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
)

// TestDiskChartShowsPCIe: samples with NVML's PCIe throughput add the
// host→GPU and GPU→host series to the disk chart; samples without a GPU
// add none.
func TestDiskChartShowsPCIe(t *testing.T) {
	run := store.Run{ID: 3, System: "gnndrive", Status: store.StatusDone}
	rx, tx := 3957.0, 4.2
	withGPU := []store.Sample{{SampleRecord: metrics.SampleRecord{T: 1, DiskReadMBps: 50, GPUPCIeRxMBps: &rx, GPUPCIeTxMBps: &tx}},
		{SampleRecord: metrics.SampleRecord{T: 2, DiskReadMBps: 60, GPUPCIeRxMBps: &rx, GPUPCIeTxMBps: &tx}}}
	got := map[string]float64{}
	for _, s := range runChart("run-disk", run, nil, withGPU).Series {
		if len(s.Points) > 0 && s.Points[0].Y != nil {
			got[s.Name] = *s.Points[0].Y
		}
	}
	if got["disk read MB/s"] != 50 || got["PCIe host→GPU MB/s"] != rx || got["PCIe GPU→host MB/s"] != tx {
		t.Fatalf("series %v", got)
	}
	noGPU := []store.Sample{{SampleRecord: metrics.SampleRecord{T: 1, DiskReadMBps: 50}}, {SampleRecord: metrics.SampleRecord{T: 2, DiskReadMBps: 60}}}
	if n := len(runChart("run-disk", run, nil, noGPU).Series); n != 1 {
		t.Fatalf("without a GPU: %d series, want the disk's alone", n)
	}
}
