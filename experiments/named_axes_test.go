package experiments

import (
	"slices"
	"testing"

	"outcore/experiments/grid"
	"outcore/store"
)

// TestNamedAxesAgree: the store tells a grid's named axes from its path
// axes by the same names as the grid.
func TestNamedAxesAgree(t *testing.T) {
	want := append([]string{"batch"}, grid.AxisNames...)
	got := append([]string(nil), store.NamedAxes...)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("store.NamedAxes %v, grid axes %v", got, want)
	}
}
