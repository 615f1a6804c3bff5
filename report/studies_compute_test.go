package report

import (
	"strings"
	"testing"

	"outcore/experiments/grid"
)

// A study's grid in the papers' conditions: every run in the compute mode
// asked, repeated, named so; without them it is the study's own grid.
func TestStudyGridIn(t *testing.T) {
	for _, s := range Studies() {
		b, err := s.GridIn("", "model:h100-roofline", 3)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		g, err := grid.ParseGrid(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.ID, err, b)
		}
		cells := g.Cells()
		if len(g.Axes.Compute) != 1 || g.Axes.Compute[0] != "model:h100-roofline" || g.Axes.Repeat != 3 || len(cells) != 3*len(s.Systems)*len(s.MemLimits) {
			t.Errorf("%s: compute %v, repeat %d, %d cells", s.ID, g.Axes.Compute, g.Axes.Repeat, len(cells))
		}
		if !strings.Contains(g.Name, "[compute model:h100-roofline]") {
			t.Errorf("%s: name %q", s.ID, g.Name)
		}
		plain, _ := s.GridIn("", "", 0)
		own, _ := s.Grid("")
		if string(plain) != string(own) {
			t.Errorf("%s: GridIn without mode or repeats differs from Grid", s.ID)
		}
	}
}
