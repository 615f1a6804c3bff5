package testbed_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/accel"
	"outcore/engine/testbed"
)

var updateAccel = flag.Bool("update-accel", false, "write engine/accel/profiles/<gpu>-from-h100-pyg.json from the testbeds' GPU figures")

// derivedFile is the accelerator profile of a testbed's GPU as Derive
// makes it from the measured profile and the testbed's spec-sheet
// figures (DESIGN §13), with its provenance from the figures' sources.
func derivedFile(t *testing.T, tb *testbed.Profile) []byte {
	t.Helper()
	base, err := accel.LoadProfile(testbed.MeasuredAccelProfile)
	if err != nil {
		t.Fatal(err)
	}
	g := tb.GPU
	spec := accel.GPUSpec{FP32FLOPs: g.FP32FLOPs.V(), MemBytesPerS: g.MemoryBytesPerS.V(), PCIeGen: int(g.PCIeGen.V())}
	src := func(what string, f testbed.Figure) string {
		if !f.Known() {
			return fmt.Sprintf("%s: not published (%s)", what, f.Missing)
		}
		s := fmt.Sprintf("%s %g: %s", what, f.V(), f.Source)
		if f.URL != "" {
			s += " <" + f.URL + ">"
		}
		return s
	}
	prov := fmt.Sprintf("Derived, not measured: the measured %s (an H100 80GB HBM3) scaled to the %s of %s's testbed (engine/testbed/profiles/%s.json) by the rule of docs/DESIGN.md §13: "+
		"every s_per_flop times the larger of the FP32-peak and memory-bandwidth ratios H100/this GPU (the figures both sheets publish), every s_per_h2d_byte times 2^(5 - PCIe generation), "+
		"s_per_kernel and intercept_s as measured (host launch and dispatch costs). H100 SXM5: FP32 66.9 TFLOPS, HBM3 3.35 TB/s, PCIe Gen5 (engine/accel H100SXM5). This GPU: %s; %s; %s.",
		testbed.MeasuredAccelProfile, g.Model.Value, tb.Paper, tb.Name,
		src("FP32 FLOP/s", g.FP32FLOPs), src("memory bytes/s", g.MemoryBytesPerS), src("PCIe generation", g.PCIeGen))
	p, err := accel.Derive(base, accel.H100SXM5, g.AccelProfile, g.Model.Value, spec, prov)
	if err != nil {
		t.Fatalf("%s: %v", tb.Name, err)
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestAccelProfiles: every paper testbed names an accelerator profile this
// build carries; a derived one is exactly what Derive gives from the
// measured profile and the testbed's GPU figures (one home for the
// figures: the testbed file; `go test ./engine/testbed -run
// TestAccelProfiles -update-accel` rewrites the accel files).
func TestAccelProfiles(t *testing.T) {
	for _, n := range testbed.Names() {
		tb, err := testbed.Load(n)
		if err != nil {
			t.Fatal(err)
		}
		if tb.Kind != testbed.KindPaper {
			continue
		}
		name := tb.GPU.AccelProfile
		if name == testbed.MeasuredAccelProfile {
			continue
		}
		want := derivedFile(t, tb)
		path := filepath.Join("..", "accel", "profiles", name+".json")
		if *updateAccel {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s names accelerator profile %s: %v (write it with -update-accel)", n, name, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s: %s is not what Derive gives from the testbed's figures (rewrite it with -update-accel)", n, path)
		}
		p, err := accel.LoadProfile(name)
		if err != nil {
			t.Fatalf("%s: %v (is the file embedded? rebuild)", n, err)
		}
		if p.Kind != accel.KindDerived || p.DerivedFrom != testbed.MeasuredAccelProfile || !strings.Contains(p.Describe(), "not measured") {
			t.Errorf("%s: %s is %s from %q, described %q", n, name, p.Kind, p.DerivedFrom, p.Describe())
		}
		for _, m := range []string{"sage", "gcn", "gat"} {
			if !p.Covers(m) {
				t.Errorf("%s: %s does not cover %s", n, name, m)
			}
		}
	}
}
