package units

import (
	"testing"
	"time"
)

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

func TestByteFormat(t *testing.T) {
	for _, c := range []struct {
		f    ByteFormat
		n    int64
		want string
	}{
		{ByteFormat{Unit: MiB}, 59 << 20, "59MiB"},
		{ByteFormat{Unit: MiB}, 21<<20 + 40<<10, "21.0MiB"},
		{ByteFormat{Unit: MiB}, 2 << 30, "2048MiB"},
		{ByteFormat{Unit: MiB}, 0, "0MiB"},
		{ByteFormat{Unit: MiB, Space: true, Decimals: 1}, 12 << 20, "12.0 MiB"},
		{ByteFormat{Unit: MiB, Space: true, Decimals: 1}, 3 << 19, "1.5 MiB"},
		{ByteFormat{Exact: true, Space: true}, 4 << 20, "4 MiB"},
		{ByteFormat{Exact: true, Space: true}, 1536 << 10, "1536 KiB"},
		{ByteFormat{Exact: true, Space: true}, 100, "100 bytes"},
		{ByteFormat{Exact: true, Space: true}, 0, "0 bytes"},
		{ByteFormat{Exact: true}, 1 << 30, "1GiB"},
		{ByteFormat{Space: true}, 240 << 20, "240 MiB"},
		{ByteFormat{Space: true}, 3 << 29, "1.5 GiB"},
		{ByteFormat{Space: true}, 512, "512 bytes"},
	} {
		if got := c.f.Format(c.n); got != c.want {
			t.Errorf("%+v.Format(%d) = %q, want %q", c.f, c.n, got, c.want)
		}
	}
}

func TestLimit(t *testing.T) {
	for n, want := range map[int64]string{0: "none", -1: "none", 256 << 20: "256MiB", 3 << 29: "1.5GiB"} {
		if got := Limit(n); got != want {
			t.Errorf("Limit(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {-time.Second, "0s"}, {4 * time.Second, "4s"}, {1499 * time.Millisecond, "1s"},
		{125 * time.Second, "2m 05s"}, {time.Hour + 3*time.Minute + 59*time.Second, "1h 03m"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestEstimate(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{
		{0.4, "0s"}, {45, "45s"}, {59.6, "1m"}, {12*60 + 40, "13m"}, {80 * 60, "1h 20m"}, {3600 + 20*60 + 50, "1h 20m"},
	} {
		if got := Estimate(c.s); got != c.want {
			t.Errorf("Estimate(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}
