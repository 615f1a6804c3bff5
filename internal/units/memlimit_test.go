package units

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParseMemLimit(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"", 0, false},
		{"0", 0, false},
		{"1048576", 1 << 20, false},
		{"2GiB", 2 << 30, false},
		{"2 GiB", 2 << 30, false},
		{"512MB", 512e6, false},
		{"1.5G", 3 << 29, false},
		{"64k", 64 << 10, false},
		{"25%", 250, false},
		{"12.5%", 125, false},
		{"lots", 0, true},
		{"5 parsecs", 0, true},
		{"-1GB", 0, true},
		{"0%", 0, true},
		{"%", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseMemLimit(tc.in, 1000)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("ParseMemLimit(%q) = %d, %v; want %d (bad=%v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
	if _, err := ParseMemLimit("10%", 0); err == nil {
		t.Error("percentage without feature size accepted")
	}
}

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
		{"11000%", 1 << 20, 11000 * (1 << 20) / 100, ""}, // a small-scale study's share on tiny's 1 MiB
		{"1000000%", 1 << 20, 10000 * (1 << 20), ""},
		{"1000001%", 1 << 20, 0, "bad percentage"},
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
