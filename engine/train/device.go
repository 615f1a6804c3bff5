package train

import (
	"fmt"

	"outcore/engine/cuda"
)

// UseDevice moves the trainer to the device named by Config.Device before
// its first step. "cuda" fails with the reason when no usable GPU is found
// (every model kind has a GPU implementation); "auto" falls back to
// the CPU and returns the reason as a note for the run's deviations
// (empty when it runs where asked). On the GPU the trainer's CPU model
// keeps its initial weights; steps and predictions use the GPU's.
func (t *Trainer) UseDevice(device string) (note string, err error) {
	switch device {
	case "", DeviceCPU:
		return "", nil
	case DeviceCUDA, DeviceAuto:
	default:
		return "", fmt.Errorf("device %q, want cpu, cuda or auto", device)
	}
	reason := ""
	var dev *cuda.Device
	if dev, err = cuda.Open(); err != nil {
		reason = err.Error()
	}
	if reason != "" {
		if device == DeviceCUDA {
			return "", fmt.Errorf("--device cuda: %s", reason)
		}
		return fmt.Sprintf("device auto: the trainer ran on the CPU (%s)", reason), nil
	}
	g, err := cuda.NewModel(dev, t.model)
	if err != nil {
		if device == DeviceCUDA {
			return "", fmt.Errorf("--device cuda: %w", err)
		}
		return fmt.Sprintf("device auto: the trainer ran on the CPU (%v)", err), nil
	}
	t.mu.Lock()
	t.gpu, t.gpuName = g, dev.Name
	t.mu.Unlock()
	return "", nil
}

// DeviceName is the GPU the trainer runs on, or "" on the CPU.
func (t *Trainer) DeviceName() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gpuName
}

// Close frees the trainer's GPU memory (nothing on the CPU).
func (t *Trainer) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gpu != nil {
		t.gpu.Close()
		t.gpu = nil
	}
}
