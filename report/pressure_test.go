package report

import (
	"strings"
	"testing"

	"outcore/engine/metrics"
)

func TestRunPressureFlagsBusyEpochs(t *testing.T) {
	io := 12.0
	quiet := &metrics.HostPressure{Load1: 1, OthersCPUPct: 3, PSIIOPct: &io}
	busy := &metrics.HostPressure{Load1: 3, OthersCPUPct: 45, StealPct: 1}
	p, reasons := RunPressure([]metrics.EpochRecord{{Epoch: 0, HostPressure: quiet}, {Epoch: 1, HostPressure: busy}, {Epoch: 2}})
	if p == nil || p.OthersCPUPct != 45 || p.Load1 != 2 || p.PSIIOPct == nil || *p.PSIIOPct != 12 || p.PSICPUPct != nil {
		t.Fatalf("pressure %+v", p)
	}
	if len(reasons) != 1 || !strings.HasPrefix(reasons[0], "epoch 1: other processes used 45 %") {
		t.Errorf("reasons %v", reasons)
	}
	if s := PressureText(p); !strings.Contains(s, "cpu unavailable") || !strings.Contains(s, "io 12 %") {
		t.Errorf("text %q", s)
	}
	if p, r := RunPressure([]metrics.EpochRecord{{Epoch: 0}}); p != nil || r != nil || PressureText(p) != "not recorded" {
		t.Errorf("no pressure recorded: %+v %v", p, r)
	}
}
