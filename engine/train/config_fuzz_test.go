package train

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestParseMemLimitBounds: limits at and beyond int64 are refused with the
// maximum named, never wrapped to a negative number (which would mean "no
// limit" to the cgroup code).
func TestParseMemLimitBounds(t *testing.T) {
	maxI := strconv.FormatInt(math.MaxInt64, 10)
	tests := []struct {
		in   string
		base int64
		want int64
		bad  string // part of the error, "" = accepted
	}{
		{"1e30", 0, 0, "largest memory limit, 1 PiB"},
		{"1e30MiB", 0, 0, "largest memory limit"},
		{"1e400", 0, 0, "largest memory limit"},
		{maxI, 0, 0, "largest memory limit"},
		{"9223372036854775808", 0, 0, "largest memory limit"},
		{"18446744073709551616", 0, 0, "largest memory limit"},
		{"1PiB", 0, 0, "bad unit"},
		{"1024TiB", 0, MaxMemLimitBytes, ""},
		{"1025TiB", 0, 0, "largest memory limit"},
		{strconv.FormatInt(MaxMemLimitBytes, 10), 0, MaxMemLimitBytes, ""},
		{strconv.FormatInt(MaxMemLimitBytes+1, 10), 0, 0, "largest memory limit"},
		{"10000%", math.MaxInt64, 0, "largest memory limit"},
		{"100%", math.MaxInt64, 0, "largest memory limit"},
		{"1%", 1 << 40, 1 << 40 / 100, ""},
		{"NaN%", 100, 0, "bad percentage"},
		{"Inf%", 100, 0, "bad percentage"},
		{"1e-300%", 100, 0, ""},
		{"-" + maxI, 0, 0, "bad"},
		{"NaN", 0, 0, "bad unit"},
	}
	for _, tc := range tests {
		got, err := ParseMemLimit(tc.in, tc.base)
		switch {
		case tc.bad == "" && (err != nil || got != tc.want):
			t.Errorf("ParseMemLimit(%q, %d) = %d, %v; want %d", tc.in, tc.base, got, err, tc.want)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("ParseMemLimit(%q, %d) = %d, %v; want an error saying %q", tc.in, tc.base, got, err, tc.bad)
		}
	}
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

// FuzzParseMemLimit: any string either fails or gives a limit in
// [0, MaxMemLimitBytes]; never a panic or a negative number.
func FuzzParseMemLimit(f *testing.F) {
	for _, s := range []string{"", "0", "256MiB", "2 GiB", "1.5G", "25%", "1e30", "9223372036854775807", "-1", "NaN%", "10000%", "1e-9%", "64k"} {
		f.Add(s, int64(1<<30))
	}
	f.Add("100%", int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, s string, base int64) {
		v, err := ParseMemLimit(s, base)
		if err != nil {
			return
		}
		if v < 0 || v > MaxMemLimitBytes {
			t.Fatalf("ParseMemLimit(%q, %d) = %d, outside [0, %d]", s, base, v, MaxMemLimitBytes)
		}
	})
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
		if c.Layers != len(c.Fanout) || c.EvalBatch <= 0 || c.EvalEvery <= 0 || c.MemLimitBytes < 0 || c.MemLimitBytes > MaxMemLimitBytes {
			t.Fatalf("validated config is inconsistent: %s", fmt.Sprintf("%+v", c))
		}
		if c.MemLimit != "" {
			if _, _, err := parseMemLimit(c.MemLimit); err != nil {
				t.Fatalf("validated mem_limit %q does not parse: %v", c.MemLimit, err)
			}
		}
	})
}
