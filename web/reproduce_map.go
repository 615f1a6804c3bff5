package web

import (
	"context"
	"fmt"
	"strings"

	"outcore/experiments/studies"
	"outcore/report"
	"outcore/store"
	"outcore/web/views"
)

// figureMap is the Reproduce page's map: per paper (studies.FigureMap),
// every figure and table with its status; a figure's studies link their
// card (a reproduction study) or their example on the experiment list,
// and the latest experiment made for each, with the verdict its study
// comparison gives (report.CompareStudy, as the experiment page shows
// it). exps are the store's experiments.
func (h *ReproduceHandler) figureMap(ctx context.Context, exps []store.Experiment) ([]views.FigureMapPaper, error) {
	latest := latestExperiments(exps)
	verdicts := map[string][2]string{} // study ID → verdict, badge (computed once a study)
	var out []views.FigureMapPaper
	for _, p := range studies.FigureMap() {
		n := studies.FigureCounts(p)
		mp := views.FigureMapPaper{Name: p.Name, File: p.File, Anchor: "map-" + strings.ToLower(p.Short),
			Counts: fmt.Sprintf("%d figures and tables: %d with a study, %d with a bench command, %d need other hardware, %d without a study yet, %d not experiments",
				len(p.Figures), n[studies.StatusStudy], n[studies.StatusBench], n[studies.StatusNeedsHardware], n[studies.StatusNotYet], n[studies.StatusNotAnExperiment])}
		for _, f := range p.Figures {
			row := views.FigureRow{ID: f.ID, Section: f.Section, Plots: f.Plots, Key: f.Status, Status: studies.StatusWords(f.Status),
				Badge: statusBadge(f.Status), Note: f.Note}
			if m := f.Measured; m != nil {
				row.Measured, row.MeasuredBadge, row.MeasuredText, row.MeasuredWhere = studies.MeasuredWords(m.Verdict), measuredBadge(m.Verdict), m.Text, m.Where
			}
			switch f.Status {
			case studies.StatusBench:
				row.Detail = "measured by " + f.Command + " (a device measurement, not a training grid)"
			case studies.StatusNeedsHardware:
				row.Detail = f.Reason + "; runs on " + f.RunsOn
			case studies.StatusNotYet:
				row.Detail = f.Todo
			}
			for _, id := range f.Studies {
				s, ok := studies.Lookup(id)
				if !ok {
					continue // the catalogue's parse refuses this; nothing to link
				}
				fs := views.FigureStudy{ID: id, Href: "#study-" + id}
				if !s.IsPaper() {
					fs.Href = "/experiments#example-" + id + ".json"
				}
				if e, ok := latest[id]; ok {
					fs.Latest = e.ID
					vb, done := verdicts[id]
					if !done {
						words, badge, err := h.verdict(ctx, s, e)
						if err != nil {
							return nil, err
						}
						vb = [2]string{words, badge}
						verdicts[id] = vb
					}
					fs.Verdict, fs.VerdictWhy, _ = strings.Cut(vb[0], ": ")
					fs.VerdictBadge = vb[1]
				}
				row.Studies = append(row.Studies, fs)
			}
			mp.Figures = append(mp.Figures, row)
		}
		out = append(out, mp)
	}
	return out, nil
}

// verdict is the latest experiment e of study s summed up: for a
// reproduction study its ratios' verdicts (studyVerdict), for an example
// none (no paper numbers to set beside it).
func (h *ReproduceHandler) verdict(ctx context.Context, s studies.Study, e store.Experiment) (string, string, error) {
	if !s.IsPaper() {
		return "example: no paper numbers beside it (docs/REPRODUCTION.md has its measured ratios)", "empty", nil
	}
	t, ok, err := compareStudy(ctx, h.Store, h.Digests, h.DataDir, e)
	if err != nil || !ok {
		return "", "", err
	}
	words, badge := studyVerdict(t.Ratios)
	return words, badge, nil
}

// studyVerdict sums up a study comparison's ratios as their verdicts
// stand on the experiment page: a ratio holds or differs only with its
// evidence (report.MinEvidence quiet warm runs a side); the rest are
// pending. It invents nothing the comparison does not say.
func studyVerdict(ratios []report.RatioRow) (words, badge string) {
	if len(ratios) == 0 {
		return "no ratio: the study sets none of the paper's", "empty"
	}
	within, outside, measured := 0, 0, 0
	for _, r := range ratios {
		switch {
		case r.HaveOurs && r.Evidence && r.Within:
			within++
		case r.HaveOurs && r.Evidence:
			outside++
		case r.HaveOurs || r.NumOOM || r.DenOOM:
			measured++
		}
	}
	n := len(ratios)
	rest := n - within - outside
	switch {
	case within == n:
		return fmt.Sprintf("holds: %s within the paper's range", ofRatios(within, n)), "done"
	case outside == n:
		return fmt.Sprintf("differs: %s outside the paper's range", ofRatios(outside, n)), "failed"
	case within > 0 && outside > 0:
		words := fmt.Sprintf("partly: %s within the paper's range, %d outside", ofRatios(within, n), outside)
		if rest > 0 {
			words += fmt.Sprintf(", %d without a verdict yet", rest)
		}
		return words, "stalled"
	case within > 0:
		return fmt.Sprintf("holds so far: %s within the paper's range, %d without a verdict yet", ofRatios(within, n), rest), "done"
	case outside > 0:
		return fmt.Sprintf("differs so far: %s outside the paper's range, %d without a verdict yet", ofRatios(outside, n), rest), "failed"
	case measured > 0:
		return fmt.Sprintf("no verdict yet: %s measured, a verdict needs %d quiet runs with warm epochs a side", ofRatios(measured, n), report.MinEvidence), "queued"
	}
	return "no verdict yet: no ratio has both sides finished", "queued"
}

// ofRatios is "k of n ratios" ("the ratio" for one of one).
func ofRatios(k, n int) string {
	if n == 1 && k == 1 {
		return "the ratio"
	}
	return fmt.Sprintf("%d of %d ratios", k, n)
}

// statusBadge is the badge class a figure's status is drawn with.
func statusBadge(status string) string {
	switch status {
	case studies.StatusStudy, studies.StatusBench:
		return "done"
	case studies.StatusNeedsHardware:
		return "interrupted"
	case studies.StatusNotYet:
		return "queued"
	}
	return "empty"
}

// measuredBadge is the badge class a recorded result is drawn with.
func measuredBadge(verdict string) string {
	switch verdict {
	case studies.MeasuredHolds:
		return "done"
	case studies.MeasuredDiffers:
		return "failed"
	case studies.MeasuredPartly:
		return "stalled"
	}
	return "queued"
}

// latestExperiments maps each study ID to the latest experiment made for
// it: a reproduction study's by the ID its name starts with
// (studies.ByExperiment), an example's by its grid's name (as created
// from the experiment list or `outcore exp create --study`, with a
// " [compute …]" suffix or cut short to fit).
func latestExperiments(exps []store.Experiment) map[string]store.Experiment {
	out := map[string]store.Experiment{}
	keep := func(id string, e store.Experiment) {
		if old, ok := out[id]; !ok || e.ID > old.ID {
			out[id] = e
		}
	}
	examples := studies.Examples()
	for _, e := range exps {
		if s, ok := studies.ByExperiment(e.Name); ok {
			keep(s.ID, e)
			continue
		}
		for _, s := range examples {
			if exampleExperiment(s.ExperimentName(), e.Name) {
				keep(s.ID, e)
				break
			}
		}
	}
	return out
}

// exampleExperiment reports whether an experiment named name was made
// from the example whose grid is named grid: the name itself, or with a
// " [...]" suffix (studies.Study.GridIn), the grid's name then possibly
// cut short with "…".
func exampleExperiment(grid, name string) bool {
	if name == grid {
		return true
	}
	head, _, ok := strings.Cut(name, " [")
	if !ok {
		return false
	}
	if head == grid {
		return true
	}
	cut, ok := strings.CutSuffix(head, "…")
	return ok && cut != "" && strings.HasPrefix(grid, cut)
}
