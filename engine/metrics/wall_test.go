package metrics

import (
	"math"
	"testing"
	"time"
)

func TestWallBreakdownTable(t *testing.T) {
	s := func(a, b int64) span { return span{a * 1e9, b * 1e9} }
	for _, tc := range []struct {
		name                       string
		train, load, sample        []span
		lo, hi                     int64
		wantT, wantL, wantS, wantW float64
	}{
		{"sequential", []span{s(2, 3), s(5, 6)}, []span{s(1, 2), s(4, 5)}, []span{s(0, 1), s(3, 4)}, 0, 6, 2, 2, 2, 0},
		// pipelined: workers sample and load while the trainer computes;
		// concurrent worker-seconds do not count twice
		{"pipelined", []span{s(1, 3), s(3, 5)}, []span{s(0, 4), s(0, 4), s(2, 5)}, []span{s(0, 6), s(0, 6)}, 0, 5, 4, 1, 0, 0},
		// the trainer waits: a load in progress beats a sampling
		{"load-first", []span{s(4, 5)}, []span{s(1, 2)}, []span{s(0, 3)}, 0, 5, 1, 1, 2, 1},
		// spans outside the window are clipped
		{"clipped", []span{s(1, 2)}, nil, []span{s(-5, 1), s(2, 9)}, 0, 3, 1, 0, 2, 0},
		{"empty", nil, nil, nil, 0, 0, 0, 0, 0, 0},
	} {
		var sp [wallClasses][]span
		sp[wallTrain], sp[wallLoad], sp[wallSample] = tc.train, tc.load, tc.sample
		w := wallBreakdown(sp, tc.lo*1e9, tc.hi*1e9)
		if w.Train != tc.wantT || w.Load != tc.wantL || w.Sample != tc.wantS || w.Stall != tc.wantW {
			t.Errorf("%s: got %+v, want train %v load %v sample %v stall %v", tc.name, w, tc.wantT, tc.wantL, tc.wantS, tc.wantW)
		}
		if got, want := w.Sum(), float64(tc.hi-tc.lo); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: stages sum to %v, window is %v", tc.name, got, want)
		}
	}
}

func TestSubtractSpans(t *testing.T) {
	got := subtractSpans([]span{{0, 10}, {20, 30}}, []span{{-1, 2}, {4, 5}, {9, 21}, {25, 26}})
	want := []span{{2, 4}, {5, 9}, {21, 25}, {26, 30}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// Concurrent samplers' seconds exceed the epoch; the wall stages do not.
func TestEpochStatsWallSumsToEpoch(t *testing.T) {
	ep := NewEpochStats()
	ep.BatchStarted()
	done := make(chan struct{})
	for w := 0; w < 4; w++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 5; i++ {
				stop := ep.Time(StageSample)
				time.Sleep(4 * time.Millisecond)
				stop()
			}
		}()
	}
	for w := 0; w < 4; w++ {
		<-done
	}
	t0 := time.Now()
	time.Sleep(10 * time.Millisecond)
	ep.AddSpan(StageTrain, t0, time.Now())
	ep.BatchDone(1, 1, 1)
	var rec EpochRecord
	ep.Fill(&rec)
	sum := rec.WallSampleS + rec.WallLoadS + rec.WallTrainS + rec.WallStallS
	if math.Abs(sum-rec.EpochS) > 1e-6 {
		t.Fatalf("wall stages sum to %v, epoch_s %v", sum, rec.EpochS)
	}
	if rec.SampleS <= rec.EpochS {
		t.Fatalf("four concurrent samplers' sample_s %v should exceed the epoch %v", rec.SampleS, rec.EpochS)
	}
	if rec.WallSampleS < 0.015 || rec.WallTrainS < 0.009 {
		t.Fatalf("wall sample %v train %v: want ≈ 0.02 and 0.01", rec.WallSampleS, rec.WallTrainS)
	}
}
