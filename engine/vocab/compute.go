package vocab

// The compute modes of a configuration (DESIGN §10; the consumer is
// engine/train's compute.go).

import (
	"fmt"

	"outcore/engine/accel"
)

// ComputeMode parses Compute and, for model:PROFILE, loads the profile.
func (c *Config) ComputeMode() (accel.Mode, *accel.Profile, error) {
	m, err := accel.ParseMode(c.Compute)
	if err != nil {
		return m, nil, err
	}
	if m.Kind != accel.ComputeModel {
		return m, nil, nil
	}
	p, err := accel.LoadProfile(m.Profile)
	if err != nil {
		return m, nil, err
	}
	if c.Model != "" && !p.Covers(c.Model) {
		return m, nil, fmt.Errorf("profile %s models no %s steps (it was fitted to other models)", p.Name, c.Model)
	}
	return m, p, nil
}
