// Package units formats and parses the quantities outcore shows and reads:
// byte counts, memory limits and durations (docs/ARCHITECTURE.md,
// "Packages"). It is the one place for them; a view that writes a size or
// a time for a person picks one of the documented forms here instead of
// keeping its own copy.
package units

import "fmt"

// Binary units.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
)

var binaryUnits = []struct {
	size int64
	name string
}{{TiB, "TiB"}, {GiB, "GiB"}, {MiB, "MiB"}, {KiB, "KiB"}}

// ByteFormat says how a byte count is written; the zero value is the
// compact form of Bytes ("256MiB", "1.5GiB", "512B"), which ParseMemLimit
// reads back.
type ByteFormat struct {
	// Unit fixes the unit (KiB, MiB, GiB or TiB): "0.5MiB", "2048MiB".
	// 0 picks the largest binary unit the count reaches, up to TiB, and
	// plain bytes below 1 KiB.
	Unit int64
	// Exact picks instead the largest unit the count is a whole multiple
	// of, so that a limit is stated exactly ("4 MiB", "1536 KiB", "100
	// bytes").
	Exact bool
	// Space puts a space between number and unit, and writes plain bytes
	// as "bytes": "56.3 MiB", "100 bytes" (prose, not a value to type).
	Space bool
	// Decimals, when > 0, always writes that many digits after the point
	// ("12.0 MiB"); 0 writes one digit, and none for a whole number.
	Decimals int
}

// Format writes n.
func (f ByteFormat) Format(n int64) string {
	unit, name := int64(1), "B"
	switch {
	case f.Unit > 0:
		for _, u := range binaryUnits {
			if u.size == f.Unit {
				unit, name = u.size, u.name
			}
		}
	case f.Exact:
		for _, u := range binaryUnits {
			if n >= u.size && n%u.size == 0 {
				unit, name = u.size, u.name
				break
			}
		}
	default:
		for _, u := range binaryUnits {
			if n >= u.size {
				unit, name = u.size, u.name
				break
			}
		}
	}
	sep := ""
	if f.Space {
		sep = " "
		if unit == 1 {
			name = "bytes"
		}
	}
	if unit == 1 {
		return fmt.Sprintf("%d%s%s", n, sep, name)
	}
	v := float64(n) / float64(unit)
	switch {
	case f.Decimals > 0:
		return fmt.Sprintf("%.*f%s%s", f.Decimals, v, sep, name)
	case v == float64(int64(v)):
		return fmt.Sprintf("%d%s%s", int64(v), sep, name)
	}
	return fmt.Sprintf("%.1f%s%s", v, sep, name)
}

// Bytes writes a byte count in the compact form with a binary unit
// ("256MiB", "1.5GiB"; ByteFormat's zero value).
func Bytes(n int64) string { return ByteFormat{}.Format(n) }

// Limit writes a memory limit: Bytes, or "none" for no limit (0 or less),
// as a grid writes it.
func Limit(n int64) string {
	if n <= 0 {
		return "none"
	}
	return Bytes(n)
}
