package cli

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// termSafe is text from the store (names, notes a person typed, perhaps
// through the dashboard) made safe to print on a terminal: control
// characters (escape sequences), invisible formatting characters (bidi
// overrides) and invalid UTF-8 are written as \u{…} escapes, and text over
// max characters (max > 0) is cut with "…". A table cell cannot then move
// the cursor, rewrite the screen or print right to left.
func termSafe(s string, max int) string {
	var b strings.Builder
	n := 0
	for i, r := range s {
		if max > 0 && n == max {
			b.WriteString("…")
			break
		}
		n++
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, "\\u{%x}", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
