package train

import (
	"errors"
	"io"
	"strings"
	"testing"

	"outcore/engine/metrics"
)

// The device budget: bytes, a share of the feature table, "none", or the
// default 10 %; a bad value is a configuration error naming device_mem.
func TestDeviceMem(t *testing.T) {
	const feat = 1000 << 20
	for _, c := range []struct {
		in    string
		bytes int64
		want  int64
	}{
		{"", 0, feat / 10},
		{"10%", 0, feat / 10},
		{"none", 0, 0},
		{"0", 0, 0},
		{"64MiB", 0, 64 << 20},
		{"", 5 << 20, 5 << 20}, // an explicit byte count stands
	} {
		cfg := Config{DeviceMem: c.in, DeviceMemBytes: c.bytes}
		if err := cfg.validateDeviceMem(); err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if err := cfg.ResolveDeviceMem(feat); err != nil || cfg.DeviceMemBytes != c.want {
			t.Errorf("%q (%d bytes): %d, %v; want %d", c.in, c.bytes, cfg.DeviceMemBytes, err, c.want)
		}
	}
	for _, bad := range []Config{{DeviceMem: "lots"}, {DeviceMem: "-5%"}, {DeviceMemBytes: -1}, {DeviceMem: "2PiB"}} {
		err := bad.validateDeviceMem()
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "device_mem") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// HoldDevice records the device tiers and the model step, and a deviation
// exactly when the tiers exceed the device budget.
func TestHoldDevice(t *testing.T) {
	env := &Env{Config: Config{DeviceMemBytes: 100}, MemBudget: 1000, Emit: metrics.NewEmitter(io.Discard)}
	env.HoldDevice(map[string]int64{"gpu_cache": 60, "inputs": 40, "none": 0}, 7)
	m := env.MemoryAccount()
	if m.DeviceTierBytes != 100 || len(m.DeviceTiers) != 2 || m.ModelStepBytes != 7 || m.AllowanceBytes() != 1107 || len(env.deviations) != 0 {
		t.Fatalf("account %+v, deviations %q", m, env.deviations)
	}
	env.HoldDevice(map[string]int64{"gpu_cache": 61, "inputs": 40}, 7)
	if len(env.deviations) != 1 || !strings.Contains(env.deviations[0], "exceed the") {
		t.Fatalf("deviations %q", env.deviations)
	}
}
