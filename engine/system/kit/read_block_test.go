package kit

import (
	"errors"
	"testing"

	"outcore/engine/train"
)

func TestReadBlock(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"", 4096, false}, // absent: the default
		{"512", 512, false},
		{"4KiB", 4096, false},
		{"1MiB", 1 << 20, false},
		{"256", 0, true},
		{"3000", 0, true},
		{"2MiB", 0, true},
		{"lots", 0, true},
	} {
		cfg := train.Config{}
		if c.in != "" {
			cfg.Options = map[string]string{ReadBlockOption: c.in}
		}
		got, err := readBlockOf(cfg)
		if c.bad {
			if err == nil || (!errors.Is(err, train.ErrConfig) && c.in != "lots") {
				t.Errorf("%q: got %d, %v; want a configuration error", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: got %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

// readBlockOf parses a variant's read_block option bound with the
// default 4096.
func readBlockOf(cfg train.Config) (int64, error) {
	return Bind[int64](func(o *int64, b *Binder) { b.ReadBlock(o, 4096, "test") }).Parse(cfg)
}
