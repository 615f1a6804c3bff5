package vocab

import (
	"errors"
	"strings"
	"testing"
)

// The device budget: bytes, a share of the feature table, "none", or the
// default 10 %; a bad value is a configuration error naming device_mem.
func TestDeviceMem(t *testing.T) {
	const feat = 1000 << 20
	for _, c := range []struct {
		in    string
		bytes int64
		want  int64
	}{
		{"", 0, feat / 10},
		{"10%", 0, feat / 10},
		{"none", 0, 0},
		{"0", 0, 0},
		{"64MiB", 0, 64 << 20},
		{"", 5 << 20, 5 << 20}, // an explicit byte count stands
	} {
		cfg := Config{DeviceMem: c.in, DeviceMemBytes: c.bytes}
		if err := cfg.validateDeviceMem(); err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if err := cfg.ResolveDeviceMem(feat); err != nil || cfg.DeviceMemBytes != c.want {
			t.Errorf("%q (%d bytes): %d, %v; want %d", c.in, c.bytes, cfg.DeviceMemBytes, err, c.want)
		}
	}
	for _, bad := range []Config{{DeviceMem: "lots"}, {DeviceMem: "-5%"}, {DeviceMemBytes: -1}, {DeviceMem: "2PiB"}} {
		err := bad.validateDeviceMem()
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "device_mem") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
