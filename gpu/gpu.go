// Package gpu samples GPU utilisation, memory and PCIe throughput through NVML
// (github.com/NVIDIA/go-nvml). A machine without an NVIDIA driver has "no
// GPU": Open returns a sampler whose Sample reports ok=false, never an error,
// so a run on such a machine records no GPU numbers and goes on.
//
// go-nvml loads libnvidia-ml.so with dlopen at Init, so the binary builds
// and starts without the driver. Its headers use deprecated declarations;
// the Makefile sets CGO_CFLAGS=-Wno-deprecated-declarations to silence them.
package gpu

import (
	"fmt"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// None is the name a sampler reports when no GPU was found.
const None = "none"

// Sampler reads the GPUs' utilisation and memory. It satisfies the engine's
// metrics.GPUSampler contract: Sample() (utilPct, memBytes, ok).
type Sampler interface {
	// Sample returns the utilisation in percent (the share of the last
	// sample period in which a kernel ran, averaged over the devices) and
	// the device memory in use in bytes (summed over the devices). ok is
	// false when there is no GPU or the read failed.
	Sample() (utilPct float64, memBytes int64, ok bool)
	// Name describes the GPUs ("NVIDIA H100 80GB HBM3", "2 x ...") or is
	// None when there is none.
	Name() string
	// Close releases the driver library. Sample after Close reports ok=false.
	Close() error
	// SamplePCIe returns the PCIe throughput in MB/s, GPU to host (tx)
	// and host to GPU (rx), summed over the devices; ok is false when
	// there is no GPU or the read failed.
	SamplePCIe() (txMBps, rxMBps float64, ok bool)
}

// Open returns an NVML sampler over every visible GPU when the NVIDIA
// driver is present and reports at least one device, and a NoGPU sampler
// (whose Reason says why) otherwise.
func Open() Sampler {
	return openWith(nvml.New())
}

// openWith opens a sampler over an NVML implementation (the real library,
// or go-nvml's mock in tests).
func openWith(lib nvml.Interface) Sampler {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return NoGPU{Reason: "NVML unavailable: " + describe(lib, ret)}
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		lib.Shutdown()
		return NoGPU{Reason: "NVML device count: " + describe(lib, ret)}
	}
	if n == 0 {
		lib.Shutdown()
		return NoGPU{Reason: "NVML reports no devices"}
	}
	s := &nvmlSampler{lib: lib}
	names := map[string]int{}
	var order []string
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		s.devs = append(s.devs, d)
		name, ret := d.GetName()
		if ret != nvml.SUCCESS {
			name = fmt.Sprintf("GPU %d", i)
		}
		if names[name] == 0 {
			order = append(order, name)
		}
		names[name]++
	}
	if len(s.devs) == 0 {
		lib.Shutdown()
		return NoGPU{Reason: fmt.Sprintf("NVML reports %d device(s) but none could be opened", n)}
	}
	var parts []string
	for _, name := range order {
		if names[name] > 1 {
			parts = append(parts, fmt.Sprintf("%d x %s", names[name], name))
		} else {
			parts = append(parts, name)
		}
	}
	s.name = strings.Join(parts, ", ")
	return s
}

// describe turns an NVML return code into text without calling into a
// library that failed to load.
func describe(lib nvml.Interface, ret nvml.Return) string {
	if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		return "libnvidia-ml.so not found (no NVIDIA driver)"
	}
	return ret.String()
}

// nvmlSampler samples every device it opened.
type nvmlSampler struct {
	mu     sync.Mutex
	lib    nvml.Interface
	devs   []nvml.Device
	name   string
	closed bool
}

func (s *nvmlSampler) Sample() (float64, int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, 0, false
	}
	var util float64
	var mem int64
	for _, d := range s.devs {
		u, ret := d.GetUtilizationRates()
		if ret != nvml.SUCCESS {
			return 0, 0, false
		}
		m, ret := d.GetMemoryInfo()
		if ret != nvml.SUCCESS {
			return 0, 0, false
		}
		util += float64(u.Gpu)
		mem += int64(m.Used)
	}
	return util / float64(len(s.devs)), mem, true
}

// SamplePCIe returns the PCIe throughput summed over the devices in MB/s
// (10^6 bytes): tx is what the GPUs sent to the host, rx what they
// received (host-to-device copies). NVML's nvmlDeviceGetPcieThroughput
// counts over a 20 ms window and reports KiB/s; ok is false when a read
// failed or the devices do not support the counter. It satisfies
// metrics.GPUPCIeSampler.
func (s *nvmlSampler) SamplePCIe() (txMBps, rxMBps float64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, 0, false
	}
	for _, d := range s.devs {
		tx, ret := d.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES)
		if ret != nvml.SUCCESS {
			return 0, 0, false
		}
		rx, ret := d.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES)
		if ret != nvml.SUCCESS {
			return 0, 0, false
		}
		txMBps += kibps(tx)
		rxMBps += kibps(rx)
	}
	return txMBps, rxMBps, true
}

// kibps converts NVML's KiB/s to MB/s.
func kibps(v uint32) float64 { return float64(v) * 1024 / 1e6 }

func (s *nvmlSampler) Name() string { return s.name }

func (s *nvmlSampler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %s", ret.String())
	}
	return nil
}

// NoGPU is the sampler of a machine without a usable GPU.
type NoGPU struct {
	// Reason says why no GPU is sampled (no driver, no device, ...).
	Reason string
}

// Sample reports ok=false.
func (NoGPU) Sample() (float64, int64, bool) { return 0, 0, false }

// SamplePCIe reports ok=false.
func (NoGPU) SamplePCIe() (float64, float64, bool) { return 0, 0, false }

// Name returns None.
func (NoGPU) Name() string { return None }

// Close does nothing.
func (NoGPU) Close() error { return nil }
