package train

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"outcore/internal/units"
)

// TestMemLimitBounds: a limit beyond the largest is refused by Validate
// with the maximum named, never wrapped to a negative number.
func TestMemLimitBounds(t *testing.T) {
	c := DefaultConfig()
	c.Dataset = "d"
	c.MemLimit = "1e30"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "mem_limit") || !strings.Contains(err.Error(), "1 PiB") {
		t.Errorf("Validate with mem_limit 1e30: %v", err)
	}
	c.MemLimit, c.MemLimitBytes = "", math.MaxInt64
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "mem_limit_bytes") {
		t.Errorf("Validate with mem_limit_bytes MaxInt64: %v", err)
	}
}

// TestParseConfigInt64Bounds: numbers outside a field's type are errors
// naming the field, not wrapped values.
func TestParseConfigInt64Bounds(t *testing.T) {
	for _, in := range []string{
		`{"seed": 9223372036854775808}`,
		`{"epochs": 1e30}`,
		`{"hidden": 99999999999999999999}`,
		`{"mem_limit_bytes": 9223372036854775808}`,
		`{"fanout": [9223372036854775808]}`,
		`{"batch": -9223372036854775809}`,
	} {
		if _, err := ParseConfig([]byte(in)); err == nil {
			t.Errorf("ParseConfig(%s) accepted", in)
		}
	}
	c, err := ParseConfig([]byte(`{"dataset":"d","seed": 9223372036854775807, "epochs": 1}`))
	if err != nil || c.Seed != math.MaxInt64 {
		t.Fatalf("seed MaxInt64: %d %v", c.Seed, err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
}

// FuzzParseConfig: any bytes either fail to parse or validate, or give a
// configuration whose derived fields are consistent.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"dataset":"cora","model":"gcn","fanout":[-1,-1],"hidden":16}`,
		`{"dataset":"t","system":"reference","epochs":3,"mem_limit":"25%","options":{"cache":"10%"}}`,
		`{"dataset":"t","mem_limit":"1e30"}`,
		`{"dataset":"t","fanout":[]}`,
		`{"dataset":"t","eval_fanout":[1],"fanout":[1,2]}`,
		`{"dataset":"t","warmup_epochs":5,"epochs":2}`,
		`{} {}`,
		`[1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			return
		}
		before := fmt.Sprintf("%+v", c)
		err = c.Validate()
		if after := fmt.Sprintf("%+v", c); after != before {
			t.Fatalf("Validate changed the configuration: %s to %s", before, after)
		}
		c.Normalize()
		if nerr := c.Validate(); (nerr == nil) != (err == nil) {
			t.Fatalf("Validate before Normalize: %v, after: %v", err, nerr)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "invalid config: ") {
				t.Fatalf("error without the field: %v", err)
			}
			return
		}
		if c.Layers != len(c.Fanout) || c.EvalBatch <= 0 || c.EvalEvery <= 0 || c.MemLimitBytes < 0 || c.MemLimitBytes > units.MaxMemLimitBytes {
			t.Fatalf("validated config is inconsistent: %s", fmt.Sprintf("%+v", c))
		}
		if c.MemLimit != "" {
			if err := units.CheckMemLimit(c.MemLimit); err != nil {
				t.Fatalf("validated mem_limit %q does not parse: %v", c.MemLimit, err)
			}
		}
	})
}
