package accel

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strings"
	"time"
)

// Profile kinds.
const (
	// KindDerived is a profile computed from a GPU's data sheet and stated
	// assumptions (efficiency, bandwidth, launch cost): not measured.
	KindDerived = "derived"
	// KindMeasured is a profile fitted to steps timed on a real GPU.
	KindMeasured = "measured"
)

// ProfileFormat is the version of the profile file format this build
// reads.
const ProfileFormat = 1

// Profile is one accelerator profile, a JSON file of profiles/
// (docs/DESIGN.md §10 describes the format):
//
//	{"format": 1, "name": "h100-roofline", "kind": "derived",
//	 "gpu": "NVIDIA H100 SXM5 80GB", "driver": "", "software": "",
//	 "provenance": "where every number comes from",
//	 "assumptions": {"peak_flops": 6.7e13, ...},
//	 "coefficients": {"default": {"intercept_s": 0, "s_per_flop": ...,
//	                              "s_per_h2d_byte": ..., "s_per_kernel": ...},
//	                  "gat": {...}},
//	 "fit": {"points": 120, "rmse_s": ..., "mean_rel_err": ..., "max_rel_err": ...}}
//
// The step time of a StepShape is intercept_s + s_per_flop·FLOPs +
// s_per_h2d_byte·H2DBytes + s_per_kernel·Kernels with the coefficients of
// its model (else "default"). A derived profile has no fit; a measured one
// names its driver and software and carries its fit's error.
type Profile struct {
	Format      int                `json:"format"`
	Name        string             `json:"name"`
	Kind        string             `json:"kind"`
	GPU         string             `json:"gpu"`
	Driver      string             `json:"driver,omitempty"`
	Software    string             `json:"software,omitempty"`
	Provenance  string             `json:"provenance"`
	Assumptions map[string]float64 `json:"assumptions,omitempty"`
	// DerivedFrom names the measured profile a derived profile was scaled
	// from by spec-sheet ratios (Derive, DESIGN §13); empty for a roofline.
	DerivedFrom  string                  `json:"derived_from,omitempty"`
	Coefficients map[string]Coefficients `json:"coefficients"`
	Fit          *FitError               `json:"fit,omitempty"`

	// Digest is the SHA-256 of the file the profile was read from (set by
	// ParseProfile; a run's deviation names it).
	Digest string `json:"-"`
}

// Coefficients of the linear step-time model.
type Coefficients struct {
	InterceptS  float64 `json:"intercept_s"`
	SPerFLOP    float64 `json:"s_per_flop"`
	SPerH2DByte float64 `json:"s_per_h2d_byte"`
	SPerKernel  float64 `json:"s_per_kernel"`
}

// Seconds is the modelled step time of f.
func (c Coefficients) Seconds(f Features) float64 {
	return c.InterceptS + c.SPerFLOP*f.FLOPs + c.SPerH2DByte*f.H2DBytes + c.SPerKernel*f.Kernels
}

// FitError is how well a measured profile's model fits its measurements.
type FitError struct {
	Points     int     `json:"points"`
	RMSES      float64 `json:"rmse_s"`
	MeanRelErr float64 `json:"mean_rel_err"`
	MaxRelErr  float64 `json:"max_rel_err"`
}

// DefaultCoefficients is the key of the coefficients used for a model
// without its own.
const DefaultCoefficients = "default"

// maxStep bounds a modelled step: a profile that says a step takes more
// than an hour is wrong.
const maxStep = time.Hour

// Covers reports whether the profile models steps of model (its own
// coefficients or "default"). A measured profile covers only the models
// it was fitted to.
func (p *Profile) Covers(model string) bool {
	_, own := p.Coefficients[model]
	_, def := p.Coefficients[DefaultCoefficients]
	return own || def
}

// StepTime is the modelled time of one step of shape s (0 for a model
// the profile does not cover).
func (p *Profile) StepTime(s StepShape) time.Duration {
	c, ok := p.Coefficients[s.Model]
	if !ok {
		c = p.Coefficients[DefaultCoefficients]
	}
	sec := c.Seconds(s.Features())
	if !(sec > 0) {
		return 0
	}
	if sec > maxStep.Seconds() {
		return maxStep
	}
	return time.Duration(sec * float64(time.Second))
}

// Describe is one line naming the profile and where it comes from, for a
// run's deviations.
func (p *Profile) Describe() string {
	what := "derived from a data sheet and stated assumptions, not measured"
	if p.DerivedFrom != "" {
		what = "derived from the measured " + p.DerivedFrom + " by spec-sheet ratios, not measured"
	}
	if p.Kind == KindMeasured {
		what = fmt.Sprintf("measured with %s, driver %s, fit over %d steps: mean relative error %.1f %%, max %.1f %%",
			p.Software, p.Driver, p.Fit.Points, 100*p.Fit.MeanRelErr, 100*p.Fit.MaxRelErr)
	}
	d := p.Digest
	if len(d) > 12 {
		d = d[:12]
	}
	return fmt.Sprintf("profile %s (%s; %s; sha256 %s)", p.Name, p.GPU, what, d)
}

// ParseProfile reads and checks a profile file: unknown fields, a missing
// provenance, a kind other than derived or measured, negative or
// non-finite coefficients, a measured profile without driver, software or
// fit, and a derived one with a fit are errors naming what is wrong.
func ParseProfile(b []byte) (*Profile, error) {
	var p Profile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if dec.More() {
		return nil, errors.New("profile: data after the JSON object")
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("profile %q: %w", p.Name, err)
	}
	sum := sha256.Sum256(b)
	p.Digest = hex.EncodeToString(sum[:])
	return &p, nil
}

func (p *Profile) check() error {
	if p.Format != ProfileFormat {
		return fmt.Errorf("format %d, this build reads format %d", p.Format, ProfileFormat)
	}
	if err := checkName(p.Name); err != nil {
		return err
	}
	if strings.TrimSpace(p.GPU) == "" {
		return errors.New("gpu: missing (the accelerator it models)")
	}
	if len(strings.TrimSpace(p.Provenance)) < 20 {
		return errors.New("provenance: missing (say where every number comes from)")
	}
	switch p.Kind {
	case KindDerived:
		if p.Fit != nil {
			return errors.New("a derived profile has no fit (measured profiles do)")
		}
		if p.DerivedFrom != "" {
			if err := checkName(p.DerivedFrom); err != nil {
				return fmt.Errorf("derived_from: %w", err)
			}
		}
	case KindMeasured:
		if p.DerivedFrom != "" {
			return errors.New("a measured profile is not derived_from another")
		}
		if strings.TrimSpace(p.Driver) == "" || strings.TrimSpace(p.Software) == "" {
			return errors.New("a measured profile names its driver and software")
		}
		if p.Fit == nil || p.Fit.Points < 1 {
			return errors.New("a measured profile carries its fit (points, errors)")
		}
		for _, v := range []float64{p.Fit.RMSES, p.Fit.MeanRelErr, p.Fit.MaxRelErr} {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("fit: error %v, want finite and ≥ 0", v)
			}
		}
	default:
		return fmt.Errorf("kind %q, want %q or %q", p.Kind, KindDerived, KindMeasured)
	}
	if len(p.Coefficients) == 0 {
		return errors.New("coefficients: missing")
	}
	for k, c := range p.Coefficients {
		switch k {
		case DefaultCoefficients, "sage", "gcn", "gat":
		default:
			return fmt.Errorf("coefficients: key %q, want default, sage, gcn or gat", k)
		}
		for _, v := range []float64{c.InterceptS, c.SPerFLOP, c.SPerH2DByte, c.SPerKernel} {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("coefficients %s: %v, want finite and ≥ 0", k, v)
			}
		}
	}
	return nil
}

//go:embed profiles/*.json
var profileFiles embed.FS

// ProfileNames lists the profiles this build carries, sorted.
func ProfileNames() []string {
	ents, _ := fs.ReadDir(profileFiles, "profiles")
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// LoadProfile returns the profile of that name (profiles/<name>.json,
// embedded in the binary, so a run on another machine models the same).
func LoadProfile(name string) (*Profile, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	b, err := profileFiles.ReadFile("profiles/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("no accelerator profile %q (have %s)", name, strings.Join(ProfileNames(), ", "))
	}
	p, err := ParseProfile(b)
	if err != nil {
		return nil, err
	}
	if p.Name != name {
		return nil, fmt.Errorf("profiles/%s.json names itself %q", name, p.Name)
	}
	return p, nil
}
