package cli

import (
	"testing"

	"outcore/engine/metrics"
)

// An epoch line never prints a loss or an accuracy that was not measured:
// outside --compute cpu no model is trained, and eval_every skips epochs.
func TestEpochQualityNeverInventsNumbers(t *testing.T) {
	for _, c := range []struct {
		rec  metrics.EpochRecord
		want string
	}{
		{metrics.EpochRecord{Compute: "cpu", TrainLoss: 1.25, ValAcc: 0.5, Evaluated: true}, "loss 1.2500, val_acc 0.5000"},
		{metrics.EpochRecord{TrainLoss: 1.25, ValAcc: 0.5, Evaluated: true}, "loss 1.2500, val_acc 0.5000"},
		{metrics.EpochRecord{Compute: "cpu", TrainLoss: 1.25}, "loss 1.2500, val_acc n/a (not evaluated)"},
		{metrics.EpochRecord{Compute: "model:h100-pyg"}, "loss n/a (no model trained: compute model:h100-pyg), val_acc n/a"},
		{metrics.EpochRecord{Compute: "none"}, "loss n/a (no model trained: compute none), val_acc n/a"},
	} {
		if got := epochQuality(c.rec); got != c.want {
			t.Errorf("epochQuality(%+v) = %q, want %q", c.rec, got, c.want)
		}
	}
}
