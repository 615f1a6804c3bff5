package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestActivationGradients: L = Σ R∘act(X) against finite differences, for
// relu and elu, with and without a fixed dropout mask on the output.
func TestActivationGradients(t *testing.T) {
	for _, act := range []string{ActReLU, ActELU} {
		for _, p := range []float32{0, 0.4} {
			rng := rand.New(rand.NewPCG(7, 7))
			x := randTensor(rng, 7, 9)
			r := randTensor(rng, 7, 9)
			const key = 99
			ref := func(xs vec) float64 {
				s := 0.0
				for i, v := range xs {
					y := v
					if v <= 0 {
						y = 0
						if act == ActELU {
							y = math.Expm1(v)
						}
					}
					if p > 0 {
						if DropoutKeep(i, p, key) {
							y /= 1 - float64(p)
						} else {
							y = 0
						}
					}
					s += float64(r.Data[i]) * y
				}
				return s
			}
			xs := f64(x)
			out := x.Clone()
			ActForward(act, out)
			Dropout(out, p, key)
			g := r.Clone()
			DropoutBackward(g, p, key)
			ActBackward(act, out, g, p)
			checkGrads(t, act, func() float64 { return ref(xs) }, []vec{xs}, [][]float32{g.Data}, []string{"x"})
			if got, want := sumR(r, out), ref(xs); math.Abs(got-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Errorf("%s p=%v forward: Σ R∘y = %.6g, reference %.6g", act, p, got, want)
			}
		}
	}
}

func sumR(r, y *Tensor) float64 {
	s := 0.0
	for i := range y.Data {
		s += float64(r.Data[i]) * float64(y.Data[i])
	}
	return s
}

func TestDropoutMask(t *testing.T) {
	const n = 200000
	for _, p := range []float32{0.1, 0.5, 0.6} {
		x := NewTensor(1, n)
		for i := range x.Data {
			x.Data[i] = 1
		}
		Dropout(x, p, 5)
		zeros := 0
		for i, v := range x.Data {
			keep := DropoutKeep(i, p, 5)
			switch {
			case v == 0 && keep, v != 0 && !keep:
				t.Fatalf("p=%v element %d = %v but DropoutKeep=%v", p, i, v, keep)
			case v == 0:
				zeros++
			case math.Abs(float64(v)-1/float64(1-p)) > 1e-6:
				t.Fatalf("p=%v kept element scaled to %v", p, v)
			}
		}
		frac := float64(zeros) / n
		if math.Abs(frac-float64(p)) > 0.01 {
			t.Errorf("p=%v dropped fraction %.4f", p, frac)
		}
		// another key gives another mask
		y := NewTensor(1, n)
		for i := range y.Data {
			y.Data[i] = 1
		}
		Dropout(y, p, 6)
		same := 0
		for i := range y.Data {
			if (x.Data[i] == 0) == (y.Data[i] == 0) {
				same++
			}
		}
		if same == n {
			t.Errorf("p=%v: keys 5 and 6 gave identical masks", p)
		}
	}
}

func TestSoftmaxCrossEntropyGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	logits := randTensor(rng, 6, 5)
	for i := range logits.Data {
		logits.Data[i] *= 3
	}
	labels := []int32{0, 4, -1, 2, 2, 1}
	g := NewTensor(6, 5)
	loss, correct := SoftmaxCrossEntropy(logits, labels, g)
	ls := f64(logits)
	ref := func() float64 {
		total, n := 0.0, 0
		for r, y := range labels {
			if y < 0 {
				continue
			}
			s := 0.0
			for c := 0; c < 5; c++ {
				s += math.Exp(ls[r*5+c])
			}
			total += math.Log(s) - ls[r*5+int(y)]
			n++
		}
		return total / float64(n)
	}
	if math.Abs(float64(loss)-ref()) > 1e-5 {
		t.Fatalf("loss %v, reference %v", loss, ref())
	}
	checkGrads(t, "cross-entropy", ref, []vec{ls}, [][]float32{g.Data}, []string{"logits"})
	for c := 0; c < 5; c++ {
		if g.Data[2*5+c] != 0 {
			t.Fatalf("ignored row has gradient %v", g.Row(2))
		}
	}
	want := 0
	for r, y := range labels {
		if y >= 0 && Argmax(logits.Row(r)) == int(y) {
			want++
		}
	}
	if correct != want {
		t.Fatalf("correct %d, want %d", correct, want)
	}
	if acc := Accuracy(logits, labels); math.Abs(acc-float64(want)/5) > 1e-12 {
		t.Fatalf("Accuracy %v, want %v", acc, float64(want)/5)
	}
}

// TestAdamUpdates checks Adam against updates worked out by hand for a
// two-element parameter (one decayed, one NoDecay), following
// torch.optim.Adam: g' = g + wd·θ; m = β1·m + (1-β1)·g'; v = β2·v + (1-β2)·g'²;
// θ -= lr/(1-β1^t) · m / (sqrt(v)/sqrt(1-β2^t) + ε).
func TestAdamUpdates(t *testing.T) {
	p := newParam("w", 1, 1)
	q := newParam("b", 1, 1)
	q.NoDecay = true
	p.Value.Data[0], q.Value.Data[0] = 1, 1
	opt := NewAdam([]*Param{p, q}, 0.1, 0.1)
	grads := []float32{0.5, -0.2, 0.1}
	// Step 1, decayed: g' = 0.5+0.1·1 = 0.6, m = 0.06, v = 0.00036,
	// m̂ = 0.6, v̂ = 0.36 → θ = 1 - 0.1·0.6/0.6 = 0.9 (up to ε).
	// Step 1, no decay: g = 0.5 → θ = 1 - 0.1 = 0.9 as well.
	wantP := []float64{0.9}
	wantQ := []float64{0.9}
	// Steps 2 and 3 by the same formulas in float64.
	mp, vp, tp := 0.06, 0.00036, 0.9
	mq, vq, tq := 0.05, 0.00025, 0.9
	for s := 2; s <= 3; s++ {
		g := float64(grads[s-1])
		gp := g + 0.1*tp
		mp, vp = 0.9*mp+0.1*gp, 0.999*vp+0.001*gp*gp
		tp -= 0.1 / (1 - math.Pow(0.9, float64(s))) * mp / (math.Sqrt(vp)/math.Sqrt(1-math.Pow(0.999, float64(s))) + 1e-8)
		mq, vq = 0.9*mq+0.1*g, 0.999*vq+0.001*g*g
		tq -= 0.1 / (1 - math.Pow(0.9, float64(s))) * mq / (math.Sqrt(vq)/math.Sqrt(1-math.Pow(0.999, float64(s))) + 1e-8)
		wantP, wantQ = append(wantP, tp), append(wantQ, tq)
	}
	for s, g := range grads {
		p.Grad.Data[0], q.Grad.Data[0] = g, g
		opt.Step()
		if math.Abs(float64(p.Value.Data[0])-wantP[s]) > 1e-6 || math.Abs(float64(q.Value.Data[0])-wantQ[s]) > 1e-6 {
			t.Fatalf("step %d: θ = %v, %v; want %v, %v", s+1, p.Value.Data[0], q.Value.Data[0], wantP[s], wantQ[s])
		}
	}
	if opt.Steps() != 3 {
		t.Fatalf("Steps() = %d", opt.Steps())
	}
	// hand values of step 2 (decayed): g' = -0.2+0.1·0.9 = -0.11,
	// m = 0.054-0.011 = 0.043, v = 0.00035964+0.0000121 = 0.00037174,
	// m̂ = 0.043/0.19, v̂ = 0.00037174/0.001999 → θ ≈ 0.9 - 0.1·0.22632/0.43124
	if math.Abs(wantP[1]-(0.9-0.1*(0.043/0.19)/math.Sqrt(0.00037174/0.001999))) > 1e-6 {
		t.Fatalf("float64 formula disagrees with the hand value: %v", wantP[1])
	}
}
