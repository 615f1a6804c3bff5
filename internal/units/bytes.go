// Package units formats and parses the quantities outcore shows and reads:
// byte counts, memory limits and durations. It is the one place for them;
// every package that writes a size or a time for a person goes through it.
package units

import "fmt"

// Bytes writes a byte count with a binary unit ("256MiB", "1.5GiB").
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit || u == "TiB" {
			if f == float64(int64(f)) {
				return fmt.Sprintf("%d%s", int64(f), u)
			}
			return fmt.Sprintf("%.1f%s", f, u)
		}
	}
	return fmt.Sprintf("%dB", n)
}
