package studies

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/REPRODUCTION.md's figure map from figures.json")

// The markers of docs/REPRODUCTION.md's generated section.
const (
	figureMapBegin = "<!-- figure-map:begin -->"
	figureMapEnd   = "<!-- figure-map:end -->"
	reproductionMD = "../../docs/REPRODUCTION.md"
)

// TestFigureMapEmbedded: the embedded map parses against the registry,
// lists the five papers, and every study file's figure is on it, listed
// with that study.
func TestFigureMapEmbedded(t *testing.T) {
	if err := CheckFigures(); err != nil {
		t.Fatal(err)
	}
	m := FigureMap()
	var names []string
	for _, p := range m {
		names = append(names, p.Name)
	}
	for _, want := range []string{"GNNDrive (ICPP'24)", "Ginex (VLDB'22)", "DiskGNN (arXiv 2405.05231)", "GIDS (VLDB'24)", "Helios"} {
		if !slices.Contains(names, want) {
			t.Errorf("the figure map lacks %s (has %v)", want, names)
		}
	}
	listed := 0
	for _, s := range All() {
		if _, refs, ok := StudyFigures(s, m); ok {
			listed++
			if len(refs) == 0 {
				t.Errorf("study %s names no figure", s.ID)
			}
		}
	}
	if listed < len(Papers()) {
		t.Errorf("%d studies name a figure, fewer than the %d paper studies", listed, len(Papers()))
	}
}

// TestFigureMapNumbering: each paper's figures and tables are numbered
// 1..N without a gap (a gap is a figure left off the map), appendix
// figures ("Fig. B.1") aside.
func TestFigureMapNumbering(t *testing.T) {
	re := regexp.MustCompile(`^(Fig\.|Table) ([0-9]+)$`)
	for _, p := range FigureMap() {
		nums := map[string][]int{}
		for _, f := range p.Figures {
			if m := re.FindStringSubmatch(f.ID); m != nil {
				n, _ := strconv.Atoi(m[2])
				nums[m[1]] = append(nums[m[1]], n)
			}
		}
		for kind, ns := range nums {
			slices.Sort(ns)
			for i, n := range ns {
				if n != i+1 {
					t.Errorf("%s: %s %d missing (have %v)", p.Name, kind, i+1, ns)
					break
				}
			}
		}
		if len(nums["Fig."]) == 0 {
			t.Errorf("%s: no figures", p.Name)
		}
	}
}

// TestFigureRefs: the figure ids a study's figure or name refers to.
func TestFigureRefs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Table 2", []string{"Table 2"}},
		{"Fig. 9 (and Fig. 8)", []string{"Fig. 9", "Fig. 8"}},
		{"§5.2 overall performance (Fig. 14)", []string{"Fig. 14"}},
		{"Fig. 2 (§3, §5.2)", []string{"Fig. 2"}},
		{"Fig. 8–9: no cache", []string{"Fig. 8", "Fig. 9"}},
		{"Fig. B.1", []string{"Fig. B.1"}},
		{"Figure 3", nil},
		{"§4.3", nil},
	} {
		if got := FigureRefs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("FigureRefs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// figureTestStudies are a paper study of Ginex's Fig. 14, an example of
// GIDS's Fig. 9 and an example that names no figure.
func figureTestStudies(t *testing.T) []Study {
	t.Helper()
	reasons := map[string]string{"cpu": "training runs on a CPU"}
	files := map[string]string{
		"g14.json":   `{"grid": {"dataset": "medium", "axes": {"system": ["ginex", "pyg+"], "mem_limit": ["25%"]}}, "paper": {"name": "Ginex (VLDB'22)", "figure": "§5.2 (Fig. 14)", "title": "t", "metric": "epoch_s", "differ": ["$cpu"]}}`,
		"gids9.json": `{"grid": {"name": "GIDS Fig. 9: accumulator", "dataset": "default"}}`,
		"all.json":   `{"grid": {"name": "All variants", "dataset": "default"}}`,
	}
	var out []Study
	for name, body := range files {
		s, err := Parse(name, []byte(body), reasons)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestParseFiguresBad: a wrong map is refused, the message naming the
// file, the paper, the figure and what is wrong.
func TestParseFiguresBad(t *testing.T) {
	all := figureTestStudies(t)
	doc := func(ginexFigs, gidsFigs string) string {
		return `{"papers": [
			{"name": "Ginex (VLDB'22)", "short": "Ginex", "file": "ginex.txt", "figures": [` + ginexFigs + `]},
			{"name": "GIDS (VLDB'24)", "short": "GIDS", "file": "gids.md", "figures": [` + gidsFigs + `]}]}`
	}
	const okGids = `{"id": "Fig. 9", "section": "§4.3", "plots": "p", "status": "study", "studies": ["gids9"]}`
	fig := func(id, status, extra string) string {
		return fmt.Sprintf(`{"id": %q, "section": "§5", "plots": "p", "status": %q%s}`, id, status, extra)
	}
	for _, c := range []struct{ body, want string }{
		{`{"papers": []}`, "figs.json: papers: none"},
		{`{"papers": [], "x": 1}`, `figs.json: json: unknown field "x"`},
		{doc(fig("Fig. 1", "not-an-experiment", `, "colour": "red"`), okGids), `unknown field "colour"`},
		{`{"papers": [{"name": "Ginex", "file": "g", "figures": []}]}`, `papers[0] "Ginex": name, short and file are required`},
		{doc(``, okGids), `papers[0] "Ginex (VLDB'22)": figures: none`},
		{doc(fig("Figure 1", "not-an-experiment", ""), okGids), `id "Figure 1"`},
		{doc(fig("Fig. 1", "not-an-experiment", "")+","+fig("Fig. 1", "not-an-experiment", ""), okGids), "Fig. 1: listed twice"},
		{doc(`{"id": "Fig. 1", "plots": "p", "status": "not-yet", "todo": "t"}`, okGids), "Fig. 1: section: missing"},
		{doc(fig("Fig. 1", "done", ""), okGids), `Fig. 1: status "done"`},
		{doc(fig("Fig. 1", "study", ""), okGids), `Fig. 1: studies: required with status "study"`},
		{doc(fig("Fig. 14", "study", `, "studies": ["g14"], "todo": "t"`), okGids), `Fig. 14: todo: not a field of status "study"`},
		{doc(fig("Fig. 1", "needs-hardware", `, "reason": "GPUs"`), okGids), `Fig. 1: runs_on: required`},
		{doc(fig("Fig. 1", "not-yet", ""), okGids), `Fig. 1: todo: required with status "not-yet"`},
		{doc(fig("Fig. 1", "not-yet", `, "todo": "t", "studies": ["g14"]`), okGids), `Fig. 1: studies: not a field of status "not-yet"`},
		{doc(fig("Fig. 1", "not-an-experiment", `, "reason": "r"`), okGids), `Fig. 1: reason: not a field`},
		{doc(fig("Fig. 14", "study", `, "studies": ["nope"]`), okGids), `Fig. 14: studies: "nope" is no study file`},
		{doc(fig("Fig. 1", "not-an-experiment", `, "measured": {"verdict": "holds", "text": "t", "where": "w"}`), okGids), `Fig. 1: measured: not a field of status "not-an-experiment"`},
		{doc(fig("Fig. 1", "not-yet", `, "todo": "t", "measured": {"verdict": "great", "text": "t", "where": "w"}`), okGids), `Fig. 1: measured.verdict "great"`},
		{doc(fig("Fig. 1", "not-yet", `, "todo": "t", "measured": {"verdict": "holds", "where": "w"}`), okGids), `Fig. 1: measured.text: missing`},
		{doc(fig("Fig. 1", "not-yet", `, "todo": "t", "measured": {"verdict": "differs", "text": "t"}`), okGids), `Fig. 1: measured.where: missing`},
		{doc(fig("Fig. 1", "not-yet", `, "todo": "t", "measured": {"verdict": "holds", "text": "t", "where": "w", "when": "now"}`), okGids), `unknown field "when"`},
		{doc(fig("Fig. 15", "study", `, "studies": ["g14"]`), okGids), `Fig. 15: studies: "g14" reproduces Ginex (VLDB'22) Fig. 14, not this figure`},
		{doc(fig("Fig. 9", "study", `, "studies": ["gids9"]`), okGids), `Fig. 9: studies: "gids9" reproduces GIDS (VLDB'24) Fig. 9`},
		{doc(fig("Fig. 14", "study", `, "studies": ["all"]`), okGids), `Fig. 14: studies: "all" reproduces`},
		{doc(fig("Fig. 1", "bench", ""), okGids), `Fig. 1: command: required with status "bench"`},
		{doc(fig("Fig. 1", "bench", `, "command": "fio --rw=randread"`), okGids), `Fig. 1: command "fio --rw=randread": want an outcore bench command`},
		{doc(fig("Fig. 14", "bench", `, "command": "outcore bench sync", "studies": ["g14"]`), okGids), `Fig. 14: studies: not a field of status "bench"`},
		{doc(fig("Fig. 1", "not-yet", `, "todo": "t", "command": "outcore bench sync"`), okGids), `Fig. 1: command: not a field of status "not-yet"`},
	} {
		_, err := ParseFigures("figs.json", []byte(c.body), all)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "figs.json: ") {
			t.Errorf("%s:\n  %v, want an error with %q", c.body, err, c.want)
		}
	}
	good := doc(fig("Fig. 1", "not-an-experiment", "")+","+fig("Fig. 14", "study", `, "studies": ["g14"]`)+","+
		fig("Fig. 20", "bench", `, "command": "outcore bench sync --bs 512"`), okGids+","+
		fig("Fig. 10", "needs-hardware", `, "reason": "several SSDs", "runs_on": "a cluster"`))
	m, err := ParseFigures("figs.json", []byte(good), all)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || len(m[0].Figures) != 3 || m[1].Figures[1].Reason != "several SSDs" || m[0].Figures[2].Command != "outcore bench sync --bs 512" {
		t.Fatalf("a good map read as %+v", m)
	}
	if err := CheckFigureCoverage(m, all); err != nil {
		t.Errorf("a map listing every study's figure: %v", err)
	}
	// a map without GIDS's Fig. 9 leaves the example gids9 off it
	m[1].Figures = m[1].Figures[1:]
	if err := CheckFigureCoverage(m, all); err == nil || !strings.Contains(err.Error(), "study gids9: GIDS (VLDB'24) Fig. 9 is not on the figure map") {
		t.Errorf("a study's figure off the map: %v", err)
	}
	// listed, but not with the study
	m[0].Figures[1].Studies = nil
	m[0].Figures[1].Status = StatusNotYet
	m[1].Figures = nil
	if err := CheckFigureCoverage(m, all); err == nil || !strings.Contains(err.Error(), "does not list it") {
		t.Errorf("a figure whose entry does not list its study: %v", err)
	}
	// the paper itself absent
	if err := CheckFigureCoverage(m[1:], all); err == nil || !strings.Contains(err.Error(), `study g14: its paper "Ginex (VLDB'22)" is not on the figure map`) {
		t.Errorf("a study's paper off the map: %v", err)
	}
}

// TestFigureMapMarkdown: the generated section has a table per paper and
// a row per figure, with each status's fields.
func TestFigureMapMarkdown(t *testing.T) {
	md := FigureMapMarkdown(FigureMap())
	rows := 0
	for _, p := range FigureMap() {
		if !strings.Contains(md, "\n### "+p.Name+": figures and tables\n") {
			t.Errorf("no heading for %s", p.Name)
		}
		rows += len(p.Figures)
		for _, f := range p.Figures {
			if f.Status == StatusStudy && !strings.Contains(md, "**study** `"+f.Studies[0]+"`") {
				t.Errorf("%s %s: its study is not in the doc", p.Name, f.ID)
			}
		}
	}
	if got := strings.Count(md, "\n| Fig. ") + strings.Count(md, "\n| Table "); got != rows {
		t.Errorf("%d figure rows, want %d", got, rows)
	}
	if !strings.Contains(md, "**needs other hardware**: several GPUs") {
		t.Error("a needs-hardware row lacks its reason")
	}
}

// TestFigureMapDoc: docs/REPRODUCTION.md's section between the
// figure-map markers is what figures.json generates. Regenerate it with
// `go test ./experiments/studies -run FigureMapDoc -update`.
func TestFigureMapDoc(t *testing.T) {
	b, err := os.ReadFile(reproductionMD)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(b, []byte(figureMapBegin)), bytes.Index(b, []byte(figureMapEnd))
	if i < 0 || j < i {
		t.Fatalf("%s: no %s … %s section", reproductionMD, figureMapBegin, figureMapEnd)
	}
	want := "\n" + FigureMapMarkdown(FigureMap()) + "\n"
	got := string(b[i+len(figureMapBegin) : j])
	if got == want {
		return
	}
	if *update {
		out := slices.Concat(b[:i+len(figureMapBegin)], []byte(want), b[j:])
		if err := os.WriteFile(reproductionMD, out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s's figure map", reproductionMD)
		return
	}
	t.Errorf("%s's figure map differs from figures.json's; run `go test ./experiments/studies -run FigureMapDoc -update`", reproductionMD)
}

// TestFigureMapMeasuredWhere: every measured result names a place of
// docs/REPRODUCTION.md, outside the generated map, where it is recorded.
func TestFigureMapMeasuredWhere(t *testing.T) {
	b, err := os.ReadFile(reproductionMD)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if i, j := strings.Index(doc, figureMapBegin), strings.Index(doc, figureMapEnd); i >= 0 && j > i {
		doc = doc[:i] + doc[j:]
	}
	n := 0
	for _, p := range FigureMap() {
		for _, f := range p.Figures {
			if m := f.Measured; m != nil {
				n++
				if !strings.Contains(doc, "## "+m.Where) && !strings.Contains(doc, "**"+m.Where+"**") {
					t.Errorf("%s %s: measured under %q, which is no heading or bold label of %s", p.Name, f.ID, m.Where, reproductionMD)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no figure has a measured result")
	}
}
