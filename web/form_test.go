package web

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func formEnvFor(featureBytes int64) FormEnv {
	return FormEnv{
		Dataset: func(name string) (DatasetFacts, bool) {
			if name == "tiny" {
				return DatasetFacts{Exists: true, FeatureBytes: featureBytes}, true
			}
			return DatasetFacts{}, false
		},
		Preset: func(name string) (int64, bool) { return 100 << 20, name == "small" },
		ValidName: func(name string) error {
			if strings.ContainsAny(name, "/.") {
				return errors.New("bad character")
			}
			return nil
		},
	}
}

func goodInput() FormInput {
	return FormInput{Name: "x", DatasetMode: "existing", Dataset: "tiny", Variants: []string{"pyg+", "gnndrive"},
		MemLimits: "64MiB, 50%, none", Dims: "", Batches: "512, 1024", Model: "sage", Fanouts: "10,5; 15, 10",
		Epochs: "3", Repeats: "2"}
}

func TestValidateFormBuildsTheGrid(t *testing.T) {
	g, errs := ValidateForm(goodInput(), formEnvFor(200<<20))
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	want := Grid{Name: "x", Dataset: "tiny", Model: "sage", Epochs: 3, Axes: GridAxes{
		System: []string{"pyg+", "gnndrive"}, MemLimit: []string{"64MiB", "50%", "none"},
		BatchSize: []int{512, 1024}, Fanout: []string{"10,5", "15,10"}, Repeat: 2}}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("grid %+v\nwant %+v", g, want)
	}
	if g.Runs() != 2*3*2*2*2 {
		t.Errorf("runs %d", g.Runs())
	}
	if f := g.Factors(); f != "2 variants × 3 memory limits × 2 batch sizes × 2 fanouts × 2 repeats" {
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
		{"model", func(f *FormInput) { f.Model = "" }, "unknown model"},
		{"fanouts", func(f *FormInput) { f.Fanouts = "1,2,3,4,5,6,7" }, "at most 6 layers"},
		{"fanouts", func(f *FormInput) { f.Fanouts = "10,5;10,5" }, "twice"},
		{"epochs", func(f *FormInput) { f.Epochs = "1001" }, "from 1 to 1000"},
		{"repeats", func(f *FormInput) { f.Repeats = "" }, "required"},
		{"", func(f *FormInput) { f.Repeats, f.Batches, f.Fanouts = "100", "1,2,3,4,5", "1;2;3;4" }, "at most 5000"},
	}
	for _, tc := range tests {
		t.Run(tc.field+" "+tc.want, func(t *testing.T) {
			in := goodInput()
			tc.change(&in)
			_, errs := ValidateForm(in, formEnvFor(200<<20))
			if msg := errs[tc.field]; !strings.Contains(msg, tc.want) {
				t.Errorf("errs[%q] = %q, want it to say %q (all: %v)", tc.field, msg, tc.want, errs)
			}
		})
	}
	// A percentage needs a known feature size, and must come to 1 MiB at least.
	in := goodInput()
	in.MemLimits = "10%"
	if _, errs := ValidateForm(in, formEnvFor(1<<20)); !strings.Contains(errs["mem_limits"], "below 1 MiB") {
		t.Errorf("10%% of 1 MiB: %v", errs)
	}
}
