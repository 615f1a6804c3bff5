package osutil

import (
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	for _, c := range []struct {
		in      string
		on, rq  time.Duration
		wantErr bool
	}{
		{"295054 2174138 5\n", 295054, 2174138, false},
		{"0 0 0", 0, 0, false},
		{"12 34", 12, 34, false},
		{"12\n", 0, 0, true},
		{"", 0, 0, true},
		{"x 34 1", 0, 0, true},
		{"12 y 1", 0, 0, true},
	} {
		on, rq, err := ParseSchedstat([]byte(c.in))
		if (err != nil) != c.wantErr || on != c.on || rq != c.rq {
			t.Errorf("ParseSchedstat(%q) = %v, %v, %v; want %v, %v, error %v", c.in, on, rq, err, c.on, c.rq, c.wantErr)
		}
	}
}
