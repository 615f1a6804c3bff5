package report

import (
	"math"
	"testing"

	"outcore/engine/metrics"
)

// The I/O efficiency chart shows each variant's mean io_efficiency over
// its steady epochs that have one, and says how to get one when none has;
// runs of another compute mode are another grid point, never averaged in.
func TestIOEfficiencyChart(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	ep := func(eff *float64) []metrics.EpochRecord {
		return []metrics.EpochRecord{
			{Epoch: 0, Warmup: true, EpochS: 10, IOFloorS: f(1), IOEfficiency: f(0.1)},
			{Epoch: 1, EpochS: 4, IOFloorS: f(1), IOEfficiency: eff},
		}
	}
	runs := []RunData{
		{ID: 1, System: "ginex", MemLimit: 1 << 30, Status: RunDone, Digest: DigestEpochs(ep(f(0.25)))},
		{ID: 2, System: "ginex", MemLimit: 1 << 30, Status: RunDone, Digest: DigestEpochs(ep(f(0.75)))},
		{ID: 3, System: "ginex", MemLimit: 1 << 30, Compute: "none", Status: RunDone, Digest: DigestEpochs(ep(f(0.9)))},
	}
	ch, ok := NewComparison(runs).Chart("io-efficiency", "")
	if !ok || ch.Empty != "" || len(ch.Series) != 1 || len(ch.Categories) != 2 {
		t.Fatalf("chart %+v", ch)
	}
	got := map[string]float64{}
	for _, p := range ch.Series[0].Points {
		if p.Y != nil {
			got[p.Label] = *p.Y
		}
	}
	var cpu, none float64
	for label, v := range got {
		if label == "cpu" || (len(label) >= 3 && label[len(label)-3:] == "cpu") {
			cpu = v
		} else {
			none = v
		}
	}
	if math.Abs(cpu-0.5) > 1e-12 || math.Abs(none-0.9) > 1e-12 {
		t.Errorf("efficiencies by cell %v: want cpu 0.5 (mean of 0.25 and 0.75, warm-up left out), none 0.9", got)
	}
	bare := []RunData{{ID: 4, System: "ginex", Status: RunDone, Digest: DigestEpochs([]metrics.EpochRecord{{EpochS: 3}})}}
	if ch, _ := NewComparison(bare).Chart("io-efficiency", ""); ch.Empty == "" {
		t.Error("no floor measured, yet the chart is not empty")
	}
}
