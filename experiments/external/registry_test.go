package external

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const goodRegistry = `{"systems": [{
  "name": "tiny-sgd",
  "help": "logistic regression in plain Python",
  "command": ["prog", "train.py"],
  "workdir": "work",
  "env": {"LD_LIBRARY_PATH": "/opt/lib"},
  "options": {
    "epochs": {"type": "int", "min": 1, "max": 50, "default": 3, "help": "epochs"},
    "lr":     {"type": "float", "min": 0.0001, "max": 10, "default": 0.5},
    "eval":   {"type": "bool", "default": true},
    "model":  {"type": "enum", "values": ["logreg", "mean"], "default": "mean"},
    "cache":  {"type": "bytes", "min": 0, "max": "1GiB", "default": "64MiB"}
  }
}]}`

// writeRegistry writes body as systems.json in a fresh directory with an
// executable prog and a work directory beside it.
func writeRegistry(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prog"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, FileName)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadGood(t *testing.T) {
	p := writeRegistry(t, goodRegistry)
	r, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := r.Lookup("tiny-sgd")
	if !ok || !slices.Equal(r.Names(), []string{"tiny-sgd"}) {
		t.Fatalf("names %v", r.Names())
	}
	dir := filepath.Dir(p)
	if s.Command[0] != filepath.Join(dir, "prog") || s.Command[1] != "train.py" || s.Workdir != filepath.Join(dir, "work") {
		t.Errorf("paths not resolved against the file's directory: %q, workdir %q", s.Command, s.Workdir)
	}
	argv, err := Argv(s, map[string]any{"epochs": float64(7), "cache": "2MiB", "model": "logreg"},
		RunFiles{Dataset: "/d/tiny", Records: "/dev/fd/3", Scratch: "/s/1", RunID: 9})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "prog"), "train.py", "--cache=2097152", "--epochs=7", "--eval=true", "--lr=0.5", "--model=logreg",
		"--outcore-dataset=/d/tiny", "--outcore-records=/dev/fd/3", "--outcore-scratch=/s/1"}
	if !slices.Equal(argv, want) {
		t.Errorf("argv\n got %q\nwant %q", argv, want)
	}
	env, err := Env(s, RunFiles{Dataset: "/d/tiny", Records: "/dev/fd/3", Scratch: "/s/1", RunID: 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/s/1", "TMPDIR=/s/1", "LD_LIBRARY_PATH=/opt/lib",
		"OUTCORE_DATASET=/d/tiny", "OUTCORE_RECORDS=/dev/fd/3", "OUTCORE_SCRATCH=/s/1", "OUTCORE_RUN_ID=9"} {
		if !slices.Contains(env, w) {
			t.Errorf("env lacks %s: %q", w, env)
		}
	}
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		if os.Getenv(k) != "" && !slices.Contains([]string{"PATH", "HOME", "TMPDIR", "LANG"}, k) && !strings.HasPrefix(k, "OUTCORE") && !strings.HasPrefix(k, "PYTHON") && k != "LD_LIBRARY_PATH" {
			t.Errorf("env passes the server's own %s", k)
		}
	}
}

// TestRequestRefusals: a request names only a registered system and sets
// only its declared options, in range; the message names what is wrong.
func TestRequestRefusals(t *testing.T) {
	r, err := Load(writeRegistry(t, goodRegistry))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		system string
		opts   map[string]any
		want   string
	}{
		{"nope", nil, `"nope" is not a registered external system`},
		{"tiny-sgd", map[string]any{"command": "/bin/sh"}, `no option "command"`},
		{"tiny-sgd", map[string]any{"env": map[string]any{"LD_PRELOAD": "x"}}, `no option "env"`},
		{"tiny-sgd", map[string]any{"outcore-records": "/etc/passwd"}, `no option "outcore-records"`},
		{"tiny-sgd", map[string]any{"epochs": float64(51)}, `option "epochs": 51 is outside [1, 50]`},
		{"tiny-sgd", map[string]any{"epochs": 2.5}, `option "epochs": 2.5 is not a whole number`},
		{"tiny-sgd", map[string]any{"epochs": "3"}, `option "epochs": "3" is a string`},
		{"tiny-sgd", map[string]any{"lr": float64(0)}, `option "lr": 0 is outside`},
		{"tiny-sgd", map[string]any{"eval": "yes"}, `option "eval": yes (string) is not true or false`},
		{"tiny-sgd", map[string]any{"model": "gat; rm -rf /"}, `option "model"`},
		{"tiny-sgd", map[string]any{"cache": "2GiB"}, `option "cache": 2GiB is outside`},
		{"tiny-sgd", map[string]any{"cache": "10%"}, `not a percentage`},
	} {
		err := r.Check(c.system, c.opts)
		if err == nil || !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%q, %v) = %v, want an error with %q", c.system, c.opts, err, c.want)
		}
	}
	if err := r.Check("tiny-sgd", map[string]any{"epochs": json.Number("4"), "lr": 1.5, "eval": false, "cache": 4096}); err != nil {
		t.Errorf("a valid request was refused: %v", err)
	}
	if err := r.Check("nope", nil); err == nil || !strings.Contains(err.Error(), "registers tiny-sgd); only the operator") {
		t.Errorf("the refusal does not list the registered systems: %v", err)
	}
	var empty *Registry
	if err := empty.Check("tiny-sgd", nil); err == nil || !strings.Contains(err.Error(), "no registry file") {
		t.Errorf("an empty registry accepted a system: %v", err)
	}
}

// TestParseRefusals: the registry's own mistakes, each named with the
// system and the field.
func TestParseRefusals(t *testing.T) {
	sys := func(s string) string { return `{"systems": [` + s + `]}` }
	for _, c := range []struct{ body, want string }{
		{`{"systems": []`, "not JSON"},
		{`{}`, `"systems" is missing`},
		{`{"systems": [], "x": 1}`, `unknown field "x"`},
		{sys(`{"name": "a", "command": ["p"], "shell": "sh -c"}`), `unknown field "shell"`},
		{sys(`{"name": "A", "command": ["p"]}`), `field "name": "A" is not a name`},
		{sys(`{"name": "a", "command": "p --x"}`), `field "systems.command"`},
		{sys(`{"name": "a", "command": []}`), `system "a": field "command"`},
		{sys(`{"name": "a", "command": ["p"]}, {"name": "a", "command": ["p"]}`), `registered twice`},
		{sys(`{"name": "a", "command": ["p"], "env": {"OUTCORE_RECORDS": "/x"}}`), `OUTCORE`},
		{sys(`{"name": "a", "command": ["p"], "env": {"a b": "/x"}}`), `not a variable name`},
		{sys(`{"name": "a", "command": ["p"], "options": {"outcore_x": {"type": "bool", "default": true}}}`), `outcore's own`},
		{sys(`{"name": "a", "command": ["p"], "options": {"X": {"type": "bool", "default": true}}}`), `"X" is not an option name`},
		{sys(`{"name": "a", "command": ["p"], "options": {"n": {"type": "int", "default": 1}}}`), `option "n": fields "min" and "max" are required`},
		{sys(`{"name": "a", "command": ["p"], "options": {"n": {"type": "int", "min": 5, "max": 1, "default": 1}}}`), `"min" (5) is above "max" (1)`},
		{sys(`{"name": "a", "command": ["p"], "options": {"n": {"type": "int", "min": 0, "max": 9}}}`), `option "n": field "default" is required`},
		{sys(`{"name": "a", "command": ["p"], "options": {"n": {"type": "int", "min": 0, "max": 9, "default": 10}}}`), `option "n": field "default": 10 is outside [0, 9]`},
		{sys(`{"name": "a", "command": ["p"], "options": {"n": {"type": "str", "default": "x"}}}`), `field "type": "str" is not a type`},
		{sys(`{"name": "a", "command": ["p"], "options": {"m": {"type": "enum", "values": ["-x"], "default": "-x"}}}`), `"-x" is not a value`},
		{sys(`{"name": "a", "command": ["p"], "options": {"m": {"type": "enum", "values": ["a"], "default": "b"}}}`), `field "default": b is not one of a`},
		{sys(`{"name": "a", "command": ["p"], "options": {"m": {"type": "bool", "min": 1, "default": true}}}`), `no min, max or values`},
	} {
		_, err := Parse([]byte(c.body), "/etc/outcore")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s) = %v, want an error with %q", c.body, err, c.want)
		}
	}
}

// TestLoadFiles: the file's own checks: mode, and the program and the
// working directory it names.
func TestLoadFiles(t *testing.T) {
	p := writeRegistry(t, goodRegistry)
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "writable by its group or by others") {
		t.Errorf("a world-writable registry was loaded: %v", err)
	}
	p = writeRegistry(t, strings.Replace(goodRegistry, `"prog"`, `"missing"`, 1))
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), `system "tiny-sgd": field "command"[0]`) || !strings.Contains(err.Error(), p) {
		t.Errorf("a missing program was accepted: %v", err)
	}
	p = writeRegistry(t, goodRegistry)
	if err := os.Chmod(filepath.Join(filepath.Dir(p), "prog"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "not an executable file") {
		t.Errorf("a program without x bits was accepted: %v", err)
	}
	p = writeRegistry(t, strings.Replace(goodRegistry, `"work"`, `"nowhere"`, 1))
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), `field "workdir"`) {
		t.Errorf("a missing workdir was accepted: %v", err)
	}
	r, err := LoadDefault(t.TempDir())
	if err != nil || len(r.Names()) != 0 {
		t.Errorf("a data directory without %s: %v, %v", FileName, r.Names(), err)
	}
	if name, ok := ParseRef("external:tiny-sgd"); !ok || name != "tiny-sgd" {
		t.Errorf("ParseRef: %q %v", name, ok)
	}
	if _, ok := ParseRef("ginex"); ok {
		t.Error("ParseRef took a built-in for an external system")
	}
}

// FuzzRegistry: Parse never panics, and a registry it accepts gives every
// system an argument vector from its defaults whose options all are
// declared ones, one argument each.
func FuzzRegistry(f *testing.F) {
	f.Add([]byte(goodRegistry))
	f.Add([]byte(`{"systems": [{"name": "a", "command": ["/bin/true"], "options": {"m": {"type": "enum", "values": ["x"], "default": "x"}}}]}`))
	f.Add([]byte(`{"systems": [{"name": "b", "command": ["p"], "options": {"c": {"type": "bytes", "min": "1K", "max": "1e3MiB", "default": 2048}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data, "/srv")
		if err != nil {
			if !errors.Is(err, ErrRegistry) {
				t.Fatalf("error without ErrRegistry: %v", err)
			}
			return
		}
		files := RunFiles{Dataset: "/d", Records: "/r", Scratch: "/s"}
		for _, n := range r.Names() {
			s, _ := r.Lookup(n)
			argv, err := Argv(s, nil, files)
			if err != nil {
				t.Fatalf("defaults of accepted system %q refused: %v", n, err)
			}
			if len(argv) != len(s.Command)+len(s.Options)+3 || !filepath.IsAbs(argv[0]) {
				t.Fatalf("argv %q of %q", argv, n)
			}
			for _, a := range argv[len(s.Command) : len(argv)-3] {
				name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if _, ok := s.Options[name]; !ok || !strings.HasPrefix(a, "--") {
					t.Fatalf("argument %q is not a declared option", a)
				}
			}
		}
	})
}

// TestCheckText: options written as text (a grid's system entry) are
// typed by their declaration and checked as Check checks them.
func TestCheckText(t *testing.T) {
	r, err := Load(writeRegistry(t, goodRegistry))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckText("tiny-sgd", map[string]string{"epochs": "7", "lr": "0.25", "eval": "false", "cache": "2MiB", "model": "logreg"}); err != nil {
		t.Errorf("good options refused: %v", err)
	}
	for _, c := range []struct {
		system string
		opts   map[string]string
		want   string
	}{
		{"nope", nil, `"nope" is not a registered external system`},
		{"tiny-sgd", map[string]string{"command": "/bin/sh"}, `no option "command"`},
		{"tiny-sgd", map[string]string{"epochs": "seven"}, `option "epochs": "seven" is not a number`},
		{"tiny-sgd", map[string]string{"epochs": "2.5"}, `option "epochs": 2.5 is not a whole number`},
		{"tiny-sgd", map[string]string{"eval": "yes"}, `option "eval": "yes" is not true or false`},
		{"tiny-sgd", map[string]string{"epochs": "51"}, `option "epochs": 51 is outside [1, 50]`},
	} {
		err := r.CheckText(c.system, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrRegistry) {
			t.Errorf("%s %v: got %v, want %q", c.system, c.opts, err, c.want)
		}
	}
}
