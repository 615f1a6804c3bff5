package train

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestTrainMaxNodes: a capped training split gives an epoch of
// ceil(cap / batch) batches, and the run records the cap as a deviation;
// without the cap the epoch covers the whole split (900 of t3k's nodes).
func TestTrainMaxNodes(t *testing.T) {
	genDataset(t, "t3k", nil)
	for _, c := range []struct {
		cap, batches int
		deviation    bool
	}{{0, 8, false}, {300, 3, true}, {5000, 8, false}} {
		cfg := testConfig("t3k")
		cfg.Epochs, cfg.TrainMaxNodes = 1, c.cap
		var out bytes.Buffer
		if _, err := Run(context.Background(), cfg, &out, nil); err != nil {
			t.Fatalf("cap %d: %v\n%s", c.cap, err, out.String())
		}
		r := parseRecords(t, out.Bytes())
		if len(r.epochs) != 1 || r.epochs[0].Batches != c.batches {
			t.Fatalf("cap %d: epochs %d, batches %d, want %d", c.cap, len(r.epochs), r.epochs[0].Batches, c.batches)
		}
		got := false
		for _, d := range r.summary.Deviations {
			got = got || strings.Contains(d, "train_max_nodes")
		}
		if got != c.deviation {
			t.Fatalf("cap %d: deviations %q", c.cap, r.summary.Deviations)
		}
	}
	bad := testConfig("t3k")
	bad.TrainMaxNodes = -1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "train_max_nodes") {
		t.Fatalf("train_max_nodes -1: %v", err)
	}
}
