package train

import (
	"errors"
	"strings"
	"testing"

	"outcore/engine/cuda"
)

func TestConfigDevice(t *testing.T) {
	for dev, ok := range map[string]bool{"": true, "cpu": true, "cuda": true, "auto": true, "gpu": false, "CUDA": false} {
		c := DefaultConfig()
		c.Dataset = "d"
		c.Device = dev
		err := c.Validate()
		if ok && err != nil && strings.Contains(err.Error(), "device") {
			t.Errorf("device %q: %v", dev, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "device")) {
			t.Errorf("device %q: got %v, want an error naming device", dev, err)
		}
	}
}

// TestUseDevice: cuda without a usable GPU is an error that says why, auto
// falls back to the CPU with a note, and an unknown device is refused.
func TestUseDevice(t *testing.T) {
	_, gpuErr := cuda.Open()
	labels := []int32{0, 1, 0, 1}
	newT := func(model string) *Trainer {
		c := DefaultConfig()
		c.Model, c.Fanout, c.Hidden, c.Heads = model, []int{2}, 8, 2
		tr, err := NewTrainer(c, 4, 2, labels)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tr := newT("gat")
	if _, err := tr.UseDevice("tpu"); err == nil {
		t.Fatal("device tpu: no error")
	}
	if gpuErr == nil {
		t.Skip("a GPU is present: the no-GPU cases do not apply (engine/cuda's tests cover the GPU)")
	}
	if !errors.Is(gpuErr, cuda.ErrUnavailable) {
		t.Fatalf("cuda.Open: %v", gpuErr)
	}
	tr = newT("sage")
	defer tr.Close()
	if _, err := tr.UseDevice(DeviceCUDA); err == nil || !strings.Contains(err.Error(), "--device cuda") || !strings.Contains(err.Error(), "no usable CUDA GPU") {
		t.Fatalf("sage on cuda without a GPU: %v", err)
	}
	note, err := tr.UseDevice(DeviceAuto)
	if err != nil || !strings.Contains(note, "device auto: the trainer ran on the CPU") {
		t.Fatalf("sage on auto without a GPU: note %q err %v", note, err)
	}
	if tr.DeviceName() != "" {
		t.Fatalf("on the CPU but DeviceName %q", tr.DeviceName())
	}
}
