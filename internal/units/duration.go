package units

import (
	"fmt"
	"math"
	"time"
)

// Duration writes an elapsed time the way the dashboard's ticker does, to
// the second: "4s", "2m 05s", "1h 03m".
func Duration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
	h, m, r := s/3600, (s%3600)/60, s%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %02ds", m, r)
	}
	return fmt.Sprintf("%ds", r)
}

// Estimate writes an expected duration given in seconds, no finer than it
// is known: "45s" below a minute, whole minutes below an hour ("12m",
// rounded), then hours and minutes ("1h 20m").
func Estimate(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(math.Round(d.Minutes())))
	}
	return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
}
