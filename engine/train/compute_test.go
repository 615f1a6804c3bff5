package train

import (
	"strings"
	"testing"

	"outcore/engine/accel"
	"outcore/engine/dataset"
	"outcore/engine/graph"
)

func TestComputeModeValidation(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"", ""}, {"cpu", ""}, {"none", ""}, {"model:h100-roofline", ""},
		{"model:nosuch", "no accelerator profile"}, {"gpu", "want cpu, none or model:PROFILE"},
	} {
		cfg := DefaultConfig()
		cfg.Dataset, cfg.Compute = "d", c.in
		err := cfg.Validate()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "compute")) {
			t.Errorf("compute %q: %v, want %q", c.in, err, c.err)
		}
	}
}

func TestComputeDeviationNamesProfile(t *testing.T) {
	cfg := Config{Compute: "model:h100-roofline"}
	m, p, err := cfg.ComputeMode()
	if err != nil {
		t.Fatal(err)
	}
	d := computeDeviation(m, p, 0)
	for _, w := range []string{"h100-roofline", "not measured", "n/a", "sha256"} {
		if !strings.Contains(d, w) {
			t.Errorf("deviation %q lacks %q", d, w)
		}
	}
	if computeDeviation(accel.Mode{Kind: accel.ComputeCPU}, nil, 0) != "" {
		t.Error("cpu mode records a deviation")
	}
}

func TestStepShapeOfBatch(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model, cfg.Heads, cfg.Hidden = "gat", 4, 16
	env := &Env{Config: cfg, Dataset: &dataset.Dataset{Meta: dataset.Meta{FeatureDim: 12, Classes: 3}}}
	mb := &graph.MiniBatch{Seeds: []int64{1, 2}, InputNodes: []int64{1, 2, 3, 4, 5},
		Blocks: []graph.Block{{NumSrc: 5, NumDst: 3, Indices: make([]int32, 7)}, {NumSrc: 3, NumDst: 2, Indices: make([]int32, 4)}}}
	s := env.StepShape(mb)
	want := accel.StepShape{Model: "gat", InDim: 12, Hidden: 16, Classes: 3, Heads: 4, Rows: 5, Seeds: 2,
		Layers: []accel.Layer{{Src: 5, Dst: 3, Edges: 7}, {Src: 3, Dst: 2, Edges: 4}}}
	if s.Model != want.Model || s.InDim != want.InDim || s.Heads != want.Heads || s.Rows != want.Rows || s.Seeds != want.Seeds ||
		len(s.Layers) != 2 || s.Layers[0] != want.Layers[0] || s.Layers[1] != want.Layers[1] {
		t.Errorf("shape %+v, want %+v", s, want)
	}
	if err := s.Check(); err != nil {
		t.Error(err)
	}
}
