package store

import (
	"testing"

	"outcore/engine/metrics"
)

// TestAggregatesOf: the mean is over the non-warm-up epochs, the best
// val_acc is the first epoch's among equals and carries its test_acc, a
// run that trains no model has no accuracies, and no epochs give none.
func TestAggregatesOf(t *testing.T) {
	ep := func(warm bool, s, val, test float64) metrics.EpochRecord {
		return metrics.EpochRecord{Warmup: warm, EpochS: s, ValAcc: val, TestAcc: test}
	}
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name             string
		eps              []metrics.EpochRecord
		trains           bool
		mean, best, test *float64
	}{
		{"none", nil, true, nil, nil, nil},
		{"warm-up only", []metrics.EpochRecord{ep(true, 9, 0.5, 0.4)}, true, nil, f(0.5), f(0.4)},
		{"steady", []metrics.EpochRecord{ep(true, 9, 0.1, 0.1), ep(false, 2, 0.6, 0.55), ep(false, 4, 0.6, 0.7), ep(false, 3, 0.2, 0.9)},
			true, f(3), f(0.6), f(0.55)},
		{"no model", []metrics.EpochRecord{ep(false, 1, 0, 0), ep(false, 2, 0, 0)}, false, f(1.5), nil, nil},
		// a compensated sum: 1e16 + 1 + -1e16 + 1 is 2, not 0 or 1
		{"compensated", []metrics.EpochRecord{ep(false, 1e16, 0, 0), ep(false, 1, 0, 0), ep(false, -1e16, 0, 0), ep(false, 1, 0, 0)},
			false, f(0.5), nil, nil},
	} {
		a := aggregatesOf(c.eps, c.trains)
		for _, p := range []struct {
			name      string
			got, want *float64
		}{{"mean", a.MeanEpochS, c.mean}, {"best", a.BestValAcc, c.best}, {"test", a.TestAcc, c.test}} {
			if (p.got == nil) != (p.want == nil) || (p.got != nil && *p.got != *p.want) {
				t.Errorf("%s: %s %v, want %v", c.name, p.name, deref(p.got), deref(p.want))
			}
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
