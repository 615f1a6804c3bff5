package cli

import "testing"

func TestTermSafe(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain name", 0, "plain name"},
		{"red \x1b[31m alert", 0, `red \u{1b}[31m alert`},
		{"invoice\u202egpj.exe", 0, `invoice\u{202e}gpj.exe`},
		{"a\tb\nc\rd", 0, `a b\u{a}c\u{d}d`},
		{"bad \xff byte", 0, `bad \xff byte`},
		{"real \uFFFD", 0, "real \uFFFD"},
		{"Épreuve – 2", 0, "Épreuve – 2"},
		{"abcdef", 3, "abc…"},
		{"\u2066x\u2069", 0, `\u{2066}x\u{2069}`},
	} {
		if got := termSafe(tc.in, tc.max); got != tc.want {
			t.Errorf("termSafe(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
