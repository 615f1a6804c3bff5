package train

import (
	"io"
	"testing"

	"outcore/engine/cuda"
	"outcore/engine/metrics"
)

func TestGPURuntimeBytes(t *testing.T) {
	st := int64(cuda.StagingBytes)
	for _, c := range []struct{ before, after, want int64 }{
		{100 << 20, 400 << 20, 300<<20 + st},
		{100 << 20, 90 << 20, st}, // shrank: only the staging
		{0, 400 << 20, st},        // unreadable before
		{100 << 20, 0, st},        // unreadable after
	} {
		if got := gpuRuntimeBytes(c.before, c.after); got != c.want {
			t.Errorf("gpuRuntimeBytes(%d, %d) = %d, want %d", c.before, c.after, got, c.want)
		}
	}
}

// recLimit records the calls a run makes to its memory limit.
type recLimit struct {
	lifts int
	holds []int64
}

func (l *recLimit) Lift() error            { l.lifts++; return nil }
func (l *recLimit) Hold(extra int64) error { l.holds = append(l.holds, extra); return nil }
func (l *recLimit) Bytes() int64           { return 256 << 20 }
func (l *recLimit) Enforced() bool         { return true }

// TestUseDeviceLimit: on the CPU the limit is left alone and nothing is
// held for a runtime; auto without a GPU lifts it while the device is
// tried and holds it back at the budget (no runtime); cuda without a GPU
// is an error.
func TestUseDeviceLimit(t *testing.T) {
	if _, err := cuda.Open(); err == nil {
		t.Skip("a GPU is present: the no-GPU cases do not apply")
	}
	newEnv := func() (*Env, *recLimit) {
		c := DefaultConfig()
		c.Fanout, c.Hidden = []int{2}, 8
		tr, err := NewTrainer(c, 4, 2, []int32{0, 1, 0, 1})
		if err != nil {
			t.Fatal(err)
		}
		l := &recLimit{}
		return &Env{Config: c, Trainer: tr, Limit: l, MemBudget: 256 << 20, Emit: metrics.NewEmitter(io.Discard)}, l
	}
	env, l := newEnv()
	if err := useDevice(env, DeviceCPU); err != nil || l.lifts != 0 || len(l.holds) != 0 || env.GPURuntimeBytes != 0 {
		t.Fatalf("cpu: err %v lifts %d holds %v runtime %d", err, l.lifts, l.holds, env.GPURuntimeBytes)
	}
	env, l = newEnv()
	if err := useDevice(env, DeviceAuto); err != nil || l.lifts != 1 || len(l.holds) != 1 || l.holds[0] != 0 || env.GPURuntimeBytes != 0 {
		t.Fatalf("auto without a GPU: err %v lifts %d holds %v runtime %d", err, l.lifts, l.holds, env.GPURuntimeBytes)
	}
	env, _ = newEnv()
	if err := useDevice(env, DeviceCUDA); err == nil {
		t.Fatal("cuda without a GPU: no error")
	}
}
