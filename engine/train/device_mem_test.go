package train

import (
	"io"
	"strings"
	"testing"

	"outcore/engine/metrics"
)

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
