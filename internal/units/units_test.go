package units

import "testing"

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0B"}, {1023, "1023B"}, {1024, "1KiB"}, {1536, "1.5KiB"},
		{256 << 20, "256MiB"}, {3 << 29, "1.5GiB"}, {1 << 40, "1TiB"}, {5 << 50, "5120TiB"},
		{-5, "-5B"},
	} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"}, {"exactly10!", 10, "exactly10!"}, {"a longer text", 4, "a lo…"}, {"", 0, ""},
	} {
		if got := Clip(c.s, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
