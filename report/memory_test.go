package report

import (
	"encoding/json"
	"math"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
)

// The hit ratio counts memory tiers only: rows of disk-resident tiers were
// read from the device in the epoch (DESIGN §5).
func TestHitRatioLeavesDiskResidentTiersOut(t *testing.T) {
	d := DigestEpochs([]metrics.EpochRecord{{Tiers: map[string]metrics.TierCount{
		metrics.TierGPU: {Lookups: 100, Hits: 20}, metrics.TierCPU: {Lookups: 80, Hits: 30},
		metrics.TierDiskCache: {Lookups: 50, Hits: 10}, metrics.TierPacked: {Lookups: 40, Hits: 40},
	}}})
	if h, ok := d.HitRatio(); !ok || math.Abs(h-0.5) > 1e-12 {
		t.Fatalf("hit ratio %v, want (20+30)/100", h)
	}
	m := DigestEpochs([]metrics.EpochRecord{{Tiers: map[string]metrics.TierCount{metrics.TierPartition: {Lookups: 10, Hits: 10}}}})
	if h, ok := m.HitRatio(); !ok || h != 0 {
		t.Fatalf("partition buffer: hit ratio %v, want 0", h)
	}
}

// The memory chart stacks each run's host peak, device tiers and model
// step; runs without a memory account have no points.
func TestMemoryChart(t *testing.T) {
	peak := int64(300 << 20)
	run := store.Run{ID: 1, System: "diskgnn", Status: store.StatusDone, PeakCgroupBytes: &peak,
		Summary: json.RawMessage(`{"memory":{"host_budget_bytes":268435456,"device_budget_bytes":67108864,"device_tier_bytes":62914560,"model_step_bytes":20971520}}`)}
	ep := DigestEpochs([]metrics.EpochRecord{{EpochS: 1}})
	d := RunDataOf(run, nil)
	d.Digest = ep
	runs := []RunData{d, {ID: 2, System: "ginex", Status: store.StatusDone, Digest: ep}}
	ch := NewChartOrDie(t, NewComparison(runs), "memory")
	if ch.Kind != "stack" || len(ch.Series) != 3 {
		t.Fatalf("chart %+v", ch)
	}
	want := map[string]float64{"host peak": 300 - 60 - 20, "gpu tiers": 60, "model step (outside budgets)": 20}
	for _, s := range ch.Series {
		var got *Point
		for i := range s.Points {
			if s.Points[i].Label == "diskgnn" {
				got = &s.Points[i]
			}
			if s.Points[i].Label == "ginex" && s.Points[i].Y != nil {
				t.Errorf("%s: ginex has no account but a value", s.Name)
			}
		}
		if got == nil || got.Y == nil || math.Abs(*got.Y-want[s.Name]) > 1e-9 {
			t.Errorf("%s: %+v, want %v MiB", s.Name, got, want[s.Name])
		}
	}
	m, ok := MemoryOf(run)
	if !ok || m.Allowance != (256+64+20)<<20 || m.HostPeak != 220<<20 {
		t.Fatalf("memory row %+v", m)
	}
}
