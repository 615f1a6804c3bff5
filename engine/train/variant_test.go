package train

import (
	"errors"
	"strings"
	"testing"

	"outcore/engine/vocab"
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
		{Variant: vocab.Variant{Name: ""}, New: v.New},
		{Variant: vocab.Variant{Name: ReferenceName}, New: v.New}, // duplicate
		{Variant: vocab.Variant{Name: "x-nil-factory"}},
		{Variant: vocab.Variant{Name: "x-dup-opt", Options: []Option{{Key: "a", Type: OptInt}, {Key: "a", Type: OptInt}}}, New: v.New},
		{Variant: vocab.Variant{Name: "x-bad-type", Options: []Option{{Key: "a", Type: "number"}}}, New: v.New},
		{Variant: vocab.Variant{Name: "x-empty-enum", Options: []Option{{Key: "a", Type: OptEnum}}}, New: v.New},
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
