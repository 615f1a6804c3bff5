package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxMemLimitBytes is the largest memory limit accepted: 1 PiB. A larger
// number is a typo, and one beyond int64 would wrap to a negative limit,
// which would mean no limit at all.
const MaxMemLimitBytes int64 = 1 << 50

// MaxMemLimitText names MaxMemLimitBytes in messages.
const MaxMemLimitText = "1 PiB (1125899906842624 bytes)"

// MaxMemLimitPercent is the largest share of the features a limit may
// name. Shares far above 100 % are what a study at small scale asks for
// on a dataset of a few MiB (the variants' floors do not shrink with the
// features: 11,000 % of `tiny`'s 1 MiB, studies.Study.SmallScale); what
// bounds a limit is MaxMemLimitBytes.
const MaxMemLimitPercent = 1_000_000

// ParseMemLimit parses a memory limit: a byte count with an optional unit
// (B, KB, MB, GB, TB powers of 1000; KiB, MiB, GiB, TiB powers of 1024; K, M,
// G, T are taken as binary), or a percentage of featureBytes ("25%").
// "0" and "" mean no limit. Limits above MaxMemLimitBytes are an error.
func ParseMemLimit(s string, featureBytes int64) (int64, error) {
	v, pct, err := parseMemLimit(s)
	if err != nil {
		return 0, err
	}
	if pct {
		if featureBytes <= 0 {
			return 0, fmt.Errorf("%q is a percentage but the feature size is unknown", s)
		}
		b := v / 100 * float64(featureBytes)
		if b > float64(MaxMemLimitBytes) {
			return 0, fmt.Errorf("%q of %d feature bytes is above the largest memory limit, %s", s, featureBytes, MaxMemLimitText)
		}
		return int64(b), nil
	}
	return int64(v), nil
}

// parseMemLimit returns the number (bytes, or percent when pct).
func parseMemLimit(s string) (v float64, pct bool, err error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, false, nil
	}
	if strings.HasSuffix(t, "%") {
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
		if err != nil || !(v > 0 && v <= MaxMemLimitPercent) {
			return 0, false, fmt.Errorf("bad percentage %q (want e.g. 25%%)", s)
		}
		return v, true, nil
	}
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	mul := map[string]float64{
		"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	}[unit]
	if mul == 0 {
		return 0, false, fmt.Errorf("bad unit %q in %q (want B, KB, MB, GB, KiB, MiB, GiB, TiB or %%)", t[i:], s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && errors.Is(err, strconv.ErrRange) && f > 0 {
		return 0, false, fmt.Errorf("%q is above the largest memory limit, %s", s, MaxMemLimitText)
	}
	if err != nil || f < 0 || math.IsNaN(f) {
		return 0, false, fmt.Errorf("bad size %q", s)
	}
	if b := f * mul; b > float64(MaxMemLimitBytes) {
		return 0, false, fmt.Errorf("%q is above the largest memory limit, %s", s, MaxMemLimitText)
	}
	return f * mul, false, nil
}

// CheckMemLimit checks a memory limit's syntax and range without the
// feature size a percentage is of.
func CheckMemLimit(s string) error {
	_, _, err := parseMemLimit(s)
	return err
}
