package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseTrainArgs(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "run.json")
	os.WriteFile(cfgFile, []byte(`{"dataset":"fromfile","model":"gcn","hidden":16,"fanout":[-1,-1],"epochs":7,"options":{"a":"1"}}`), 0o644)
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, err error, ds, model string, hidden, epochs int, fanout []int, opts map[string]string, layers int)
	}{
		{"flags only", []string{"--dataset", "d", "--model", "gat", "--hidden", "64", "--heads", "8", "--fanout", "5,-1", "--opt", "cache=25%"},
			func(t *testing.T, err error, ds, model string, hidden, epochs int, fanout []int, opts map[string]string, layers int) {
				if err != nil || ds != "d" || model != "gat" || hidden != 64 || !slices.Equal(fanout, []int{5, -1}) || opts["cache"] != "25%" {
					t.Fatalf("got %v %s %s %d %v %v", err, ds, model, hidden, fanout, opts)
				}
			}},
		{"file then flag overrides", []string{"--config", cfgFile, "--epochs", "3", "--opt", "b=2"},
			func(t *testing.T, err error, ds, model string, hidden, epochs int, fanout []int, opts map[string]string, layers int) {
				if err != nil || ds != "fromfile" || model != "gcn" || hidden != 16 || epochs != 3 || !slices.Equal(fanout, []int{-1, -1}) || opts["a"] != "1" || opts["b"] != "2" {
					t.Fatalf("got %v %s %s %d %d %v %v", err, ds, model, hidden, epochs, fanout, opts)
				}
			}},
		{"layers without fanout", []string{"--dataset", "d", "--layers", "2"},
			func(t *testing.T, err error, ds, model string, hidden, epochs int, fanout []int, opts map[string]string, layers int) {
				if err != nil || !slices.Equal(fanout, []int{10, 10}) || layers != 2 {
					t.Fatalf("got %v fanout %v layers %d", err, fanout, layers)
				}
			}},
		{"bad fanout", []string{"--dataset", "d", "--fanout", "10,x"},
			func(t *testing.T, err error, _, _ string, _, _ int, _ []int, _ map[string]string, _ int) {
				if !errors.Is(err, ErrUsage) {
					t.Fatalf("got %v, want usage error", err)
				}
			}},
		{"bad opt", []string{"--opt", "novalue"},
			func(t *testing.T, err error, _, _ string, _, _ int, _ []int, _ map[string]string, _ int) {
				if !errors.Is(err, ErrUsage) {
					t.Fatalf("got %v, want usage error", err)
				}
			}},
		{"stray argument", []string{"--dataset", "d", "extra"},
			func(t *testing.T, err error, _, _ string, _, _ int, _ []int, _ map[string]string, _ int) {
				if !errors.Is(err, ErrUsage) {
					t.Fatalf("got %v, want usage error", err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseTrainArgs(tc.args, io.Discard)
			tc.check(t, err, c.Dataset, c.Model, c.Hidden, c.Epochs, c.Fanout, c.Options, c.Layers)
		})
	}
	// Validation names the field of a bad value.
	c, err := parseTrainArgs([]string{"--dataset", "d", "--dropout", "1.5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "dropout") {
		t.Fatalf("validate: %v", err)
	}
}
