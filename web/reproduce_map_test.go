package web

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments"
	"outcore/experiments/studies"
	"outcore/report"
	"outcore/store"
)

// TestStudyVerdict: the map sums up a comparison's ratios as their
// verdicts stand, with evidence, and calls nothing without it.
func TestStudyVerdict(t *testing.T) {
	in := report.RatioRow{HaveOurs: true, Evidence: true, Within: true}
	out := report.RatioRow{HaveOurs: true, Evidence: true}
	thin := report.RatioRow{HaveOurs: true, Within: true} // reads within, without the evidence
	oom := report.RatioRow{NumOOM: true}
	none := report.RatioRow{}
	for _, c := range []struct {
		ratios      []report.RatioRow
		want, badge string
	}{
		{nil, "no ratio: the study sets none of the paper's", "empty"},
		{[]report.RatioRow{in}, "holds: the ratio within the paper's range", "done"},
		{[]report.RatioRow{in, in}, "holds: 2 of 2 ratios within the paper's range", "done"},
		{[]report.RatioRow{out, out}, "differs: 2 of 2 ratios outside the paper's range", "failed"},
		{[]report.RatioRow{in, out, none}, "partly: 1 of 3 ratios within the paper's range, 1 outside, 1 without a verdict yet", "stalled"},
		{[]report.RatioRow{in, thin}, "holds so far: 1 of 2 ratios within the paper's range, 1 without a verdict yet", "done"},
		{[]report.RatioRow{out, none}, "differs so far: 1 of 2 ratios outside the paper's range, 1 without a verdict yet", "failed"},
		{[]report.RatioRow{thin, oom, none}, "no verdict yet: 2 of 3 ratios measured, a verdict needs 3 quiet runs with warm epochs a side", "queued"},
		{[]report.RatioRow{none}, "no verdict yet: no ratio has both sides finished", "queued"},
	} {
		if got, badge := studyVerdict(c.ratios); got != c.want || badge != c.badge {
			t.Errorf("%+v: %q (%s), want %q (%s)", c.ratios, got, badge, c.want, c.badge)
		}
	}
}

// TestExampleExperiment: an example's experiments are known by its
// grid's name, with a GridIn suffix, cut short to fit.
func TestExampleExperiment(t *testing.T) {
	const g = "GIDS Fig. 9: storage access accumulator off and on"
	for _, c := range []struct {
		name string
		want bool
	}{
		{g, true},
		{g + " [compute cpu]", true},
		{"GIDS Fig. 9: storage access acc… [compute model:h100-pyg]", true},
		{"GIDS Fig. 9: storage access accumulator off", false},
		{"GIDS Fig. 9: other… [compute cpu]", false},
		{"… [compute cpu]", false},
		{"gids-fig09-accumulator", false},
	} {
		if got := exampleExperiment(g, c.name); got != c.want {
			t.Errorf("exampleExperiment(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReproduceFigureMap: the Reproduce page lists every figure and table
// of the figure map under its paper with its status; a study's row links
// the latest experiment made for it and its verdict as the experiment's
// comparison gives it.
func TestReproduceFigureMap(t *testing.T) {
	e := newEnvWith(t, t.TempDir(), func(o *experiments.Options) {
		o.MinMemory = func(train.Config, dataset.Meta) int64 { return 0 }
	})
	studyDataset(t, e.dir)
	e.login()
	code, page := e.get("/reproduce")
	if code != 200 {
		t.Fatalf("GET /reproduce: %d", code)
	}
	total := 0
	for _, p := range studies.FigureMap() {
		if !strings.Contains(page, fmt.Sprintf(`data-paper="%s"`, strings.ReplaceAll(p.Name, "'", "&#39;"))) {
			t.Errorf("the map lacks the paper %s", p.Name)
		}
		total += len(p.Figures)
	}
	if got := strings.Count(page, "data-figure="); got != total {
		t.Errorf("%d figure rows on the page, want the map's %d", got, total)
	}
	for _, want := range []string{`data-figure="Fig. 13" data-status="needs-hardware"`, "several GPUs, one per subprocess",
		`data-figure="Fig. 15" data-status="not-yet"`, `href="#study-gnndrive-table2"`, `href="/experiments#example-gids-fig09-accumulator.json"`,
		"no experiment yet", `<span class="badge failed">differs</span>`, "Ginex&#39;s 16 synchronous 4 KiB readers reach 32 % of its I/O floor"} {
		if !strings.Contains(page, want) {
			t.Errorf("the map lacks %q", want)
		}
	}

	// Two experiments of gnndrive-table2: the map links the later one.
	s, _ := studies.Lookup("gnndrive-table2")
	first := e.create(mustGrid(t, s, 1))
	g, err := s.GridIn("tiny8", "", 3)
	if err != nil {
		t.Fatal(err)
	}
	second := e.create(string(g))
	// Ginex / GNNDrive-GPU at 26.4 over 10 s, three quiet runs a side with
	// a warm epoch: the paper's 2.64×; the other three ratios pending.
	for _, r := range e.runs(second.ID) {
		switch r.System {
		case "ginex":
			e.play(r, 2, 26.4, store.StatusDone)
		case "gnndrive:feature_buffer=device":
			e.play(r, 2, 10, store.StatusDone)
		}
	}
	_, page = e.get("/reproduce")
	row := regexp.MustCompile(`(?s)<div class="map-study" data-study="gnndrive-table2">.*?</div>`).FindString(page)
	if !strings.Contains(row, fmt.Sprintf(`href="/experiments/%d"`, second.ID)) || strings.Contains(row, fmt.Sprintf(`href="/experiments/%d"`, first.ID)) {
		t.Errorf("the map's gnndrive-table2 row does not link the latest experiment %d (first %d): %s", second.ID, first.ID, row)
	}
	if !strings.Contains(row, "holds so far") || !strings.Contains(row, "1 of 4 ratios within the paper&#39;s range, 3 without a verdict yet") {
		t.Errorf("the map's gnndrive-table2 verdict: %s", row)
	}
}

// mustGrid is study s's grid on tiny8, repeated repeats times.
func mustGrid(t *testing.T, s studies.Study, repeats int) string {
	t.Helper()
	g, err := s.GridIn("tiny8", "", repeats)
	if err != nil {
		t.Fatal(err)
	}
	return string(g)
}
