package cache

import (
	"slices"
	"testing"
)

func TestTopByScore(t *testing.T) {
	for _, c := range []struct {
		score []float64
		k     int
		want  []int64
	}{
		{[]float64{1, 3, 2}, 2, []int64{1, 2}},
		{[]float64{2, 5, 5, 1}, 3, []int64{1, 2, 0}}, // ties to the lower id
		{[]float64{1, 1, 1}, 2, []int64{0, 1}},
		{[]float64{4, 2}, 5, []int64{0, 1}}, // k above the ids
		{[]float64{4, 2}, -1, []int64{}},
		{nil, 3, []int64{}},
	} {
		got := TopByScore(c.score, c.k)
		if !slices.Equal(got, c.want) || cap(got) != len(got) {
			t.Errorf("TopByScore(%v, %d) = %v (cap %d), want %v", c.score, c.k, got, cap(got), c.want)
		}
	}
	if got := TopByScore([]int64{7, 9, 7}, 2); !slices.Equal(got, []int64{1, 0}) {
		t.Errorf("int scores: %v", got)
	}
}
