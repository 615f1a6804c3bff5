package units

// Clip cuts s to n bytes for a message, marking the cut with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
