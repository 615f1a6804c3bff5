package gpu

import (
	"math"
	"os"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"outcore/engine/metrics"
)

// The engine's resource sampler takes a gpu.Sampler as its GPU source.
var (
	_ metrics.GPUSampler     = Sampler(nil)
	_ metrics.GPUPCIeSampler = Sampler(nil)
)

// TestOpenOnThisMachine runs the real NVML path: without a driver it must
// report "no GPU" and sample ok=false; with one it must sample.
func TestOpenOnThisMachine(t *testing.T) {
	s := Open()
	defer s.Close()
	util, mem, ok := s.Sample()
	_, driverErr := os.Stat("/proc/driver/nvidia/version")
	if driverErr != nil {
		if s.Name() != None || ok {
			t.Fatalf("no driver, but Name=%q ok=%v", s.Name(), ok)
		}
		ng, isNo := s.(NoGPU)
		if !isNo || ng.Reason == "" {
			t.Fatalf("no driver: got %#v, want NoGPU with a reason", s)
		}
		t.Logf("no GPU: %s", ng.Reason)
		return
	}
	if !ok || util < 0 || util > 100 || mem <= 0 || s.Name() == None {
		t.Fatalf("GPU %q: util %v mem %v ok %v", s.Name(), util, mem, ok)
	}
}

// fakeDevice is a go-nvml mock device with fixed readings.
func fakeDevice(name string, util uint32, used uint64, fail bool) *mock.Device {
	return &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return name, nvml.SUCCESS },
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			if fail {
				return nvml.Utilization{}, nvml.ERROR_GPU_IS_LOST
			}
			return nvml.Utilization{Gpu: util}, nvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) { return nvml.Memory{Used: used}, nvml.SUCCESS },
		// PCIe: tx = util KiB/s, rx = 2 × util KiB/s; lost like the rest
		GetPcieThroughputFunc: func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
			if fail {
				return 0, nvml.ERROR_GPU_IS_LOST
			}
			if c == nvml.PCIE_UTIL_RX_BYTES {
				return 2 * util, nvml.SUCCESS
			}
			return util, nvml.SUCCESS
		},
	}
}

func fakeLib(initRet nvml.Return, devs ...*mock.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:           func() nvml.Return { return initRet },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			return devs[i], nvml.SUCCESS
		},
	}
}

// TestAggregation checks the sampler's arithmetic over devices with
// go-nvml's own mock (no GPU on the CI machine).
func TestAggregation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lib      *mock.Interface
		wantName string
		util     float64
		mem      int64
		ok       bool
		tx, rx   float64 // MB/s
	}{
		{"no library", fakeLib(nvml.ERROR_LIBRARY_NOT_FOUND), None, 0, 0, false, 0, 0},
		{"no devices", fakeLib(nvml.SUCCESS), None, 0, 0, false, 0, 0},
		{"one", fakeLib(nvml.SUCCESS, fakeDevice("H100", 40, 1<<30, false)), "H100", 40, 1 << 30, true, 0.04096, 0.08192},
		{"two", fakeLib(nvml.SUCCESS, fakeDevice("H100", 40, 1<<30, false), fakeDevice("H100", 60, 2<<30, false)), "2 x H100", 50, 3 << 30, true, 0.1024, 0.2048},
		{"lost", fakeLib(nvml.SUCCESS, fakeDevice("A100", 40, 1, true)), "A100", 0, 0, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openWith(tc.lib)
			u, m, ok := s.Sample()
			if s.Name() != tc.wantName || u != tc.util || m != tc.mem || ok != tc.ok {
				t.Fatalf("name %q util %v mem %v ok %v; want %q %v %v %v", s.Name(), u, m, ok, tc.wantName, tc.util, tc.mem, tc.ok)
			}
			tx, rx, pok := s.SamplePCIe()
			if pok != tc.ok || math.Abs(tx-tc.tx) > 1e-9 || math.Abs(rx-tc.rx) > 1e-9 {
				t.Fatalf("PCIe tx %v rx %v ok %v; want %v %v %v", tx, rx, pok, tc.tx, tc.rx, tc.ok)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := s.Sample(); ok {
				t.Fatal("Sample after Close reported ok")
			}
			if _, _, ok := s.SamplePCIe(); ok {
				t.Fatal("SamplePCIe after Close reported ok")
			}
		})
	}
}
