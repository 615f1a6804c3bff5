package accel

import (
	"fmt"
	"strings"
)

// Compute modes (Mode.Kind), the values of `--compute`.
const (
	// ComputeCPU trains each batch with the CPU trainer (the default).
	ComputeCPU = "cpu"
	// ComputeNone delivers each batch's features to the consumer, which
	// checksums them and releases the batch: the loader alone.
	ComputeNone = "none"
	// ComputeModel holds each batch for the step time a profile gives for
	// its shape, without using the CPU.
	ComputeModel = "model"
)

// Mode is a parsed `--compute` value.
type Mode struct {
	Kind    string // ComputeCPU, ComputeNone or ComputeModel
	Profile string // the profile's name, for ComputeModel
}

// String is the mode as written: "cpu", "none" or "model:NAME".
func (m Mode) String() string {
	if m.Kind == ComputeModel {
		return ComputeModel + ":" + m.Profile
	}
	if m.Kind == "" {
		return ComputeCPU
	}
	return m.Kind
}

// Trains reports whether the mode runs the model (loss and accuracy are
// measurements only then).
func (m Mode) Trains() bool { return m.Kind == "" || m.Kind == ComputeCPU }

// ParseMode parses "cpu" (or ""), "none" or "model:NAME". The profile is
// not looked up here (LoadProfile).
func ParseMode(s string) (Mode, error) {
	t := strings.TrimSpace(s)
	switch {
	case t == "" || t == ComputeCPU:
		return Mode{Kind: ComputeCPU}, nil
	case t == ComputeNone:
		return Mode{Kind: ComputeNone}, nil
	case strings.HasPrefix(t, ComputeModel+":"):
		name := strings.TrimPrefix(t, ComputeModel+":")
		if err := checkName(name); err != nil {
			return Mode{}, fmt.Errorf("compute %q: %w", s, err)
		}
		return Mode{Kind: ComputeModel, Profile: name}, nil
	case t == ComputeModel:
		return Mode{}, fmt.Errorf("compute %q: name a profile, model:PROFILE (have %s)", s, strings.Join(ProfileNames(), ", "))
	}
	return Mode{}, fmt.Errorf("compute %q: want cpu, none or model:PROFILE (profiles: %s)", s, strings.Join(ProfileNames(), ", "))
}

// checkName accepts profile names of letters, digits, '-', '_' and '.'
// (no path: profiles are files of this package, not of the caller's
// file system).
func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("profile name %q: want 1 to 64 characters", name)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return fmt.Errorf("profile name %q: only letters, digits, '-', '_' and '.' (have %s)", name, strings.Join(ProfileNames(), ", "))
		}
	}
	return nil
}
