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

// TestDiskSlowerThanItsProfileIsBusy: an epoch whose disk served reads
// twice as slowly as its storage profile is flagged as busy, and the run's
// disk text names the slowest epoch.
func TestDiskSlowerThanItsProfileIsBusy(t *testing.T) {
	prof := 0.115
	fast, slow, brief := 0.9, 9.8, 3.0
	quiet := &metrics.HostPressure{Load1: 1}
	eps := []metrics.EpochRecord{
		{Epoch: 0, EpochS: 40, HostPressure: quiet, DiskService: &metrics.DiskService{Reads: 10, ReadMs: 0.1035, Depth: 10, BusyS: 30, ProfileMs: &prof, Slowdown: &fast}},
		{Epoch: 1, EpochS: 40, HostPressure: quiet, DiskService: &metrics.DiskService{Reads: 10, ReadMs: 1.127, Depth: 10, BusyS: 31, ProfileMs: &prof, Slowdown: &slow}},
		// slow reads for 0.3 s of 49: at most 0.2 s lost, not busy
		{Epoch: 2, EpochS: 49, HostPressure: quiet, DiskService: &metrics.DiskService{Reads: 10, ReadMs: 0.345, Depth: 10, BusyS: 0.3, ProfileMs: &prof, Slowdown: &brief}},
	}
	_, reasons := RunPressure(eps)
	if len(reasons) != 1 || !strings.HasPrefix(reasons[0], "epoch 1: the disk served reads 9.8× slower than its storage profile") {
		t.Errorf("reasons %q", reasons)
	}
	if s := DiskText(eps); s != "1.127 ms a read at 10.0 in flight (busy 31 s), the storage profile's 0.115 ms: 9.80× (epoch 1, the slowest)" {
		t.Errorf("disk text %q", s)
	}
	d := DigestEpochs(eps)
	if d.BusyEpochs != 1 {
		t.Errorf("busy epochs %d, want 1", d.BusyEpochs)
	}
	if s := DiskText([]metrics.EpochRecord{{DiskService: &metrics.DiskService{Reads: 5, ReadMs: 0.2, Depth: 1, BusyS: 2}}}); !strings.Contains(s, "not judged") {
		t.Errorf("unjudged disk text %q", s)
	}
	if DiskText([]metrics.EpochRecord{{Epoch: 0}}) != "" {
		t.Error("disk text without a measurement")
	}
}

// A run whose epochs saw the host's proactive reclaim says so in its
// host text and flags those epochs busy, each reclaim named once.
func TestRunPressureNamesProactiveReclaim(t *testing.T) {
	const damon = "DAMON pageout (kdamond 0) of the host's memory idle ≥ 60 s, up to 128 MiB/s"
	eps := []metrics.EpochRecord{
		{Epoch: 0, HostPressure: &metrics.HostPressure{Load1: 1}},
		{Epoch: 1, HostPressure: &metrics.HostPressure{Load1: 1, Reclaim: damon}},
		{Epoch: 2, HostPressure: &metrics.HostPressure{Load1: 1, Reclaim: damon}},
	}
	p, busy := RunPressure(eps)
	if p == nil || p.Reclaim != damon {
		t.Fatalf("pressure %+v", p)
	}
	if len(busy) != 2 || !strings.HasPrefix(busy[0], "epoch 1: the host's proactive reclaim was on") {
		t.Errorf("busy %v", busy)
	}
	if s := PressureText(p); !strings.HasSuffix(s, "; proactive reclaim on: "+damon) {
		t.Errorf("text %q", s)
	}
	if p, _ := RunPressure(eps[:1]); strings.Contains(PressureText(p), "reclaim") {
		t.Errorf("no reclaim, text %q", PressureText(p))
	}
}
