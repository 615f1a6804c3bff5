package gpu

import (
	"os"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"outcore/engine/metrics"
)

// The engine's resource sampler takes a gpu.Sampler as its GPU source.
var _ metrics.GPUSampler = Sampler(nil)

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
	}{
		{"no library", fakeLib(nvml.ERROR_LIBRARY_NOT_FOUND), None, 0, 0, false},
		{"no devices", fakeLib(nvml.SUCCESS), None, 0, 0, false},
		{"one", fakeLib(nvml.SUCCESS, fakeDevice("H100", 40, 1<<30, false)), "H100", 40, 1 << 30, true},
		{"two", fakeLib(nvml.SUCCESS, fakeDevice("H100", 40, 1<<30, false), fakeDevice("H100", 60, 2<<30, false)), "2 x H100", 50, 3 << 30, true},
		{"lost", fakeLib(nvml.SUCCESS, fakeDevice("A100", 40, 1, true)), "A100", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openWith(tc.lib)
			u, m, ok := s.Sample()
			if s.Name() != tc.wantName || u != tc.util || m != tc.mem || ok != tc.ok {
				t.Fatalf("name %q util %v mem %v ok %v; want %q %v %v %v", s.Name(), u, m, ok, tc.wantName, tc.util, tc.mem, tc.ok)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := s.Sample(); ok {
				t.Fatal("Sample after Close reported ok")
			}
		})
	}
}
