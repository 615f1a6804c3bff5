package report

import (
	"testing"

	"outcore/engine/metrics"
)

func TestDigestSkipsWarmupAndUnevaluatedEpochs(t *testing.T) {
	eps := []metrics.EpochRecord{
		{Epoch: 0, Warmup: true, EpochS: 10, ValAcc: 0.5, TestAcc: 0.4, EvalS: 1, WallS: 11},
		{Epoch: 1, EpochS: 2, WallS: 13}, // eval_every skipped it: no accuracy
		{Epoch: 2, EpochS: 4, ValAcc: 0.7, TestAcc: 0.6, Evaluated: true, WallS: 18,
			Stages: map[string]float64{"inspect_s": 1}, Tiers: map[string]metrics.TierCount{"cpu": {Lookups: 10, Hits: 4}, "device": {Lookups: 6, Hits: 6}},
			BytesRead: 300, BytesNeeded: 100},
	}
	d := DigestEpochs(eps)
	if d.Epochs != 3 || d.Steady != 2 || d.Mean["epoch_s"] != 3 || d.Mean["inspect_s"] != 0.5 {
		t.Errorf("means %+v (steady %d)", d.Mean, d.Steady)
	}
	if d.BestVal != 0.7 || d.TestAtBest != 0.6 || len(d.Curve) != 2 || d.Curve[1].Epoch != 2 {
		t.Errorf("accuracy %v/%v, curve %+v", d.BestVal, d.TestAtBest, d.Curve)
	}
	if h, ok := d.HitRatio(); !ok || h != 0.4 {
		t.Errorf("hit ratio %v %v", h, ok)
	}
	if len(d.Stages) != 1 || d.Stages[0] != "inspect_s" || d.BytesRead/d.BytesNeeded != 3 {
		t.Errorf("stages %v, bytes %v/%v", d.Stages, d.BytesRead, d.BytesNeeded)
	}
	// Every epoch warm-up: the means are over all of them.
	if d := DigestEpochs(eps[:1]); d.Steady != 1 || d.Mean["epoch_s"] != 10 {
		t.Errorf("all warm-up: %+v", d)
	}
	if DigestEpochs(nil) != nil {
		t.Error("a digest of no epochs")
	}
}
