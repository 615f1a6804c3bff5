package studies

import (
	"encoding/json"
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

// TestStudyTestbed: every reproduction study's grid runs under its
// paper's testbed (DESIGN §13, "Studies"), at full and small scale; a
// grid that names its own testbed keeps it.
func TestStudyTestbed(t *testing.T) {
	want := map[string]string{"GNNDrive": "gnndrive-icpp24", "Ginex": "ginex-vldb22", "DiskGNN": "diskgnn-arxiv24", "GIDS": "gids-vldb24", "Helios": "helios-preprint"}
	for _, s := range Papers() {
		name, _, _ := strings.Cut(s.Paper.Name, " ")
		tb, err := s.Testbed()
		if err != nil || tb != want[name] {
			t.Errorf("%s (%s): testbed %q, %v; want %q", s.ID, s.Paper.Name, tb, err, want[name])
			continue
		}
		small, _ := s.SmallScale(1<<30, func(string) int64 { return 0 })
		for _, st := range []Study{s, small} {
			b, err := st.GridIn("", "model:h100-pyg", 2)
			if err != nil {
				t.Fatal(err)
			}
			var g struct{ Testbed string }
			if err := json.Unmarshal(b, &g); err != nil || g.Testbed != tb {
				t.Errorf("%s%s: grid testbed %q, want %q", st.ID, st.Scale, g.Testbed, tb)
			}
		}
	}
	s, err := Parse("own.json", []byte(`{"grid":{"dataset":"tiny","testbed":"this-host","epochs":1,"axes":{"system":["pyg+"],"mem_limit":["50%"]}},
		"paper":{"name":"Ginex (VLDB'22)","figure":"Fig. 1","title":"t","paper_setting":"p","our_setting":"o","metric":"epoch_s","points":[{"system":"pyg+","mem_limit":"50%","value":1}],"differ":["a reason"]}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tb, _ := s.Testbed(); tb != "this-host" {
		t.Errorf("own testbed: %q, want this-host", tb)
	}
	if _, err := Parse("nope.json", []byte(`{"grid":{"dataset":"tiny","epochs":1,"axes":{"system":["pyg+"],"mem_limit":["50%"]}},
		"paper":{"name":"Nowhere (X'99)","figure":"Fig. 1","title":"t","paper_setting":"p","our_setting":"o","metric":"epoch_s","points":[{"system":"pyg+","mem_limit":"50%","value":1}],"differ":["a reason"]}}`), nil); err == nil || !strings.Contains(err.Error(), "no testbed for paper") {
		t.Errorf("a paper without a testbed: %v", err)
	}
}
