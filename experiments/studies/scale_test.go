package studies

import (
	"strings"
	"testing"

	"outcore/experiments/grid"
)

// TestStudySmallScale: each limit is raised to the least share holding
// every variant's floor (never lowered), the paper's points and ratios
// move with it, and the settings say so; nothing holds → not ok.
func TestStudySmallScale(t *testing.T) {
	s, ok := Lookup("ginex-overall")
	if !ok {
		t.Fatal("no ginex-overall study")
	}
	fb := int64(100 << 20)
	floors := map[string]int64{"ginex": 67 << 20, "pyg+": 26 << 20}
	small, ok := s.SmallScale(fb, func(e string) int64 { return floors[e] })
	if !ok || strings.Join(small.MemLimits, ",") != "75%" || small.Scale != "small scale" {
		t.Fatalf("small scale limits %v ok %v", small.MemLimits, ok)
	}
	for _, p := range small.Points {
		if p.MemLimit != "75%" {
			t.Errorf("point %+v not moved", p)
		}
	}
	for _, r := range small.Ratios {
		if r.MemLimit != "75%" {
			t.Errorf("ratio %+v not moved", r)
		}
	}
	if !strings.Contains(small.OurSetting, "25% → 75%") || !strings.Contains(small.ExperimentName(), "(small scale)") {
		t.Errorf("setting %q name %q", small.OurSetting, small.ExperimentName())
	}
	if got, ok := ByExperiment(small.ExperimentName()); !ok || got.ID != s.ID {
		t.Errorf("the small-scale experiment is not recognised as the study's")
	}
	// the experiment's page maps its grid's limits back the same way
	if back := s.Rescaled(LimitsOfGrid([]byte(`{"axes":{"mem_limit":["75%"]}}`))); len(back.Ratios) == 0 || back.Ratios[0].MemLimit != "75%" || back.MemLimits[0] != "75%" {
		t.Errorf("rescaled from the grid: %+v", back.Ratios)
	}
	if same := s.Rescaled(s.MemLimits); same.OurSetting != s.OurSetting {
		t.Error("rescaling to the same limits changed the study")
	}
	// features far smaller than the floors: the least whole share above
	// them, two significant digits
	tiny, ok := s.SmallScale(1<<20, func(e string) int64 { return floors[e] })
	if !ok || strings.Join(tiny.MemLimits, ",") != "6700%" {
		t.Errorf("tiny: %v %v", tiny.MemLimits, ok)
	}
	if _, ok := s.SmallScale(0, func(string) int64 { return 1 << 40 }); ok {
		t.Error("a dataset without features was scaled")
	}
	// every study's small-scale grid is a valid grid, also where the
	// floors are over 100× the features (200 MiB on tiny's 1 MiB: 25,000 %)
	for _, st := range Papers() {
		for _, fb := range []int64{1 << 20, 100 << 20, 1 << 30} {
			for _, floor := range []int64{80 << 20, 200 << 20} {
				sc, ok := st.SmallScale(fb, func(string) int64 { return floor })
				if !ok {
					t.Errorf("%s on %d bytes: not scaled", st.ID, fb)
					continue
				}
				b, err := sc.Grid("default")
				if err == nil {
					_, err = grid.ParseGrid(b)
				}
				if err != nil {
					t.Errorf("%s on %d bytes, floors %d MiB: %v", st.ID, fb, floor>>20, err)
				}
			}
		}
	}
	// two limits raised to one share stay two, in order
	fig9, _ := Lookup("gnndrive-fig9")
	for _, fb := range []int64{1 << 20, 100 << 20} {
		sc, ok := fig9.SmallScale(fb, func(string) int64 { return 80 << 20 })
		if !ok || len(sc.MemLimits) != 2 || shareOf(sc.MemLimits[0]) >= shareOf(sc.MemLimits[1]) {
			t.Errorf("fig9 on %d bytes of features: %v", fb, sc.MemLimits)
		}
	}
	for n, want := range map[int64]int64{7: 7, 99: 99, 100: 100, 101: 110, 5734: 5800, 6700: 6700} {
		if got := roundUp2(n); got != want {
			t.Errorf("roundUp2(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestSharesOfBase: an experiment's grid takes its share limits of the
// grid's dataset only when it says "mem_share_of": "base".
func TestSharesOfBase(t *testing.T) {
	for grid, want := range map[string]bool{
		`{"dataset":"medium","mem_share_of":"base","axes":{"feature_dim":[64]}}`: true,
		`{"dataset":"medium","mem_share_of":"run"}`:                              false,
		`{"dataset":"medium"}`:                     false,
		`{"dataset":"medium","mem_share_of":true}`: false,
		`not json`: false,
	} {
		if got := SharesOfBase([]byte(grid)); got != want {
			t.Errorf("SharesOfBase(%s) = %v, want %v", grid, got, want)
		}
	}
}
