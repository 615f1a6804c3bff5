package vocab

// The device budget of a run's configuration (device_mem, docs/DESIGN.md
// §2 "One memory contract"; the run's side is engine/train's
// device_mem.go).

import (
	"fmt"
	"strings"

	"outcore/internal/units"
)

// DefaultDeviceMem is the device budget of a run that names none: 10 % of
// the feature table, the GPU cache GIDS and Helios default to.
const DefaultDeviceMem = "10%"

// DeviceMemNone is the device_mem value that gives a run no device memory
// (every GPU tier empty).
const DeviceMemNone = "none"

// validateDeviceMem checks device_mem's syntax (Validate).
func (c *Config) validateDeviceMem() error {
	if c.DeviceMemBytes < 0 || c.DeviceMemBytes > units.MaxMemLimitBytes {
		return fmt.Errorf("%w: device_mem_bytes: %d, want 0 up to %s", ErrConfig, c.DeviceMemBytes, units.MaxMemLimitText)
	}
	s := strings.TrimSpace(c.DeviceMem)
	if s == "" || s == DeviceMemNone {
		return nil
	}
	if err := units.CheckMemLimit(s); err != nil {
		return fmt.Errorf("%w: device_mem: %v (want bytes, a percentage of the feature table, or %q)", ErrConfig, err, DeviceMemNone)
	}
	return nil
}

// ResolveDeviceMem sets DeviceMemBytes from DeviceMem given the dataset's
// feature bytes: "" is DefaultDeviceMem, "none" and "0" are no device
// memory. An explicit DeviceMemBytes wins when DeviceMem is empty.
func (c *Config) ResolveDeviceMem(featureBytes int64) error {
	s := strings.TrimSpace(c.DeviceMem)
	switch {
	case s == "" && c.DeviceMemBytes > 0:
		return nil
	case s == "":
		s = DefaultDeviceMem
	case s == DeviceMemNone:
		c.DeviceMemBytes = 0
		return nil
	}
	b, err := units.ParseMemLimit(s, featureBytes)
	if err != nil {
		return fmt.Errorf("%w: device_mem: %v", ErrConfig, err)
	}
	c.DeviceMemBytes = b
	return nil
}
