package accel

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestMeasuredH100Profile refits the committed H100 profile from the
// committed measurements (docs/benchmarks/gpu/h100-profile-points.jsonl,
// made by scripts/pyg_profile.py and scripts/profile_points.py on the GPU)
// and checks that the file's coefficients and fit are that fit, and that
// the model predicts held-out steps (every 4th point, fitted on the rest)
// with the error the profile's provenance states (mean 17.3 %).
func TestMeasuredH100Profile(t *testing.T) {
	p, err := LoadProfile("h100-pyg")
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != KindMeasured || p.GPU != "NVIDIA H100 80GB HBM3" || p.Driver == "" {
		t.Fatalf("profile %s: kind %q gpu %q driver %q", p.Name, p.Kind, p.GPU, p.Driver)
	}
	f, err := os.Open("../../docs/benchmarks/gpu/h100-profile-points.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pts []Point
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var pt Point
		if err := json.Unmarshal(sc.Bytes(), &pt); err != nil {
			t.Fatal(err)
		}
		pts = append(pts, pt)
	}
	if len(pts) != 400 {
		t.Fatalf("%d points, want 400", len(pts))
	}
	coef, fe, err := Fit(pts)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	for m, c := range coef {
		pc := p.Coefficients[m]
		if !near(c.InterceptS, pc.InterceptS) || !near(c.SPerFLOP, pc.SPerFLOP) || !near(c.SPerH2DByte, pc.SPerH2DByte) || !near(c.SPerKernel, pc.SPerKernel) {
			t.Errorf("%s: refit %+v, file %+v", m, c, pc)
		}
	}
	if fe.Points != p.Fit.Points || !near(fe.MeanRelErr, p.Fit.MeanRelErr) || !near(fe.MaxRelErr, p.Fit.MaxRelErr) {
		t.Errorf("fit %+v, file %+v", fe, *p.Fit)
	}
	var train, held []Point
	for i, pt := range pts {
		if i%4 == 3 {
			held = append(held, pt)
		} else {
			train = append(train, pt)
		}
	}
	hc, _, err := Fit(train)
	if err != nil {
		t.Fatal(err)
	}
	var sum, worst float64
	for _, pt := range held {
		r := math.Abs(hc[pt.Model].Seconds(pt.Features())-pt.StepS) / pt.StepS
		sum += r
		worst = math.Max(worst, r)
	}
	mean := sum / float64(len(held))
	t.Logf("held-out: %d steps, mean relative error %.3f, max %.3f", len(held), mean, worst)
	if math.Abs(mean-0.173) > 0.001 || math.Abs(worst-0.729) > 0.001 {
		t.Fatalf("held-out mean %.4f max %.4f, the provenance states 17.3 %% and 72.9 %%", mean, worst)
	}
}
