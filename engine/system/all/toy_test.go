package all

import (
	"errors"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/system/systest"
	"outcore/engine/system/systest/toy"
	"outcore/engine/train"
)

// testOnly are variants registered by this package's tests alone: the toy
// of docs/ARCHITECTURE.md "Adding a system" (engine/system/systest/toy),
// one package on the skeleton and nothing else, which every shared suite
// here runs beside the real variants. It is no part of the product, so
// the docs' variants table does not list it.
var testOnly = map[string]bool{toy.Name: true}

// TestToyOnTheSkeleton: what the toy gets from the skeleton alone — its
// Base's devices and deviations in the start record, the deviation
// env.OpenFeaturesWith records when --io overrides the backend its
// "paper" uses (in the summary, after the Base's), and a memory floor
// from its sizing through kit.Register that Run enforces.
func TestToyOnTheSkeleton(t *testing.T) {
	cfg := systest.Config(t, toy.Name, map[string]string{"topology": "mmap"})
	cfg.Epochs, cfg.IO = 1, "mmap"
	r := systest.Run(t, cfg)
	if r.Start.Devices["sample"] != "cpu" || !systest.HasDeviation(r.Start.Deviations, "implements no paper") {
		t.Errorf("start record: devices %v, deviations %q", r.Start.Devices, r.Start.Deviations)
	}
	if systest.HasDeviation(r.Start.Deviations, "backend") || !systest.HasDeviation(r.Summary.Deviations, "implements no paper") ||
		!systest.HasDeviation(r.Summary.Deviations, "feature rows are read through the mmap backend instead of pread (--io)") {
		t.Errorf("summary deviations %q (start %q)", r.Summary.Deviations, r.Start.Deviations)
	}
	v, _ := train.LookupVariant(toy.Name)
	floor := v.MinMemory(train.ShapeOf(dataset.Meta{Nodes: 1000, Edges: 10000, FeatureDim: 32, Classes: 4, Train: 100}), cfg)
	if floor <= 0 {
		t.Fatalf("toy's memory floor %d", floor)
	}
	cfg.MemLimit, cfg.MemLimitBytes = "", floor-1
	if err := train.CheckFeasible(cfg, dataset.Meta{Name: "toy-shape", Nodes: 1000, Edges: 10000, FeatureDim: 32, Classes: 4, Train: 100}); !errors.Is(err, train.ErrConfig) {
		t.Errorf("a budget below the toy's floor: %v", err)
	}
}
