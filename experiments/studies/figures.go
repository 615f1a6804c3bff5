package studies

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The figure map (figures.json): every figure and table of the five
// papers' evaluations — and of their motivation sections where those are
// measurements — with what this project does about each. Diagrams,
// pseudocode, configuration and dataset tables are listed too, as
// not-an-experiment, so that the map is the whole list of each paper's
// figures and tables, not a selection. The Reproduce page (web/reproduce.go)
// and docs/REPRODUCTION.md's "Every figure and table" section
// (FigureMapMarkdown) are drawn from it.

// A figure's status.
const (
	// StatusStudy: reproduced by the study files Studies (a paper study
	// naming the figure in its paper block, or an example grid named
	// "SHORT Fig. N: ...").
	StatusStudy = "study"
	// StatusBench: reproduced by a bench command (Command, "outcore bench
	// ..."), not a training grid: a device measurement such as GNNDrive's
	// Appendix B.
	StatusBench = "bench"
	// StatusNeedsHardware: needs hardware this host lacks (Reason), and
	// what would run it (RunsOn); Studies may name what of it runs here.
	StatusNeedsHardware = "needs-hardware"
	// StatusNotYet: runnable here, no study yet; Todo says what the study
	// would need.
	StatusNotYet = "not-yet"
	// StatusNotAnExperiment: a diagram, pseudocode, a configuration or
	// dataset table.
	StatusNotAnExperiment = "not-an-experiment"
)

// FigurePaper is one paper of the figure map and its figures and tables
// in the paper's order.
type FigurePaper struct {
	// Name is the paper as study files' paper blocks name it
	// ("GNNDrive (ICPP'24)"); Short is how example grids' names start
	// ("GIDS" in "GIDS Fig. 9: ...").
	Name  string `json:"name"`
	Short string `json:"short"`
	// File is the paper's text in the shared papers folder.
	File    string   `json:"file"`
	Figures []Figure `json:"figures"`
}

// Figure is one figure or table of a paper.
type Figure struct {
	ID      string `json:"id"`      // "Fig. 9", "Table 2", "Fig. B.1"
	Section string `json:"section"` // "§5.1"
	Plots   string `json:"plots"`   // what it plots: quantity against what, which systems
	Status  string `json:"status"`
	// Studies are the study IDs that reproduce it (StatusStudy), or what
	// of it runs here (StatusNeedsHardware, optional).
	Studies []string `json:"studies,omitempty"`
	// Reason and RunsOn: the hardware it needs and what would run it
	// (StatusNeedsHardware).
	Reason string `json:"reason,omitempty"`
	RunsOn string `json:"runs_on,omitempty"`
	// Todo is what a study of it would need (StatusNotYet).
	Todo string `json:"todo,omitempty"`
	// Command is the bench command that measures it (StatusBench).
	Command string `json:"command,omitempty"`
	// Measured is the result recorded in docs/REPRODUCTION.md, where the
	// figure was measured (by its study or by a grid of its own).
	Measured *Measured `json:"measured,omitempty"`
	// Note is anything else worth a line: a chart that draws it, what
	// runs record of it.
	Note string `json:"note,omitempty"`
}

// Measured is a figure's measured result as docs/REPRODUCTION.md records
// it: whether the paper's claim holds here, and what was measured and
// why it differs.
type Measured struct {
	// Verdict is MeasuredHolds, MeasuredDiffers, MeasuredPartly or
	// MeasuredNot (its setting could not be run here).
	Verdict string `json:"verdict"`
	// Text is ours against the paper's and, where it differs, the
	// measured cause.
	Text string `json:"text"`
	// Where is the section or table of docs/REPRODUCTION.md it is
	// recorded in (a test finds it there).
	Where string `json:"where"`
}

// Measured verdicts.
const (
	MeasuredHolds   = "holds"
	MeasuredDiffers = "differs"
	MeasuredPartly  = "partly"
	MeasuredNot     = "not-measured"
)

//go:embed figures.json
var figuresJSON []byte

// figureMap is figures.json parsed against the registry once; figureErr
// what was wrong with it (CheckFigures).
var figureMap, figureErr = ParseFigures("figures.json", figuresJSON, registry)

// FigureMap returns the figure map: the five papers, each with every
// figure and table in its order (nil when figures.json does not parse,
// CheckFigures).
func FigureMap() []FigurePaper { return slices.Clone(figureMap) }

// CheckFigures reports what is wrong with the embedded figure map: an
// entry that does not parse, or a study whose figure it lacks; nil when
// nothing is.
func CheckFigures() error {
	if figureErr != nil {
		return figureErr
	}
	return CheckFigureCoverage(figureMap, registry)
}

// figureFile is figures.json as written.
type figureFile struct {
	Papers []FigurePaper `json:"papers"`
}

var (
	// figureIDRe is a figure or table id: "Fig. 9", "Table 2", "Fig. B.1".
	figureIDRe = regexp.MustCompile(`^(Fig\.|Table) ([A-Z]\.)?[0-9]+$`)
	// figureRefRe finds figure references in a study's figure or name:
	// "Fig. 9 (and Fig. 8)", "Fig. 8–9", "§5.2 overall performance (Fig. 14)".
	figureRefRe = regexp.MustCompile(`(Fig\.|Table) ([A-Z]\.)?([0-9]+)(?:\s*[–-]\s*([0-9]+))?`)
)

// FigureRefs lists the figure and table ids a text names, a range
// ("Fig. 8–9") as each of its ids.
func FigureRefs(text string) []string {
	var out []string
	for _, m := range figureRefRe.FindAllStringSubmatch(text, -1) {
		first, last := atoiSmall(m[3]), atoiSmall(m[4])
		if last < first || last-first > 20 {
			last = first
		}
		for n := first; n <= last; n++ {
			id := fmt.Sprintf("%s %s%d", m[1], m[2], n)
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// atoiSmall is s's value as a small decimal number, 0 when s is empty.
func atoiSmall(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// StudyFigures is the paper (its Name) and the figures a study
// reproduces: a paper study's from its paper block, an example's from
// its grid's name ("GIDS Fig. 9: ...", the paper by its Short name, the
// figures before the colon). ok is false for a study that names no
// figure of a paper of papers (an example such as variants-medium).
func StudyFigures(s Study, papers []FigurePaper) (paper string, figures []string, ok bool) {
	if s.IsPaper() {
		return s.Paper.Name, FigureRefs(s.Figure), true
	}
	name := s.ExperimentName()
	head, _, _ := strings.Cut(name, ":")
	for _, p := range papers {
		if rest, found := strings.CutPrefix(head, p.Short+" "); found {
			if refs := FigureRefs(rest); len(refs) > 0 && figureRefRe.FindStringIndex(rest)[0] == 0 {
				return p.Name, refs, true
			}
		}
	}
	return "", nil, false
}

// ParseFigures reads the figure map (file name for errors) against the
// study registry all: unknown fields are refused; every paper has a name,
// a short name, its file and figures; every figure an id ("Fig. 9",
// "Table 2"), unique in its paper, its section, what it plots, a status
// and exactly the fields its status wants; every study it lists exists
// and names this paper and figure. Errors name the file, the paper and
// the figure.
func ParseFigures(name string, b []byte, all []Study) ([]FigurePaper, error) {
	var f figureFile
	if err := decodeStrict(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(f.Papers) == 0 {
		return nil, fmt.Errorf("%s: papers: none", name)
	}
	byID := map[string]Study{}
	for _, s := range all {
		byID[s.ID] = s
	}
	names := map[string]bool{}
	for i, p := range f.Papers {
		where := fmt.Sprintf("%s: papers[%d] %q", name, i, p.Name)
		switch {
		case strings.TrimSpace(p.Name) == "" || strings.TrimSpace(p.Short) == "" || strings.TrimSpace(p.File) == "":
			return nil, fmt.Errorf("%s: name, short and file are required", where)
		case names[p.Name]:
			return nil, fmt.Errorf("%s: the paper is listed twice", where)
		case len(p.Figures) == 0:
			return nil, fmt.Errorf("%s: figures: none", where)
		}
		names[p.Name] = true
		ids := map[string]bool{}
		for _, fig := range p.Figures {
			at := fmt.Sprintf("%s %s", where, fig.ID)
			if !figureIDRe.MatchString(fig.ID) {
				return nil, fmt.Errorf("%s: id %q: want \"Fig. N\", \"Table N\" or \"Fig. B.N\"", where, fig.ID)
			}
			if ids[fig.ID] {
				return nil, fmt.Errorf("%s: listed twice", at)
			}
			ids[fig.ID] = true
			if err := checkFigure(fig, p, f.Papers, byID); err != nil {
				return nil, fmt.Errorf("%s: %w", at, err)
			}
		}
	}
	return f.Papers, nil
}

// checkFigure checks one figure's fields against its status and its
// studies against the registry.
func checkFigure(fig Figure, p FigurePaper, papers []FigurePaper, byID map[string]Study) error {
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch {
	case blank(fig.Section):
		return fmt.Errorf("section: missing")
	case blank(fig.Plots):
		return fmt.Errorf("plots: missing (what it plots, against what, which systems)")
	}
	type field struct {
		name string
		set  bool
	}
	want := func(required, allowed []field) error {
		for _, f := range required {
			if !f.set {
				return fmt.Errorf("%s: required with status %q", f.name, fig.Status)
			}
		}
		for _, f := range allowed {
			if f.set {
				return fmt.Errorf("%s: not a field of status %q", f.name, fig.Status)
			}
		}
		return nil
	}
	studies := field{"studies", len(fig.Studies) > 0}
	reason, runsOn, todo := field{"reason", !blank(fig.Reason)}, field{"runs_on", !blank(fig.RunsOn)}, field{"todo", !blank(fig.Todo)}
	command := field{"command", !blank(fig.Command)}
	var err error
	switch fig.Status {
	case StatusStudy:
		err = want([]field{studies}, []field{reason, runsOn, todo, command})
	case StatusBench:
		err = want([]field{command}, []field{studies, reason, runsOn, todo})
	case StatusNeedsHardware:
		err = want([]field{reason, runsOn}, []field{todo, command})
	case StatusNotYet:
		err = want([]field{todo}, []field{studies, reason, runsOn, command})
	case StatusNotAnExperiment:
		err = want(nil, []field{studies, reason, runsOn, todo, command})
	default:
		return fmt.Errorf("status %q: want %s, %s, %s, %s or %s", fig.Status, StatusStudy, StatusBench, StatusNeedsHardware, StatusNotYet, StatusNotAnExperiment)
	}
	if err != nil {
		return err
	}
	if command.set && !strings.HasPrefix(fig.Command, "outcore bench ") {
		return fmt.Errorf("command %q: want an outcore bench command (\"outcore bench ...\")", fig.Command)
	}
	if m := fig.Measured; m != nil {
		switch {
		case fig.Status == StatusNotAnExperiment:
			return fmt.Errorf("measured: not a field of status %q", fig.Status)
		case !slices.Contains([]string{MeasuredHolds, MeasuredDiffers, MeasuredPartly, MeasuredNot}, m.Verdict):
			return fmt.Errorf("measured.verdict %q: want %s, %s, %s or %s", m.Verdict, MeasuredHolds, MeasuredDiffers, MeasuredPartly, MeasuredNot)
		case blank(m.Text):
			return fmt.Errorf("measured.text: missing (ours against the paper's, and the cause where it differs)")
		case blank(m.Where):
			return fmt.Errorf("measured.where: missing (the section of docs/REPRODUCTION.md it is recorded in)")
		}
	}
	for _, id := range fig.Studies {
		s, ok := byID[id]
		if !ok {
			return fmt.Errorf("studies: %q is no study file", id)
		}
		paper, refs, ok := StudyFigures(s, papers)
		if !ok || paper != p.Name || !slices.Contains(refs, fig.ID) {
			return fmt.Errorf("studies: %q reproduces %s %s, not this figure", id, paper, strings.Join(refs, ", "))
		}
	}
	return nil
}

// CheckFigureCoverage reports the first study of all that names a figure
// (StudyFigures) which the map lacks or which the map's entry does not
// list: every study's figure is on the map.
func CheckFigureCoverage(papers []FigurePaper, all []Study) error {
	// by id, so that the same map and studies give the same first error
	all = slices.Clone(all)
	slices.SortFunc(all, func(a, b Study) int { return strings.Compare(a.ID, b.ID) })
	for _, s := range all {
		paper, refs, ok := StudyFigures(s, papers)
		if !ok {
			if s.IsPaper() {
				return fmt.Errorf("study %s: its paper %q is not on the figure map", s.ID, s.Paper.Name)
			}
			continue
		}
		i := slices.IndexFunc(papers, func(p FigurePaper) bool { return p.Name == paper })
		if i < 0 {
			return fmt.Errorf("study %s: its paper %q is not on the figure map", s.ID, paper)
		}
		if len(refs) == 0 {
			return fmt.Errorf("study %s: its figure %q names no \"Fig. N\" or \"Table N\"", s.ID, s.Figure)
		}
		for _, ref := range refs {
			j := slices.IndexFunc(papers[i].Figures, func(f Figure) bool { return f.ID == ref })
			if j < 0 {
				return fmt.Errorf("study %s: %s %s is not on the figure map", s.ID, paper, ref)
			}
			if !slices.Contains(papers[i].Figures[j].Studies, s.ID) {
				return fmt.Errorf("study %s: the figure map's %s %s does not list it", s.ID, paper, ref)
			}
		}
	}
	return nil
}

// StatusWords is a status as the page and the doc say it.
func StatusWords(status string) string {
	switch status {
	case StatusStudy:
		return "study"
	case StatusBench:
		return "bench"
	case StatusNeedsHardware:
		return "needs other hardware"
	case StatusNotYet:
		return "no study yet"
	case StatusNotAnExperiment:
		return "not an experiment"
	}
	return status
}

// MeasuredWords is a measured verdict as the page and the doc say it.
func MeasuredWords(verdict string) string {
	switch verdict {
	case MeasuredHolds:
		return "holds"
	case MeasuredDiffers:
		return "differs"
	case MeasuredPartly:
		return "partly holds"
	case MeasuredNot:
		return "not measured at the paper's setting"
	}
	return verdict
}

// FigureCounts counts a paper's figures by status.
func FigureCounts(p FigurePaper) map[string]int {
	n := map[string]int{}
	for _, f := range p.Figures {
		n[f.Status]++
	}
	return n
}

// FigureMapMarkdown is the figure map as docs/REPRODUCTION.md's section
// between its figure-map markers: per paper, a count by status and a
// table of every figure and table with its status.
func FigureMapMarkdown(papers []FigurePaper) string {
	var b strings.Builder
	cell := func(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "|", `\|`) }
	for _, p := range papers {
		n := FigureCounts(p)
		fmt.Fprintf(&b, "\n### %s: figures and tables\n\n", p.Name)
		fmt.Fprintf(&b, "%d figures and tables (`%s`): %d reproduced by a study, %d by a bench command, %d need other hardware, %d without a study yet, %d not experiments.\n\n",
			len(p.Figures), p.File, n[StatusStudy], n[StatusBench], n[StatusNeedsHardware], n[StatusNotYet], n[StatusNotAnExperiment])
		b.WriteString("| figure | section | what it plots | status |\n|---|---|---|---|\n")
		for _, f := range p.Figures {
			var st string
			switch f.Status {
			case StatusStudy:
				st = "**study** " + codeList(f.Studies)
			case StatusBench:
				st = "**bench** `" + f.Command + "`"
			case StatusNeedsHardware:
				st = "**needs other hardware**: " + f.Reason + "; runs on " + f.RunsOn
				if len(f.Studies) > 0 {
					st += "; here: " + codeList(f.Studies)
				}
			case StatusNotYet:
				st = "**no study yet**: " + f.Todo
			default:
				st = "not an experiment"
			}
			if m := f.Measured; m != nil {
				st += fmt.Sprintf(". Measured: **%s**, %s (recorded under \"%s\")", MeasuredWords(m.Verdict), m.Text, m.Where)
			}
			if f.Note != "" {
				st += ". Note: " + f.Note
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(f.ID), cell(f.Section), cell(f.Plots), cell(st))
		}
	}
	return b.String()
}

// codeList is ids as `a`, `b`.
func codeList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "`" + id + "`"
	}
	return strings.Join(q, ", ")
}
