package train

import (
	"errors"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/vocab"
)

// TestCheckFeasible: a budget below the variant's floor (or the runtime's)
// is an InfeasibleError naming both; at the floor, without a budget, and
// for a variant without a floor of its own only the runtime's applies.
func TestCheckFeasible(t *testing.T) {
	RegisterVariant(Variant{New: func(Config) (System, error) { return nil, nil }, Variant: vocab.Variant{Name: "test-floor",
		MinMemory: func(s DatasetShape, _ Config) int64 { return 30<<20 + 1000*s.Nodes }}})
	meta := dataset.Meta{Name: "d", Nodes: 1000, FeatureDim: 8}
	need := int64(30<<20 + 1_000_000)
	cfg := Config{System: "test-floor", Dataset: "d", DataDir: t.TempDir(), MemLimitBytes: need - 1}
	if got := MinMemoryFor(cfg, meta); got != need {
		t.Fatalf("MinMemoryFor = %d, want %d", got, need)
	}
	err := CheckFeasible(cfg, meta)
	ie, ok := AsInfeasible(err)
	if !ok || !errors.Is(err, ErrConfig) || ie.Need != need || !strings.Contains(err.Error(), "test-floor needs to start on d") {
		t.Fatalf("budget below the floor: %v", err)
	}
	if !strings.Contains(ie.Reason(), "is below the 31.0MiB that test-floor needs to start on d") {
		t.Fatalf("reason %q", ie.Reason())
	}
	cfg.MemLimitBytes = need
	if err := CheckFeasible(cfg, meta); err != nil {
		t.Fatalf("budget at the floor: %v", err)
	}
	cfg.MemLimitBytes = 0 // unlimited
	if err := CheckFeasible(cfg, meta); err != nil {
		t.Fatalf("no budget: %v", err)
	}
	cfg.System, cfg.MemLimitBytes = ReferenceName, ConservativeMinMemory(meta)-1 // no floor of its own: the runtime's
	if _, ok := AsInfeasible(CheckFeasible(cfg, meta)); !ok {
		t.Fatal("reference below the runtime floor accepted")
	}
}
