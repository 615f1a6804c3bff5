package train

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"outcore/engine/dataset"
)

// TestIDsChecked: a run that names its dataset's node numbering (the
// grid's ids axis, vocab.Config.IDs) trains when the dataset's generator
// config agrees and is refused, naming both, when it does not; a bad
// value is refused by Validate.
func TestIDsChecked(t *testing.T) {
	genDataset(t, "t3k", nil)
	genDataset(t, "t3k-ids-local", func(c *dataset.GenConfig) { *c = c.WithIDs(true) })
	run := func(ds, ids string) error {
		cfg := testConfig(ds)
		cfg.Epochs, cfg.IDs, cfg.TrainMaxNodes = 1, ids, 256
		var out bytes.Buffer
		_, err := Run(context.Background(), cfg, &out, nil)
		return err
	}
	for _, c := range []struct{ ds, ids string }{{"t3k", "scattered"}, {"t3k-ids-local", "local"}, {"t3k", ""}} {
		if err := run(c.ds, c.ids); err != nil {
			t.Errorf("%s with ids %q: %v", c.ds, c.ids, err)
		}
	}
	err := run("t3k", "local")
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `ids: "local", but dataset t3k numbers its nodes scattered`) {
		t.Errorf("a scattered dataset run as local: %v", err)
	}
	bad := testConfig("t3k")
	bad.IDs = "sorted"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "ids") {
		t.Errorf("ids %q: %v", bad.IDs, err)
	}
}
