package web

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// formEnvFor is the form's environment over a data directory holding the
// tiny dataset (1 MiB of features), checked by a real experiment manager.
func formEnvFor(t *testing.T) FormEnv {
	t.Helper()
	e := newEnv(t)
	h := &ExperimentsHandler{Queue: e.mgr, DataDir: e.dir}
	env, _ := h.formEnv()
	env.ValidName = func(name string) error {
		if strings.ContainsAny(name, "/.") {
			return errors.New("bad character")
		}
		return nil
	}
	return env
}

func goodInput() FormInput {
	return FormInput{Name: "x", DatasetMode: "existing", Dataset: "tiny", Variants: []string{"pyg+", "gnndrive"},
		MemLimits: "64MiB, 8000%, none", Dims: "", Batches: "512, 1024", Model: "sage", Fanouts: "10,5; 15, 10",
		Epochs: "3", Repeats: "2"}
}

func TestValidateFormBuildsTheGrid(t *testing.T) {
	g, errs := ValidateForm(goodInput(), formEnvFor(t))
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	a := g.Axes
	if g.Name != "x" || g.Dataset != "tiny" || string(g.Base["epochs"]) != "3" || !reflect.DeepEqual(a.System, []string{"pyg+", "gnndrive"}) ||
		!reflect.DeepEqual(a.MemLimit, []string{"64MiB", "8000%", "none"}) || !reflect.DeepEqual(a.BatchSize, []int{512, 1024}) ||
		!reflect.DeepEqual(a.Fanout, [][]int{{10, 5}, {15, 10}}) || !reflect.DeepEqual(a.Model, []string{"sage"}) || a.Repeat != 2 {
		t.Fatalf("grid %+v", g)
	}
	if g.Count() != 2*3*2*2*2 {
		t.Errorf("runs %d", g.Count())
	}
	if f := Factors(g); f != "2 variants × 3 memory limits × 2 batch sizes × 2 fanouts × 2 repeats" {
		t.Errorf("factors %q", f)
	}
	var back map[string]any
	if err := json.Unmarshal(g.JSON(), &back); err != nil || back["axes"].(map[string]any)["repeat"] != float64(2) {
		t.Errorf("JSON %s", g.JSON())
	}
}

func TestValidateFormNamesTheBadField(t *testing.T) {
	tests := []struct {
		field  string
		change func(*FormInput)
		want   string
	}{
		{"name", func(f *FormInput) { f.Name = "a\x00b" }, "printable"},
		{"dataset", func(f *FormInput) { f.Dataset = "" }, "choose a dataset"},
		{"dataset", func(f *FormInput) { f.DatasetMode = "upload" }, "unknown choice"},
		{"preset", func(f *FormInput) { f.DatasetMode, f.Preset, f.NewDataset = "generate", "huge", "n" }, "unknown preset"},
		{"new_dataset", func(f *FormInput) { f.DatasetMode, f.Preset, f.NewDataset = "generate", "small", "" }, "give the generated dataset a name"},
		{"new_dataset", func(f *FormInput) { f.DatasetMode, f.Preset, f.NewDataset = "generate", "small", "a/b" }, "bad character"},
		{"new_dataset", func(f *FormInput) { f.DatasetMode, f.Preset, f.NewDataset = "generate", "small", "tiny" }, "exists already"},
		{"variants", func(f *FormInput) { f.Variants = nil }, "at least one"},
		{"mem_limits", func(f *FormInput) { f.MemLimits = "-5MiB" }, "memory limits"},
		{"mem_limits", func(f *FormInput) { f.MemLimits = "64MiB, 67108864" }, "same limit"},
		{"mem_limits", func(f *FormInput) { f.MemLimits = "12 furlongs" }, "memory limits"},
		{"dims", func(f *FormInput) { f.Dims = "0" }, "from 1 to"},
		{"batches", func(f *FormInput) { f.Batches = "1e3" }, "whole number"},
		{"model", func(f *FormInput) { f.Model = "" }, "is not a model"},
		{"fanouts", func(f *FormInput) { f.Fanouts = "1,2,3,4,5,6,7" }, "has 7 layers, at most 6"},
		{"fanouts", func(f *FormInput) { f.Fanouts = "2000,5" }, "from 1 to 1000"},
		{"variants", func(f *FormInput) { f.Variants = []string{"pyg+", "bogus"} }, `"bogus" is not a variant`},
		{"fanouts", func(f *FormInput) { f.Fanouts = "10,5;10,5" }, "twice"},
		{"epochs", func(f *FormInput) { f.Epochs = "1001" }, "from 1 to 1000"},
		{"repeats", func(f *FormInput) { f.Repeats = "" }, "required"},
		// an empty batch or fanout field is not silently the engine's default
		{"batches", func(f *FormInput) { f.Batches = " , " }, "batch sizes: give at least one"},
		{"fanouts", func(f *FormInput) { f.Fanouts = "" }, "fanouts: give at least one"},
		{"", func(f *FormInput) { f.Repeats, f.Batches, f.Fanouts = "100", "1,2,3,4,5", "1;2;3;4" }, "at most 10000"},
		{"mem_limits", func(f *FormInput) { f.MemLimits = "2MiB" }, "needs to start"},
		{"mem_limits", func(f *FormInput) { f.MemLimits = "1e30" }, "largest memory limit, 1 PiB"},
		{"compute", func(f *FormInput) { f.Compute = "cpu, gpu" }, "want cpu, none or model:PROFILE"},
		{"compute", func(f *FormInput) { f.Compute = "model:nosuch" }, `no accelerator profile "nosuch"`},
	}
	env := formEnvFor(t)
	for _, tc := range tests {
		t.Run(tc.field+" "+tc.want, func(t *testing.T) {
			in := goodInput()
			tc.change(&in)
			_, errs := ValidateForm(in, env)
			if msg := errs[tc.field]; !strings.Contains(msg, tc.want) {
				t.Errorf("errs[%q] = %q, want it to say %q (all: %v)", tc.field, msg, tc.want, errs)
			}
		})
	}
	// A percentage is resolved on the dataset, and must come to 1 MiB at least.
	in := goodInput()
	in.MemLimits = "10%"
	if _, errs := ValidateForm(in, env); !strings.Contains(errs["mem_limits"], "below 1MiB") {
		t.Errorf("10%% of 1 MiB: %v", errs)
	}
}

// The compute field becomes the grid's compute axis.
func TestValidateFormCompute(t *testing.T) {
	in := goodInput()
	in.Compute = "cpu, model:h100-roofline"
	g, errs := ValidateForm(in, formEnvFor(t))
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	if !reflect.DeepEqual(g.Axes.Compute, []string{"cpu", "model:h100-roofline"}) || !strings.Contains(Factors(g), "2 compute modes") {
		t.Errorf("compute axis %v, factors %q", g.Axes.Compute, Factors(g))
	}
}

// The form's memory-frontier box makes the grid a frontier search: no
// memory-limit axis, one repeat.
func TestValidateFormFrontier(t *testing.T) {
	in := goodInput()
	in.Frontier, in.Repeats = true, "1"
	env := formEnvFor(t)
	g, errs := ValidateForm(in, env)
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	if g.Frontier == nil || g.Axes.MemLimit != nil || !strings.Contains(Factors(g), "memory-frontier") || !strings.Contains(string(g.JSON()), `"frontier"`) {
		t.Errorf("grid %+v, factors %q", g, Factors(g))
	}
	in.Repeats = "2"
	if _, errs := ValidateForm(in, env); !strings.Contains(errs["repeats"], "runs each probe once") {
		t.Errorf("2 repeats of a frontier: %v", errs)
	}
	f, err := DecodeForm("application/x-www-form-urlencoded", []byte("name=x&frontier=1&repeats=1"))
	if err != nil || !f.Frontier {
		t.Errorf("decoded %+v, %v", f, err)
	}
}
