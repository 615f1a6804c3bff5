package train

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"outcore/engine/dataset"
)

// repoRoot walks up from the test's directory to the folder holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// importCora imports ../shared/datasets/cora (relative to the repository)
// with the Planetoid split into the test data directory, or skips.
func importCora(t *testing.T) {
	t.Helper()
	src := filepath.Join(repoRoot(t), "..", "shared", "datasets", "cora")
	if _, err := os.Stat(filepath.Join(src, "cora.content")); err != nil {
		t.Skipf("Cora not found at %s (expected ../shared/datasets/cora beside the repository): %v", src, err)
	}
	o, _ := genOnce.LoadOrStore("cora", new(onceErr))
	oe := o.(*onceErr)
	oe.once.Do(func() {
		_, oe.err = dataset.ImportLINQS(context.Background(), dataset.DatasetsDir(testDataDir), "cora", src, dataset.ImportOptions{Split: "planetoid"})
	})
	if oe.err != nil {
		t.Fatalf("import cora: %v", oe.err)
	}
}

// TestCoraGCNShort is the short version of docs/ACCURACY.md's GCN row: the
// published setup (2 layers, 16 hidden, dropout 0.5, weight decay 5e-4, lr
// 0.01, 200 epochs, full neighbourhoods, row-normalised features, all 140
// training nodes in one batch) over 2 seeds, through the real runner and
// reference pipeline. Validation is checked every 5th epoch to keep the test
// short (the full table evaluates every epoch).
func TestCoraGCNShort(t *testing.T) {
	if testing.Short() {
		t.Skip("accuracy run; covered by the non-short pass")
	}
	importCora(t)
	var sum float64
	seeds := []int64{1, 2}
	for _, seed := range seeds {
		cfg := DefaultConfig()
		cfg.Dataset, cfg.DataDir, cfg.Seed = "cora", testDataDir, seed
		cfg.Model, cfg.Hidden, cfg.Dropout, cfg.WeightDecay, cfg.LR = "gcn", 16, 0.5, 5e-4, 0.01
		cfg.Epochs, cfg.Fanout, cfg.Batch, cfg.RowNormalize = 200, []int{-1, -1}, 0, true
		cfg.Eval, cfg.EvalEvery, cfg.IO, cfg.AllowBuffered = EvalFull, 5, "mmap", true
		var out bytes.Buffer
		s, err := Run(context.Background(), cfg, &out, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Logf("seed %d: best val %.3f at epoch %d, test %.3f", seed, s.BestValAcc, s.BestEpoch, s.TestAcc)
		sum += s.TestAcc
	}
	if mean := sum / float64(len(seeds)); mean < 0.78 {
		t.Fatalf("Cora GCN mean test accuracy %.3f over %d seeds, want >= 0.78 (published 0.815)", mean, len(seeds))
	}
}
