package train

import (
	"bytes"
	"context"
	"testing"

	"outcore/engine/dataset"
)

// TestSAGELearnsGenerated trains 3-layer GraphSAGE with fanouts 10,10,10
// through the reference pipeline on a generated graph shaped like the
// `small` preset (64 dims, 16 classes, mean in-degree 12) but with 6000
// nodes, and asserts test accuracy far above chance (1/16).
func TestSAGELearnsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("accuracy run; covered by the non-short pass")
	}
	genDataset(t, "small6k", func(c *dataset.GenConfig) {
		p, err := dataset.Preset("small")
		if err != nil {
			t.Fatal(err)
		}
		*c = p
		c.Nodes, c.TrainFrac, c.ValFrac, c.TestFrac = 6000, 0.3, 0.1, 0.1
	})
	cfg := DefaultConfig()
	cfg.Dataset, cfg.DataDir, cfg.AllowBuffered = "small6k", testDataDir, true
	cfg.Model, cfg.Fanout, cfg.Hidden, cfg.Batch = "sage", []int{10, 10, 10}, 64, 128
	cfg.Epochs, cfg.LR = 4, 0.01
	var out bytes.Buffer
	s, err := Run(context.Background(), cfg, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	chance := 1.0 / 16
	t.Logf("best val %.3f at epoch %d, test %.3f (chance %.3f)", s.BestValAcc, s.BestEpoch, s.TestAcc, chance)
	if s.TestAcc < 6*chance {
		t.Fatalf("test accuracy %.3f, want >= %.3f (6x chance)", s.TestAcc, 6*chance)
	}
}
