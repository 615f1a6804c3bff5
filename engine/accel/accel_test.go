package accel

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseMode(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"", "cpu", ""},
		{"cpu", "cpu", ""},
		{" none ", "none", ""},
		{"model:h100-roofline", "model:h100-roofline", ""},
		{"model:", "", "profile name"},
		{"model", "", "name a profile"},
		{"model:../etc/passwd", "", "only letters"},
		{"gpu", "", "want cpu, none or model:PROFILE"},
	} {
		m, err := ParseMode(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseMode(%q) = %v, %v; want error with %q", c.in, m, err, c.err)
			}
			continue
		}
		if err != nil || m.String() != c.want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", c.in, m.String(), err, c.want)
		}
		if m.Trains() != (c.want == "cpu") {
			t.Errorf("ParseMode(%q).Trains() = %v", c.in, m.Trains())
		}
	}
}

// Every profile this build carries parses, names itself after its file,
// and a derived one's coefficients are what its stated assumptions give.
func TestShippedProfiles(t *testing.T) {
	names := ProfileNames()
	if len(names) == 0 {
		t.Fatal("no profiles")
	}
	for _, n := range names {
		p, err := LoadProfile(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if p.Kind != KindDerived {
			continue
		}
		if p.DerivedFrom != "" {
			checkDerived(t, p)
			continue
		}
		a := p.Assumptions
		for _, k := range []string{"peak_flops", "flops_efficiency", "h2d_bytes_per_s", "kernel_s"} {
			if !(a[k] > 0) {
				t.Fatalf("%s: derived profile without assumption %s", n, k)
			}
		}
		c := p.Coefficients[DefaultCoefficients]
		near := func(what string, got, want float64) {
			if math.Abs(got-want) > 1e-6*want {
				t.Errorf("%s: %s = %g, its assumptions give %g", n, what, got, want)
			}
		}
		near("s_per_flop", c.SPerFLOP, 1/(a["peak_flops"]*a["flops_efficiency"]))
		near("s_per_h2d_byte", c.SPerH2DByte, 1/a["h2d_bytes_per_s"])
		near("s_per_kernel", c.SPerKernel, a["kernel_s"])
		if !strings.Contains(p.Describe(), "not measured") {
			t.Errorf("%s: derived profile described as %q", n, p.Describe())
		}
	}
	if _, err := LoadProfile("no-such-gpu"); err == nil || !strings.Contains(err.Error(), "h100-roofline") {
		t.Errorf("unknown profile: %v, want an error listing the profiles", err)
	}
}

func TestParseProfileRefuses(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{"format": 1, "name": "x", "kind": "derived", "gpu": "G",
			"provenance":   "from the data sheet of G, page 3",
			"coefficients": map[string]any{"default": map[string]any{"s_per_flop": 1e-13}}}
	}
	for _, c := range []struct {
		edit func(m map[string]any)
		err  string
	}{
		{func(m map[string]any) {}, ""},
		{func(m map[string]any) { m["format"] = 2 }, "format 2"},
		{func(m map[string]any) { m["kind"] = "guessed" }, "kind"},
		{func(m map[string]any) { m["provenance"] = "" }, "provenance"},
		{func(m map[string]any) { m["gpu"] = " " }, "gpu"},
		{func(m map[string]any) { m["extra"] = 1 }, "unknown field"},
		{func(m map[string]any) { m["fit"] = map[string]any{"points": 3} }, "derived profile has no fit"},
		{func(m map[string]any) { m["kind"] = "measured" }, "driver"},
		{func(m map[string]any) { m["kind"], m["driver"], m["software"] = "measured", "550", "PyG 2.5" }, "fit"},
		{func(m map[string]any) {
			m["kind"], m["driver"], m["software"] = "measured", "550", "PyG 2.5"
			m["fit"] = map[string]any{"points": 30, "mean_rel_err": 0.05}
		}, ""},
		{func(m map[string]any) {
			m["coefficients"] = map[string]any{"default": map[string]any{"s_per_flop": -1}}
		}, "≥ 0"},
		{func(m map[string]any) { m["coefficients"] = map[string]any{} }, "coefficients: missing"},
		{func(m map[string]any) {
			m["coefficients"] = map[string]any{"default": map[string]any{}, "mlp": map[string]any{}}
		}, "mlp"},
	} {
		m := good()
		c.edit(m)
		b, _ := json.Marshal(m)
		_, err := ParseProfile(b)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", b, err, c.err)
		}
	}
}

// A 2-layer GraphSAGE step counted by hand.
func TestFeaturesByHand(t *testing.T) {
	s := StepShape{Model: "sage", InDim: 4, Hidden: 8, Classes: 2, Rows: 10, Seeds: 2,
		Layers: []Layer{{Src: 10, Dst: 5, Edges: 12}, {Src: 5, Dst: 2, Edges: 6}}}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	f := s.Features()
	// layer 0: gemm 2·5·4·8·2 = 640, other 12·4 + 5·4 + 3·5·8 = 188,
	// back 1: 640·2 + 2·188 = 1656; params 2·4·8+8 = 72
	// layer 1: gemm 2·2·8·2·2 = 128, other 6·8 + 2·8 + 3·2·2 = 76,
	// back 2: 128·3 + 152 = 536; params 2·8·2+2 = 34
	// loss 2·5·2·2 = 40, Adam 12·106 = 1272
	if want := 1656.0 + 536 + 40 + 1272; f.FLOPs != want {
		t.Errorf("FLOPs = %v, want %v", f.FLOPs, want)
	}
	// edges (12+6)·16 + features 10·4·4 + labels 2·8
	if want := 18.0*16 + 160 + 16; f.H2DBytes != want {
		t.Errorf("H2DBytes = %v, want %v", f.H2DBytes, want)
	}
	if want := 2*3*8.0 + fixedKernels + 4; f.Kernels != want {
		t.Errorf("Kernels = %v, want %v", f.Kernels, want)
	}
	// GAT's hidden layer has heads, its output layer one.
	g := s
	g.Model, g.Heads = "gat", 2
	if in, out, h := g.dims(0); in != 4 || out != 8 || h != 2 {
		t.Errorf("gat layer 0 dims %d %d %d", in, out, h)
	}
	if _, out, h := g.dims(1); out != 2 || h != 1 {
		t.Errorf("gat output layer dims %d %d", out, h)
	}
	g.Heads = 3
	if err := g.Check(); err == nil {
		t.Error("3 heads over hidden 8 accepted")
	}
}

func TestStepTime(t *testing.T) {
	p := &Profile{Coefficients: map[string]Coefficients{
		DefaultCoefficients: {InterceptS: 0.001, SPerKernel: 1e-5},
		"gat":               {InterceptS: 0.5},
	}}
	s := StepShape{Model: "sage", InDim: 4, Hidden: 8, Classes: 2, Rows: 10, Seeds: 2, Layers: []Layer{{10, 2, 12}}}
	want := time.Duration((0.001 + 1e-5*s.Features().Kernels) * float64(time.Second))
	if got := p.StepTime(s); got != want {
		t.Errorf("sage step %v, want %v (default coefficients)", got, want)
	}
	s.Model, s.Heads = "gat", 1
	if got := p.StepTime(s); got != 500*time.Millisecond {
		t.Errorf("gat step %v, want its own 0.5 s", got)
	}
	fitted := &Profile{Coefficients: map[string]Coefficients{"gcn": {InterceptS: 1}}}
	if fitted.Covers("sage") || !fitted.Covers("gcn") || !p.Covers("sage") {
		t.Error("Covers: a profile fitted to gcn only covers sage, or the default covers nothing")
	}
	p.Coefficients["gat"] = Coefficients{InterceptS: 1e9}
	if got := p.StepTime(s); got != time.Hour {
		t.Errorf("absurd step %v, want capped at an hour", got)
	}
}

// Fit recovers the coefficients that generated the points, and keeps a
// coefficient that the data would make negative at 0.
func TestFitRecovers(t *testing.T) {
	truth := Coefficients{InterceptS: 2e-3, SPerFLOP: 3e-13, SPerH2DByte: 5e-11, SPerKernel: 9e-6}
	var ps []Point
	for i := 1; i <= 12; i++ {
		s := StepShape{Model: "sage", InDim: 64 * (1 + i%3), Hidden: 128, Classes: 10, Rows: int64(1000 * i), Seeds: int64(100 * i),
			Layers: []Layer{{Src: int64(1000 * i), Dst: int64(300 * i), Edges: int64(3000*i + 500*(i%4))}, {Src: int64(300 * i), Dst: int64(100 * i), Edges: int64(1000 * i)}}}
		if i%2 == 0 {
			s.Layers = append(s.Layers, Layer{Src: int64(100 * i), Dst: int64(100 * i), Edges: int64(100 * i)})
		}
		ps = append(ps, Point{StepShape: s, StepS: truth.Seconds(s.Features())})
	}
	c, fe, err := Fit(ps)
	if err != nil {
		t.Fatal(err)
	}
	got := c["sage"]
	for _, x := range [][2]float64{{got.InterceptS, truth.InterceptS}, {got.SPerFLOP, truth.SPerFLOP}, {got.SPerH2DByte, truth.SPerH2DByte}, {got.SPerKernel, truth.SPerKernel}} {
		if math.Abs(x[0]-x[1]) > 1e-3*x[1] {
			t.Errorf("fit %+v, want %+v", got, truth)
			break
		}
	}
	if fe.Points != 12 || fe.MaxRelErr > 1e-6 {
		t.Errorf("fit error %+v on exact points", fe)
	}
	// Times that fall with the batch would need a negative coefficient.
	for i := range ps {
		ps[i].StepS = 1 / float64(i+1)
	}
	c, _, err = Fit(ps)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{c["sage"].InterceptS, c["sage"].SPerFLOP, c["sage"].SPerH2DByte, c["sage"].SPerKernel} {
		if v < 0 {
			t.Errorf("negative coefficient in %+v", c["sage"])
		}
	}
	if _, _, err := Fit(ps[:3]); err == nil {
		t.Error("3 points fitted 4 terms")
	}
	ps[0].StepS = 0
	if _, _, err := Fit(ps); err == nil {
		t.Error("a step of 0 s accepted")
	}
}

func FuzzParseProfile(f *testing.F) {
	b, _ := profileFiles.ReadFile("profiles/h100-roofline.json")
	f.Add(b)
	f.Add([]byte(`{"format":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseProfile(b)
		if err != nil {
			return
		}
		s := StepShape{Model: "gat", InDim: 8, Hidden: 8, Classes: 2, Heads: 2, Rows: 5, Seeds: 1, Layers: []Layer{{5, 1, 4}}}
		if d := p.StepTime(s); d < 0 || d > time.Hour {
			t.Fatalf("step time %v", d)
		}
	})
}

func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"cpu", "none", "model:h100-roofline", "model:", "model:a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode(s)
		if err != nil {
			return
		}
		if m.Kind == ComputeModel && strings.ContainsAny(m.Profile, "/\\") {
			t.Fatalf("profile name %q with a path", m.Profile)
		}
		if m2, err := ParseMode(m.String()); err != nil || m2 != m {
			t.Fatalf("%q round-trips to %v, %v", m.String(), m2, err)
		}
	})
}

// checkDerived: a profile derived from a measured one has the
// coefficients Derive gives from that profile and the specs its
// assumptions record (DESIGN §13), and says it is not measured.
func checkDerived(t *testing.T, p *Profile) {
	t.Helper()
	base, err := LoadProfile(p.DerivedFrom)
	if err != nil {
		t.Fatalf("%s: derived from %s: %v", p.Name, p.DerivedFrom, err)
	}
	ref, gpu := SpecOf(p)
	want, err := Derive(base, ref, p.Name, p.GPU, gpu, p.Provenance)
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	if len(want.Coefficients) != len(p.Coefficients) {
		t.Fatalf("%s: %d coefficient sets, %s has %d", p.Name, len(p.Coefficients), base.Name, len(want.Coefficients))
	}
	for k, w := range want.Coefficients {
		g := p.Coefficients[k]
		for _, pair := range [][2]float64{{g.InterceptS, w.InterceptS}, {g.SPerFLOP, w.SPerFLOP}, {g.SPerH2DByte, w.SPerH2DByte}, {g.SPerKernel, w.SPerKernel}} {
			if math.Abs(pair[0]-pair[1]) > 1e-9*math.Abs(pair[1]) {
				t.Errorf("%s: coefficients %s = %+v, Derive gives %+v", p.Name, k, g, w)
				break
			}
		}
	}
	for _, k := range []string{assumeComputeRatio, assumeH2DRatio} {
		if math.Abs(p.Assumptions[k]-want.Assumptions[k]) > 1e-9*want.Assumptions[k] {
			t.Errorf("%s: assumption %s = %g, the specs give %g", p.Name, k, p.Assumptions[k], want.Assumptions[k])
		}
	}
	if !strings.Contains(p.Describe(), "not measured") || !strings.Contains(p.Describe(), p.DerivedFrom) {
		t.Errorf("%s: described as %q", p.Name, p.Describe())
	}
}

// TestDeriveRatios: the rule of DESIGN §13 by hand.
func TestDeriveRatios(t *testing.T) {
	ref := GPUSpec{FP32FLOPs: 60e12, MemBytesPerS: 3e12, PCIeGen: 5}
	for _, c := range []struct {
		gpu          GPUSpec
		compute, h2d float64
		err          string
	}{
		{GPUSpec{FP32FLOPs: 30e12, MemBytesPerS: 1e12, PCIeGen: 4}, 3, 2, ""},    // bandwidth binds
		{GPUSpec{FP32FLOPs: 10e12, MemBytesPerS: 1.5e12, PCIeGen: 3}, 6, 4, ""},  // FLOPs bind
		{GPUSpec{MemBytesPerS: 0.6e12, PCIeGen: 3}, 5, 4, ""},                    // FP32 unknown: bandwidth alone
		{GPUSpec{FP32FLOPs: 120e12, MemBytesPerS: 6e12, PCIeGen: 5}, 0.5, 1, ""}, // a faster GPU
		{GPUSpec{PCIeGen: 4}, 0, 0, "neither"},                                   // nothing known
		{GPUSpec{FP32FLOPs: 30e12}, 0, 0, "PCIe"},                                // no link
	} {
		compute, h2d, err := DeriveRatios(ref, c.gpu)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: err %v, want %q", c.gpu, err, c.err)
			}
			continue
		}
		if err != nil || math.Abs(compute-c.compute) > 1e-12 || h2d != c.h2d {
			t.Errorf("%+v: %g, %g, %v; want %g, %g", c.gpu, compute, h2d, err, c.compute, c.h2d)
		}
	}
	base, err := LoadProfile("h100-pyg")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Derive(base, ref, "x-from-h100-pyg", "X", GPUSpec{FP32FLOPs: 30e12, MemBytesPerS: 1e12, PCIeGen: 4}, "derived for a test from made-up specs")
	if err != nil {
		t.Fatal(err)
	}
	b, c := base.Coefficients["sage"], p.Coefficients["sage"]
	if c.SPerFLOP != 3*b.SPerFLOP || c.SPerH2DByte != 2*b.SPerH2DByte || c.SPerKernel != b.SPerKernel || c.InterceptS != b.InterceptS {
		t.Errorf("derived sage %+v from %+v", c, b)
	}
	if _, err := Derive(p, ref, "y", "Y", GPUSpec{FP32FLOPs: 1e12, PCIeGen: 3}, "from a derived profile"); err == nil {
		t.Error("derived from a derived profile: want an error")
	}
}
