package kit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"outcore/engine/train"
	"outcore/engine/vocab"
)

type testOptions struct {
	n     int
	f     float64
	on    bool
	size  int64
	mode  string
	spec  string
	given bool
	text  string
}

func (o *testOptions) bind(b *Binder) {
	b.Int(&o.n, "n", 4, "count", Range(1, 256))
	b.Float(&o.f, "f", 0.5, "share", Above(0), Below(1))
	b.Bool(&o.on, "on", true, "switch")
	b.Bytes(&o.size, "size", 4096, "block", PowerOfTwo(), Range(512, 1<<20), Shown("4KiB"))
	b.Enum(&o.mode, "mode", "a", []string{"a", "b"}, "mode")
	b.Size(&o.spec, "spec", "10%", "cache")
	b.Set(&o.given, "n")
	o.text = "none"
	b.Func("text", "none", "words", func(s string) error {
		if !strings.HasPrefix(s, "w:") {
			return fmt.Errorf("%q: want w:<word>", s)
		}
		o.text = s
		return nil
	})
	b.Check(func() error {
		if o.n > 100 && o.on {
			return errors.New("n above 100 wants on=false")
		}
		return nil
	})
}

var testBind = Bind[testOptions]((*testOptions).bind)

// TestBinderDeclares: the declarations carry each default once, as shown,
// with the range in words.
func TestBinderDeclares(t *testing.T) {
	want := []train.Option{
		{Key: "n", Type: train.OptInt, Default: "4", Help: "count", Range: "1..256"},
		{Key: "f", Type: train.OptFloat, Default: "0.5", Help: "share", Range: "> 0 and < 1"},
		{Key: "on", Type: train.OptBool, Default: "true", Help: "switch"},
		{Key: "size", Type: train.OptBytes, Default: "4KiB", Help: "block", Range: "a power of two 512..1048576"},
		{Key: "mode", Type: train.OptEnum, Default: "a", Help: "mode", Values: []string{"a", "b"}},
		{Key: "spec", Type: train.OptBytes, Default: "10%", Help: "cache"},
		{Key: "text", Type: train.OptString, Default: "none", Help: "words"},
	}
	got := testBind.Options()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("declared\n%v\nwant\n%v", got, want)
	}
}

// TestBinderParses: absent options take their defaults, given ones their
// values; every value out of range, of the wrong type or of the wrong
// syntax is a configuration error naming the option.
func TestBinderParses(t *testing.T) {
	o, err := testBind.Parse(train.Config{})
	if err != nil || o.n != 4 || o.f != 0.5 || !o.on || o.size != 4096 || o.mode != "a" || o.spec != "10%" || o.given || o.text != "none" {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	o, err = testBind.Parse(train.Config{Options: map[string]string{
		"n": " 7", "f": "0.25", "on": "false", "size": "64KiB", "mode": "b", "spec": "1MiB", "text": "w:x",
	}})
	if err != nil || o.n != 7 || o.f != 0.25 || o.on || o.size != 64<<10 || o.mode != "b" || o.spec != "1MiB" || !o.given || o.text != "w:x" {
		t.Fatalf("given: %+v %v", o, err)
	}
	for _, c := range []struct{ key, val, says string }{
		{"n", "-5", "out of range"},
		{"n", "0", "want 1..256"},
		{"n", "257", "out of range"},
		{"n", "1e8", "not an integer"},
		{"n", "100000000", "out of range"},
		{"f", "0", "> 0"},
		{"f", "1", "< 1"},
		{"f", "NaN", "out of range"},
		{"f", "x", "not a number"},
		{"on", "maybe", "true/false"},
		{"size", "3000", "power of two"},
		{"size", "256", "out of range"},
		{"size", "2MiB", "out of range"},
		{"size", "lots", "lots"},
		{"mode", "c", "want one of a, b"},
		{"spec", "lots", "lots"},
		{"text", "free text", "want w:<word>"},
		{"nosuch", "1", "has no option"},
	} {
		_, err := testBind.Parse(train.Config{System: "toy", Options: map[string]string{c.key: c.val}})
		if !errors.Is(err, train.ErrConfig) || !strings.Contains(err.Error(), "options."+c.key) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s=%q: %v, want a configuration error naming options.%s that says %q", c.key, c.val, err, c.key, c.says)
		}
	}
	if _, err := testBind.Parse(train.Config{Options: map[string]string{"n": "200"}}); err == nil || !strings.Contains(err.Error(), "on=false") {
		t.Errorf("rule between options: %v", err)
	}
	if _, err := testBind.Parse(train.Config{Options: map[string]string{"n": "200", "on": "false"}}); err != nil {
		t.Errorf("rule between options satisfied: %v", err)
	}
}

// TestSizeBytes resolves sizes against the feature table.
func TestSizeBytes(t *testing.T) {
	for _, c := range []struct {
		spec string
		want int64
	}{{"10%", 100}, {"1KiB", 1024}, {"", 0}, {"lots", 0}} {
		if got := SizeBytes(c.spec, 1000); got != c.want {
			t.Errorf("SizeBytes(%q, 1000) = %d, want %d", c.spec, got, c.want)
		}
	}
}

// TestSizerMinMemory: the least feasible budget of a plan with the
// estimated workspace and the zero profile, 0 for options that do not
// parse or a dataset without nodes.
func TestSizerMinMemory(t *testing.T) {
	shape := train.DatasetShape{Nodes: 1000, FeatureDim: 8, Classes: 2, Train: 100}
	cfg := train.DefaultConfig()
	var seen Sizing[testOptions, NoProfile]
	min := Sizer[testOptions, NoProfile, sized](func(s Sizing[testOptions, NoProfile]) sized {
		seen = s
		return sized{budget: s.Budget, need: int64(s.Opt.n) << 20}
	}).MinMemory(testBind.Parse)
	cfg.Options = map[string]string{"n": "7"}
	if got := min(shape, cfg); got != 7<<20 {
		t.Errorf("MinMemory = %d, want %d", got, 7<<20)
	}
	if seen.Shape != shape || seen.Opt.n != 7 || seen.WS != EstimateWorkspace(shape, cfg) {
		t.Errorf("sizing saw %+v", seen)
	}
	cfg.Options = map[string]string{"n": "-5"}
	if got := min(shape, cfg); got != 0 {
		t.Errorf("bad options: %d, want 0", got)
	}
	cfg.Options = nil
	if got := min(train.DatasetShape{}, cfg); got != 0 {
		t.Errorf("no nodes: %d, want 0", got)
	}
}

// TestBase reports what it was given, as copies.
func TestBase(t *testing.T) {
	b := NewBase("toy", OnCPU("sample", "train"), "one", "two")
	if b.Name() != "toy" || fmt.Sprint(b.Devices()) != "map[sample:cpu train:cpu]" || fmt.Sprint(b.Deviations()) != "[one two]" {
		t.Fatalf("%s %v %v", b.Name(), b.Devices(), b.Deviations())
	}
	b.Devices()["sample"] = "gpu"
	b.Deviations()[0] = "changed"
	if b.Devices()["sample"] != "cpu" || b.Deviations()[0] != "one" {
		t.Fatal("Base handed out its own map or slice")
	}
}

// TestNew: the constructor parses the options (refusing bad ones) and
// builds with what it parsed.
func TestNew(t *testing.T) {
	build := New(testBind.Parse, func(cfg train.Config, o testOptions) string { return fmt.Sprintf("%s:%d", cfg.System, o.n) })
	if s, err := build(train.Config{System: "toy", Options: map[string]string{"n": "9"}}); err != nil || s != "toy:9" {
		t.Fatalf("New built %q, %v", s, err)
	}
	if s, err := build(train.Config{Options: map[string]string{"n": "-5"}}); !errors.Is(err, train.ErrConfig) || s != "" {
		t.Fatalf("New with a bad option: %q, %v", s, err)
	}
	if SampleOnlyDeviations(false) != nil || len(SampleOnlyDeviations(true)) != 1 {
		t.Fatal("SampleOnlyDeviations")
	}
}

// TestSizeOrAuto: auto by default, a size kept as given, anything else
// refused naming the option; declared as text with auto as its default.
func TestSizeOrAuto(t *testing.T) {
	type opt struct{ cache string }
	bind := Bind[opt](func(o *opt, b *Binder) { b.SizeOrAuto(&o.cache, "cache", "device cache") })
	if got := bind.Options(); len(got) != 1 || got[0].Type != train.OptString || got[0].Default != Auto {
		t.Fatalf("declared %+v, want one text option defaulting to %q", got, Auto)
	}
	for _, tc := range []struct {
		given, want string
		fails       bool
	}{{"", Auto, false}, {"auto", Auto, false}, {"256MiB", "256MiB", false}, {"25%", "25%", false}, {"lots", "", true}} {
		cfg := train.Config{Options: map[string]string{}}
		if tc.given != "" {
			cfg.Options["cache"] = tc.given
		}
		o, err := bind.Parse(cfg)
		if tc.fails {
			if err == nil || !strings.Contains(err.Error(), "cache") {
				t.Errorf("%q: error %v, want one naming cache", tc.given, err)
			}
			continue
		}
		if err != nil || o.cache != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.given, o.cache, err, tc.want)
		}
	}
}

// TestRegisterTakesTheFloorFromTheSizing: a variant's floor is its
// sizing's (Register makes MinMemory of it); one set by hand is refused
// before anything is registered.
func TestRegisterTakesTheFloorFromTheSizing(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "MinMemory is the sizing's floor") {
			t.Errorf("Register with a hand-set MinMemory: %v, want a panic naming the sizing's floor", r)
		}
	}()
	size := func(s Sizing[testOptions, NoProfile]) sized { return sized{budget: s.Budget, need: 1} }
	Register(vocab.Variant{Name: "hand-floor", MinMemory: func(train.DatasetShape, train.Config) int64 { return 1 }},
		func(train.Config) (train.System, error) { return nil, nil }, testBind, size)
}
