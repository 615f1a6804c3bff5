package studies

import (
	"strings"
	"testing"

	"outcore/experiments/grid"
)

// A name with a suffix is cut to the grid language's longest name.
func TestWithSuffix(t *testing.T) {
	long := strings.Repeat("é", 120)
	if got := withSuffix(long, " [x]"); len([]rune(got)) != grid.MaxNameLen || !strings.HasSuffix(got, "… [x]") {
		t.Errorf("withSuffix: %q", got)
	}
	if got := withSuffix("short", " [x]"); got != "short [x]" {
		t.Errorf("withSuffix: %q", got)
	}
}

// A study's grid in the papers' conditions: every run in the compute mode
// asked, repeated, named so; without them it is the study's own grid.
func TestStudyGridIn(t *testing.T) {
	for _, s := range All() {
		b, err := s.GridIn("", "model:h100-roofline", 3)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		g, err := grid.ParseGrid(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.ID, err, b)
		}
		own, _ := s.Grid("")
		ownGrid, err := grid.ParseGrid(own)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		cells := g.Cells()
		if len(g.Axes.Compute) != 1 || g.Axes.Compute[0] != "model:h100-roofline" || g.Axes.Repeat != 3 || len(cells) != 3*len(ownGrid.Cells())/max(1, ownGrid.Axes.Repeat) {
			t.Errorf("%s: compute %v, repeat %d, %d cells", s.ID, g.Axes.Compute, g.Axes.Repeat, len(cells))
		}
		if !strings.Contains(g.Name, "[compute model:h100-roofline]") {
			t.Errorf("%s: name %q", s.ID, g.Name)
		}
		plain, _ := s.GridIn("", "", 0)
		if string(plain) != string(own) {
			t.Errorf("%s: GridIn without mode or repeats differs from Grid", s.ID)
		}
	}
}
