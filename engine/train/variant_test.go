package train

import (
	"errors"
	"strings"
	"testing"
)

func TestVariantRegistry(t *testing.T) {
	v, ok := LookupVariant(ReferenceName)
	if !ok || v.New == nil || v.Order != 100 {
		t.Fatalf("reference not registered: %+v %v", v, ok)
	}
	vs := Variants()
	for i := 1; i < len(vs); i++ {
		a, b := vs[i-1], vs[i]
		if a.Order > b.Order || a.Order == b.Order && a.Name > b.Name {
			t.Fatalf("Variants not sorted by order then name: %s (%d) before %s (%d)", a.Name, a.Order, b.Name, b.Order)
		}
	}
	if len(Names()) != len(vs) {
		t.Fatalf("Names %v, Variants %d", Names(), len(vs))
	}
	for _, bad := range []Variant{
		{Name: "", New: v.New},
		{Name: ReferenceName, New: v.New}, // duplicate
		{Name: "x-nil-factory"},
		{Name: "x-dup-opt", New: v.New, Options: []Option{{Key: "a", Type: OptInt}, {Key: "a", Type: OptInt}}},
		{Name: "x-bad-type", New: v.New, Options: []Option{{Key: "a", Type: "number"}}},
		{Name: "x-empty-enum", New: v.New, Options: []Option{{Key: "a", Type: OptEnum}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterVariant(%+v) did not panic", bad)
				}
			}()
			RegisterVariant(bad)
		}()
	}
}

func TestValidateOptions(t *testing.T) {
	base := DefaultConfig()
	base.Dataset = "d"
	cases := []struct {
		opts map[string]string
		want string // "" = valid
	}{
		{nil, ""},
		{map[string]string{"topology": "mmap"}, ""},
		{map[string]string{"nosuchkey": "1"}, `reference has no option "nosuchkey" (known: topology)`},
		{map[string]string{"topology": "disk"}, `options.topology: "disk", want one of memory, mmap, storage`},
	}
	for _, c := range cases {
		cfg := base
		cfg.Options = c.opts
		err := cfg.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.opts, err)
		case c.want != "" && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one containing %q", c.opts, err, c.want)
		}
	}
}

func TestOptionCheck(t *testing.T) {
	cases := []struct {
		o    Option
		val  string
		fail bool
	}{
		{Option{Type: OptInt}, "12", false},
		{Option{Type: OptInt}, "1.5", true},
		{Option{Type: OptFloat}, "1.5", false},
		{Option{Type: OptFloat}, "x", true},
		{Option{Type: OptBool}, "true", false},
		{Option{Type: OptBool}, "yes", true},
		{Option{Type: OptBytes}, "64MiB", false},
		{Option{Type: OptBytes}, "10%", false},
		{Option{Type: OptBytes}, "64 parsecs", true},
		{Option{Type: OptString}, "anything", false},
		{Option{Type: OptEnum, Values: []string{"host", "device"}}, "device", false},
		{Option{Type: OptEnum, Values: []string{"host", "device"}}, "gpu", true},
	}
	for _, c := range cases {
		if err := c.o.check(c.val); (err != nil) != c.fail {
			t.Errorf("%s %q: err %v", c.o.Type, c.val, err)
		}
	}
}
