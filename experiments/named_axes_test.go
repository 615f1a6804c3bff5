package experiments

import (
	"slices"
	"testing"

	"outcore/experiments/grid"
	"outcore/store"
)

// TestNamedAxesAgree: the store tells a grid's named axes from its path
// axes by the same names as the grid (less those a run keeps in its
// configuration only, whose cell the store reads from there).
func TestNamedAxesAgree(t *testing.T) {
	want := []string{"batch"}
	for _, a := range grid.AxisNames {
		if !slices.Contains(grid.ConfigOnlyAxes, a) {
			want = append(want, a)
		}
	}
	got := append([]string(nil), store.NamedAxes...)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("store.NamedAxes %v, grid axes %v", got, want)
	}
}
