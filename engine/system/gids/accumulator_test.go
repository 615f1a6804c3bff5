package gids

import (
	"math"
	"testing"
	"time"
)

func us(f float64) time.Duration { return time.Duration(f * float64(time.Microsecond)) }

// optane is the artifact's default configuration (homogenous_train.py):
// 5.8 GB/s of 4 KiB pages, l_ssd 11 µs, l_system 20 µs, one SSD.
var optane = StorageModel{PeakIOPS: 5.8 * 1024 / 4096 * 1e6, Initial: us(11), Termination: us(20), SSDs: 1}

func TestRequiredMatchesEq2(t *testing.T) {
	cases := []struct {
		name string
		m    StorageModel
		p    float64
		want float64
	}{
		// the artifact: p·bw·1024/page·(l_ssd+l_system)·n_ssd/(1−p)
		{"artifact defaults", optane, 0.95, 0.95 * 5.8 * 1024 / 4096 * 31 * 1 / 0.05},
		{"two SSDs", StorageModel{PeakIOPS: 1.45e6, Initial: us(11), Termination: us(20), SSDs: 2}, 0.95, 2 * 0.95 * 1.45 * 31 / 0.05},
		{"980 Pro", StorageModel{PeakIOPS: 7e5, Initial: us(324 + 25), Termination: us(5), SSDs: 1}, 0.9, 0.9 * 0.7 * 354 / 0.1},
		{"half the peak", StorageModel{PeakIOPS: 1e5, Initial: us(100), Termination: 0, SSDs: 1}, 0.5, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := c.m.Required(c.p)
			if math.Abs(n-c.want) > 1e-6*c.want {
				t.Fatalf("Required(%v) = %v, want %v", c.p, n, c.want)
			}
			// n satisfies Eq. 2 with Eq. 3: per SSD, n/N_ssd accesses at
			// IOP_achieved = p·IOP_peak over T_i + T_s + T_t, T_s = (n/N_ssd)/IOP_peak.
			perSSD := n / float64(c.m.SSDs)
			ts := perSSD / c.m.PeakIOPS
			eq2 := c.p * c.m.PeakIOPS * ((c.m.Initial + c.m.Termination).Seconds() + ts) * float64(c.m.SSDs)
			if math.Abs(eq2-n) > 1e-6*n {
				t.Fatalf("Eq. 2 gives %v accesses for N = %v", eq2, n)
			}
			// and the model's bandwidth at n in flight is p of the peak
			if got, want := c.m.ExpectedIOPS(n), c.p*c.m.PeakIOPS*float64(c.m.SSDs); math.Abs(got-want) > 1e-6*want {
				t.Fatalf("ExpectedIOPS(N) = %v, want %v", got, want)
			}
		})
	}
}

func TestExpectedIOPSShape(t *testing.T) {
	prev := 0.0
	for n := 1.0; n <= 1<<16; n *= 2 {
		got := optane.ExpectedIOPS(n)
		if got <= prev || got >= optane.PeakIOPS {
			t.Fatalf("ExpectedIOPS(%v) = %v after %v: want increasing and below the peak %v", n, got, prev, optane.PeakIOPS)
		}
		prev = got
	}
	if optane.ExpectedIOPS(0) != 0 {
		t.Fatal("no access in flight must give no bandwidth")
	}
}

func TestAccumulatorFollowsMeasuredLatency(t *testing.T) {
	a, err := NewAccumulator(optane, 0.95, true)
	if err != nil {
		t.Fatal(err)
	}
	n0 := a.Required()
	// a slower device (T_i 200 µs measured, T_t 20 µs) needs more in flight
	a.Observe(2, 0, us(200), us(20))
	n1 := a.Required()
	want1 := optane.PeakIOPS * 0.95 * 220e-6 / 0.05
	if math.Abs(n1-want1) > 1e-6*want1 || n1 <= n0 {
		t.Fatalf("after T_i = 200 µs: N = %v (was %v), want %v", n1, n0, want1)
	}
	// faster measurements pull it back down (smoothed: halfway)
	a.Observe(2, 0, us(20), us(20))
	n2 := a.Required()
	want2 := optane.PeakIOPS * 0.95 * 130e-6 / 0.05
	if math.Abs(n2-want2) > 1e-6*want2 || n2 >= n1 {
		t.Fatalf("after T_i = 20 µs: N = %v (was %v), want %v", n2, n1, want2)
	}
	// a pass that read nothing keeps the latency
	a.Observe(1, 100, 0, 0)
	if a.Required() != n2 {
		t.Fatalf("a pass without storage reads changed N: %v, want %v", a.Required(), n2)
	}
}

func TestAccumulatorMergesUntilThreshold(t *testing.T) {
	m := StorageModel{PeakIOPS: 1e5, Initial: us(100), Termination: 0, SSDs: 1}
	a, err := NewAccumulator(m, 0.5, true) // N = 10
	if err != nil {
		t.Fatal(err)
	}
	if a.Enough(10, 1) || !a.Enough(11, 1) || a.Enough(0, 0) {
		t.Fatalf("threshold 10: Enough(10,1)=%v Enough(11,1)=%v", a.Enough(10, 1), a.Enough(11, 1))
	}
	// 6 of every iteration's accesses were redirected: k iterations must
	// hold 10 + 6k accesses
	a.Observe(3, 18, 0, 0)
	if got := a.Threshold(2); got != 22 {
		t.Fatalf("Threshold(2) = %v, want 22", got)
	}
	if a.Enough(22, 2) || !a.Enough(23, 2) {
		t.Fatal("redirected accesses not added to the threshold")
	}
	off, _ := NewAccumulator(m, 0.5, false)
	if !off.Enough(1, 1) {
		t.Fatal("without the accumulator one iteration is a pass")
	}
}

func TestAccumulatorRejectsBadModels(t *testing.T) {
	for _, m := range []StorageModel{
		{PeakIOPS: 0, Initial: us(1), SSDs: 1},
		{PeakIOPS: math.Inf(1), Initial: us(1), SSDs: 1},
		{PeakIOPS: 1, Initial: 0, Termination: 0, SSDs: 1},
		{PeakIOPS: 1, Initial: -us(1), Termination: us(2), SSDs: 1},
		{PeakIOPS: 1, Initial: us(1), SSDs: 0},
	} {
		if _, err := NewAccumulator(m, 0.9, true); err == nil {
			t.Errorf("model %+v accepted", m)
		}
	}
	for _, p := range []float64{0, 1, -0.1, 1.5, math.NaN()} {
		if _, err := NewAccumulator(optane, p, true); err == nil {
			t.Errorf("target %v accepted", p)
		}
	}
}
