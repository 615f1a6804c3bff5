package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// TestSystemsJSON: `outcore systems --json` lists every registered variant
// with its paper and declared options, in display order.
func TestSystemsJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if err := Run(context.Background(), Streams{Out: &out, Err: &errb}, []string{"systems", "--json"}); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Name    string `json:"name"`
		Paper   string `json:"paper"`
		Summary string `json:"summary"`
		Options []struct {
			Key, Type, Default, Help string
		} `json:"options"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	byName := map[string]int{}
	for i, s := range got {
		byName[s.Name] = i
	}
	for _, name := range []string{"pyg+", "ginex", "gnndrive", "reference"} {
		i, ok := byName[name]
		if !ok {
			t.Fatalf("%s missing from %s", name, out.String())
		}
		s := got[i]
		if s.Summary == "" || (name != "reference" && s.Paper == "") || len(s.Options) == 0 {
			t.Errorf("%s: %+v", name, s)
		}
		v, _ := train.LookupVariant(name)
		if len(s.Options) != len(v.Options) {
			t.Errorf("%s: %d options printed, %d declared", name, len(s.Options), len(v.Options))
		}
	}
	if len(got) != len(train.Variants()) || got[len(got)-1].Name != "reference" {
		t.Fatalf("order %v: want every variant, reference last", byName)
	}
	out.Reset()
	if err := Run(context.Background(), Streams{Out: &out, Err: &errb}, []string{"systems"}); err != nil || !strings.Contains(out.String(), "superbatch") {
		t.Fatalf("text listing: %v\n%s", err, out.String())
	}
	if err := Run(context.Background(), discard, []string{"systems", "extra"}); !errors.Is(err, ErrUsage) {
		t.Fatalf("argument accepted: %v", err)
	}
}

// TestTrainUnknownOption: `outcore train --system ginex --opt nosuchkey=1`
// fails before any data is read, naming the variant's known keys.
func TestTrainUnknownOption(t *testing.T) {
	err := Run(context.Background(), discard, []string{"train", "--dataset", "d", "--data-dir", t.TempDir(), "--system", "ginex", "--opt", "nosuchkey=1"})
	if !errors.Is(err, ErrUsage) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{`"nosuchkey"`, "superbatch", "feature_cache", "x_buffers"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestTrainBelowVariantFloor: a --mem-limit below the variant's MinMemory
// on the dataset is refused before any process is placed in a group of
// that size, naming the floor.
func TestTrainBelowVariantFloor(t *testing.T) {
	args := append(baseArgs(t, "ginex"), "--mem-limit", "1MiB")
	err := Run(context.Background(), discard, append([]string{"train"}, args...))
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "that ginex needs to start on "+systest.DatasetName) {
		t.Fatalf("err %v", err)
	}
	// As main prints it: exit status 2 and the reason as the last line
	// (what a supervisor shows as the run's error), not the flag list.
	code, _, stderr := runCLI(append([]string{"train"}, args...)...)
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if last := lines[len(lines)-1]; code != 2 || strings.Contains(stderr, "usage:") || !strings.Contains(last, "that ginex needs to start on") {
		t.Fatalf("exit %d, stderr %q: want 2 with the reason last and no usage", code, stderr)
	}
}

// TestTrainFloorSamplesTheFirstBatch: the floor the CLI checks holds the
// first mini-batch as sampled from the dataset (train.ProbeShape), not
// only its seeds: a --mem-limit above gnndrive's shape-only floor but
// below its floor with the first batch's inputs and bytes (its mini-batches
// in flight) is refused, naming the floor. (pyg+'s floor on so small a
// dataset is train.StartFloor's, whatever its batch.)
func TestTrainFloorSamplesTheFirstBatch(t *testing.T) {
	dir, _ := systest.DataDir()
	cfg := train.DefaultConfig()
	cfg.Dataset, cfg.DataDir, cfg.System = systest.Dataset(t), dir, "gnndrive"
	cfg.Hidden, cfg.Batch, cfg.Epochs, cfg.LR, cfg.Fanout = 32, 100, 1, 0.01, []int{5, 5}
	v, _ := train.LookupVariant("gnndrive")
	probed, err := train.ProbeShape(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if probed.FirstBatchInputs <= int64(cfg.Batch) || probed.FirstBatchBytes <= 8*probed.FirstBatchInputs {
		t.Fatalf("first batch has %d input nodes for %d seeds, %d bytes", probed.FirstBatchInputs, cfg.Batch, probed.FirstBatchBytes)
	}
	shapeOnly := probed
	shapeOnly.FirstBatchInputs, shapeOnly.FirstBatchBytes, shapeOnly.FirstBatchHopEntries = 0, 0, 0
	lo, hi := v.MinMemory(shapeOnly, cfg), v.MinMemory(probed, cfg)
	if hi <= lo {
		t.Fatalf("floor with the first batch %d, without %d", hi, lo)
	}
	limit := fmt.Sprint(lo + (hi-lo)/2)
	err = Run(context.Background(), discard, append([]string{"train"}, append(baseArgs(t, "gnndrive"), "--mem-limit", limit)...))
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), fmt.Sprintf("(%d bytes) that gnndrive needs", hi)) {
		t.Fatalf("limit %s between the floors: err %v", limit, err)
	}
}
