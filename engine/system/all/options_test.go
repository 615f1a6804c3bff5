package all

import (
	"errors"
	"strings"
	"testing"

	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// TestOptionValuesCheckedAtValidation: a variant option's value out of
// its declared range, not of its type or not of its syntax is refused by
// Config.Validate (so at grid creation as well as at run time), with an
// error naming the option; every declared default that is a value passes.
func TestOptionValuesCheckedAtValidation(t *testing.T) {
	bad := map[string][]string{
		train.OptInt:    {"-5", "100000000", "1e8", "four"},
		train.OptFloat:  {"1e308", "-1e308", "NaN", "x"},
		train.OptBool:   {"maybe"},
		train.OptBytes:  {"lots", "-1", "1e30"},
		train.OptEnum:   {"none of these"},
		train.OptString: {"free text", "$(id)"},
	}
	for _, v := range train.Variants() {
		for _, o := range v.Options {
			if (o.Type == train.OptInt || o.Type == train.OptFloat) && o.Range == "" {
				t.Errorf("%s: %s option %s declares no range", v.Name, o.Type, o.Key)
			}
			for _, val := range bad[o.Type] {
				cfg := systest.Config(t, v.Name, map[string]string{o.Key: val})
				err := cfg.Validate()
				if !errors.Is(err, train.ErrConfig) || !strings.Contains(err.Error(), "options."+o.Key) {
					t.Errorf("%s: options.%s=%q: %v, want a configuration error naming the option", v.Name, o.Key, val, err)
				}
			}
			cfg := systest.Config(t, v.Name, map[string]string{o.Key: o.Default})
			if err := cfg.Validate(); err != nil && !strings.Contains(err.Error(), "options."+o.Key) {
				t.Errorf("%s: options.%s=%q (its default): %v", v.Name, o.Key, o.Default, err)
			} else if err != nil && isValue(o) {
				t.Errorf("%s: options.%s=%q, its declared default, refused: %v", v.Name, o.Key, o.Default, err)
			}
		}
	}
}

// isValue: the option's shown default is a value of its type (not words
// such as "number of CPUs" or "from the budget").
func isValue(o train.Option) bool {
	return !strings.Contains(o.Default, " ")
}
