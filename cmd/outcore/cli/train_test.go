package cli

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"outcore/engine/train"
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
			c, _, err := parseTrainArgs(tc.args)
			tc.check(t, err, c.Dataset, c.Model, c.Hidden, c.Epochs, c.Fanout, c.Options, c.Layers)
		})
	}
	// Validation names the field of a bad value.
	c, _, err := parseTrainArgs([]string{"--dataset", "d", "--dropout", "1.5"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "dropout") {
		t.Fatalf("validate: %v", err)
	}
	// The supervisor's flag is parsed, and not shown in the help.
	c, placed, err := parseTrainArgs([]string{"--dataset", "d", "--cgroup", "/sys/fs/cgroup/x"})
	if err != nil || placed != "/sys/fs/cgroup/x" || c.Dataset != "d" {
		t.Fatalf("--cgroup: %q %v", placed, err)
	}
	if _, placed, _ := parseTrainArgs([]string{"--dataset", "d"}); placed != "" {
		t.Fatalf("placed %q without --cgroup", placed)
	}
	var help, errb strings.Builder
	if code := Main(context.Background(), []string{"train", "-h"}, &help, &errb); code != 0 || strings.Contains(help.String(), "cgroup") || !strings.Contains(help.String(), "-mem-limit") {
		t.Fatalf("help (exit %d):\n%s", code, help.String())
	}
}

// TestTrainFlagsCoverConfig: every json field of train.Config is set by a
// flag of `outcore train` (found by setting each flag and seeing which
// field changes) or listed in configFileOnly, so a new field cannot be
// silently left out of the command line.
func TestTrainFlagsCoverConfig(t *testing.T) {
	jsonName := func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		return name
	}
	typ := reflect.TypeFor[train.Config]()
	setBy := map[string]string{} // json field -> flag
	var configPath string
	trainFlags(new(train.Config), &configPath).VisitAll(func(fl *flag.Flag) {
		for _, v := range []string{"13", "true", "false", "k=v"} {
			c := train.DefaultConfig()
			if err := trainFlags(&c, &configPath).Set(fl.Name, v); err != nil {
				continue
			}
			before, after := reflect.ValueOf(train.DefaultConfig()), reflect.ValueOf(c)
			changed := false
			for i := range typ.NumField() {
				if !reflect.DeepEqual(before.Field(i).Interface(), after.Field(i).Interface()) {
					if prev, ok := setBy[jsonName(typ.Field(i))]; ok {
						t.Errorf("flags --%s and --%s both set %s", prev, fl.Name, typ.Field(i).Name)
					}
					setBy[jsonName(typ.Field(i))] = fl.Name
					changed = true
				}
			}
			if changed {
				return
			}
		}
		if fl.Name != "config" {
			t.Errorf("flag --%s sets no field of train.Config", fl.Name)
		}
	})
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := jsonName(f)
		if name == "" || name == "-" {
			continue
		}
		_, byFlag := setBy[name]
		_, fileOnly := configFileOnly[name]
		switch {
		case byFlag && fileOnly:
			t.Errorf("%s (json %q) is set by --%s but listed as config-file-only", f.Name, name, setBy[name])
		case !byFlag && !fileOnly:
			t.Errorf("train.Config.%s (json %q) has no flag in trainFlags and is not in configFileOnly", f.Name, name)
		}
	}
	if len(setBy) < 20 {
		t.Errorf("only %d fields found settable: %v", len(setBy), setBy)
	}
}

// TestTrainRangesAsGrid: `outcore train` refuses what a grid refuses at
// creation; --mem-limit 1e-30 (0 bytes once truncated) trained unlimited.
func TestTrainRangesAsGrid(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mem-limit", "1e-30"}, `mem_limit: "1e-30" is zero`},
		{[]string{"--mem-limit", "1000"}, `mem_limit: "1000" is 1000B, below 1MiB`},
		{[]string{"--weight-decay", "1e308"}, "weight_decay: 1e+308 is not a number from 0 to 1"},
		{[]string{"--lr", "1e300"}, "lr: 1e+300 is not a number from 0 (excluded) to 10"},
		{[]string{"--eval-max-nodes", "2147483648"}, "eval_max_nodes: 2147483648 is not a whole number"},
	} {
		code, _, stderr := runCLI(append([]string{"train", "--dataset", "tiny", "--system", "pyg+", "--data-dir", dir}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("train %v: exit %d, %q; want exit 2 saying %q", c.args, code, stderr, c.want)
		}
	}
}
