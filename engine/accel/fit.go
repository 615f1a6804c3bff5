package accel

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Point is one measured step: its shape and the time it took on the GPU
// (one JSON line of the PyG measurement script's output).
type Point struct {
	StepShape
	StepS float64 `json:"step_s"`
}

// Fit fits the step-time model to measured steps, one set of coefficients
// per model present, by least squares on the relative error (each step
// weighs 1/step_s, so short and long steps count alike), keeping every
// coefficient ≥ 0 (a term that would go negative is dropped and the rest
// refitted). It returns the coefficients and the fit's errors over all
// points. Each model needs at least as many points as terms (4).
func Fit(points []Point) (map[string]Coefficients, FitError, error) {
	by := map[string][]Point{}
	for i, p := range points {
		if err := p.Check(); err != nil {
			return nil, FitError{}, fmt.Errorf("point %d: %w", i, err)
		}
		if !(p.StepS > 0) || math.IsInf(p.StepS, 0) {
			return nil, FitError{}, fmt.Errorf("point %d: step_s %v, want > 0", i, p.StepS)
		}
		by[p.Model] = append(by[p.Model], p)
	}
	if len(by) == 0 {
		return nil, FitError{}, errors.New("fit: no points")
	}
	out := map[string]Coefficients{}
	models := make([]string, 0, len(by))
	for m := range by {
		models = append(models, m)
	}
	sort.Strings(models)
	var fe FitError
	var sq, rel float64
	for _, m := range models {
		ps := by[m]
		if len(ps) < 4 {
			return nil, FitError{}, fmt.Errorf("fit: %d points of %s, want at least 4", len(ps), m)
		}
		c := fitNonNeg(ps)
		out[m] = c
		for _, p := range ps {
			pred := c.Seconds(p.Features())
			d := pred - p.StepS
			sq += d * d
			r := math.Abs(d) / p.StepS
			rel += r
			fe.MaxRelErr = math.Max(fe.MaxRelErr, r)
			fe.Points++
		}
	}
	fe.RMSES = math.Sqrt(sq / float64(fe.Points))
	fe.MeanRelErr = rel / float64(fe.Points)
	return out, fe, nil
}

// terms of the model, in Coefficients order.
func terms(f Features) [4]float64 { return [4]float64{1, f.FLOPs, f.H2DBytes, f.Kernels} }

func fromTerms(x [4]float64) Coefficients {
	return Coefficients{InterceptS: x[0], SPerFLOP: x[1], SPerH2DByte: x[2], SPerKernel: x[3]}
}

// fitNonNeg solves the weighted least squares over the active terms,
// dropping the most negative term until none is negative.
func fitNonNeg(ps []Point) Coefficients {
	active := [4]bool{true, true, true, true}
	for {
		x, ok := solveLS(ps, active)
		worst, wi := 0.0, -1
		for i := range x {
			if active[i] && x[i] < worst {
				worst, wi = x[i], i
			}
		}
		if ok && wi < 0 {
			return fromTerms(x)
		}
		if wi < 0 { // singular: drop the last active term
			for i := 3; i >= 0; i-- {
				if active[i] {
					wi = i
					break
				}
			}
		}
		if wi < 0 {
			return Coefficients{}
		}
		active[wi] = false
	}
}

// solveLS solves the normal equations of the relative-error least squares
// over the active terms (scaled to unit size so FLOPs and kernels do not
// differ by 10 orders of magnitude). ok is false when they are singular.
func solveLS(ps []Point, active [4]bool) (x [4]float64, ok bool) {
	var idx []int
	for i, a := range active {
		if a {
			idx = append(idx, i)
		}
	}
	n := len(idx)
	if n == 0 {
		return x, true
	}
	var scale [4]float64
	rows := make([][4]float64, len(ps))
	for k, p := range ps {
		t := terms(p.Features())
		for i := range t {
			t[i] /= p.StepS
			scale[i] = math.Max(scale[i], math.Abs(t[i]))
		}
		rows[k] = t
	}
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
	}
	for _, t := range rows {
		for i, ti := range idx {
			if scale[ti] == 0 {
				return x, false
			}
			vi := t[ti] / scale[ti]
			for j, tj := range idx {
				a[i][j] += vi * t[tj] / scale[tj]
			}
			a[i][n] += vi // target: step_s / step_s = 1
		}
	}
	// Gaussian elimination with partial pivoting.
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-12 {
			return x, false
		}
		a[c], a[p] = a[p], a[c]
		for r := 0; r < n; r++ {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	for i, ti := range idx {
		x[ti] = a[i][n] / a[i][i] / scale[ti]
	}
	return x, true
}
