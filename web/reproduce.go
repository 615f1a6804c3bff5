package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/gofiber/fiber/v2"

	"outcore/engine/dataset"
	"outcore/engine/metrics/fields"
	"outcore/engine/vocab"
	"outcore/experiments/grid"
	"outcore/experiments/studies"
	"outcore/internal/units"
	"outcore/report"
	"outcore/store"
	"outcore/web/views"
)

// ReproduceHandler serves the Reproduce page: the map of every figure
// and table of the five papers (studies.FigureMap, reproduce_map.go) and
// the registered reproduction studies (studies.Papers), each created as
// an experiment in one click.
type ReproduceHandler struct {
	Store   Store
	Queue   Queue
	DataDir string
	Jobs    *Jobs               // makes a study's missing dataset from its preset
	Digests *report.DigestCache // finished runs' epochs, summarised once (the map's verdicts)
}

// List handles GET /reproduce.
func (h *ReproduceHandler) List(c *fiber.Ctx) error {
	v, err := h.view(c.UserContext())
	if err != nil {
		return err
	}
	return renderPage(c, views.ReproducePage(pageMeta(c, "Reproduce", "reproduce"), v))
}

// Start handles POST /reproduce/:id: form field scale "small" starts the
// study's small-scale form on the dataset field (studies.Study.SmallScale:
// its limits raised to what its variants start in there, a lighter
// model), else the study as registered on the dataset field (default the
// study's own); generate=1 first makes the study's missing dataset from
// its preset (the datasets page shows the progress). It creates the
// study's experiment and goes to its page; a grid the queue refuses comes
// back on the Reproduce page with the problems in words.
func (h *ReproduceHandler) Start(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("id"))
	s, ok := studies.Lookup(id)
	if !ok || !s.IsPaper() {
		return fiber.NewError(fiber.StatusNotFound, fmt.Sprintf("no reproduction study %q", id))
	}
	ds := strings.TrimSpace(strings.Clone(c.FormValue("dataset")))
	if ds == "" {
		ds = s.Dataset
	}
	if c.FormValue("scale") == "small" {
		meta, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(h.DataDir), ds))
		if err != nil {
			return fiber.NewError(fiber.StatusUnprocessableEntity, fmt.Sprintf("small scale on %q: %v", ds, err))
		}
		small, ok := smallScale(s, meta, h.DataDir)
		if !ok {
			return fiber.NewError(fiber.StatusUnprocessableEntity, fmt.Sprintf("%s: no share of %s's features holds every variant's floor", s.ID, ds))
		}
		s = small
	}
	gridText, err := s.Grid(ds)
	if err != nil {
		return err
	}
	if c.FormValue("generate") != "" && h.Jobs != nil {
		if cfg, perr := dataset.Preset(ds); perr == nil {
			queue := h.Queue
			h.Jobs.Generate(ds, ds, cfg, func(jctx context.Context) (string, error) {
				e, err := queue.Create(jctx, gridText)
				if err != nil {
					return "", fmt.Errorf("dataset ready, but the experiment was not created: %w", err)
				}
				return fmt.Sprintf("/experiments/%d", e.ID), nil
			})
			return redirect(c, "/datasets")
		}
	}
	e, err := h.Queue.Create(c.UserContext(), gridText)
	if err == nil {
		return redirect(c, fmt.Sprintf("/experiments/%d", e.ID))
	}
	if !errors.Is(err, grid.ErrInvalid) {
		return err
	}
	v, verr := h.view(c.UserContext())
	if verr != nil {
		return verr
	}
	var msgs []string
	for _, p := range grid.ProblemsOf(err) {
		msgs = append(msgs, p.Message)
	}
	v.Problem, v.ProblemStudy = strings.Join(msgs, "; "), s.ID
	c.Status(fiber.StatusUnprocessableEntity)
	return renderPage(c, views.ReproducePage(pageMeta(c, "Reproduce", "reproduce"), v))
}

// smallScale is s at small scale on meta's dataset: its limits raised to
// the least share every variant of s starts in there (vocab.MinMemoryFor
// with the small-scale model and the data directory, the check the queue
// makes, plus a quarter of headroom).
func smallScale(s studies.Study, meta dataset.Meta, dataDir string) (studies.Study, bool) {
	base := studies.SmallScaleBase()
	cfg := vocab.DefaultConfig()
	cfg.Dataset, cfg.DataDir = meta.Name, dataDir
	cfg.Model, cfg.Layers, cfg.Batch, cfg.Hidden = base["model"].(string), base["layers"].(int), base["batch"].(int), base["hidden"].(int)
	cfg.Fanout = base["fanout"].([]int)
	return s.SmallScale(meta.FeatureBytes(), func(entry string) int64 {
		c := cfg
		if e, err := grid.ParseSystemEntry(entry); err == nil {
			c.System, c.Options = e.Variant, e.Options
		}
		return withHeadroom(vocab.MinMemoryFor(c, meta))
	})
}

// view builds the Reproduce page: the figure map, then each study with its own dataset (or the
// offer to generate it) and its small-scale form on the first dataset
// there is (`default` on a fresh install).
func (h *ReproduceHandler) view(ctx context.Context) (views.ReproduceView, error) {
	var v views.ReproduceView
	entries, _ := dataset.ListEntries(h.DataDir)
	var first *dataset.Meta
	for _, e := range entries {
		if e.Err == nil {
			v.Datasets = append(v.Datasets, e.Name)
			if first == nil || e.Name == "default" {
				m := e.Meta
				first = &m
			}
		}
	}
	exps, err := h.Store.ListExperiments(ctx)
	if err != nil {
		return v, err
	}
	if v.Map, err = h.figureMap(ctx, exps); err != nil {
		return v, err
	}
	// The past runs on the small-scale dataset are the same for every
	// study: read them once per page, not once per study.
	var past pastRuns
	if first != nil {
		past = loadPastRuns(ctx, h.Store, first.Name)
	}
	for _, s := range studies.Papers() {
		card := views.StudyCard{ID: s.ID, Paper: s.Paper.Name, Figure: s.Figure, Title: s.Title,
			PaperSetting: s.PaperSetting, OurSetting: s.OurSetting, Dataset: s.Dataset,
			Systems: s.Systems, MemLimits: strings.Join(s.MemLimits, ", "), Runs: studyRuns(s), Differ: s.Differ,
			HaveDataset: contains(v.Datasets, s.Dataset)}
		if !card.HaveDataset {
			if cfg, err := dataset.Preset(s.Dataset); err == nil {
				fb := cfg.Nodes * int64(cfg.FeatureDim) * 4
				card.Generate = fmt.Sprintf("%s (%s of features, ~%s)", s.Dataset, units.Bytes(fb), units.Estimate(max(1, float64(fb)/250e6*1.5)))
			}
		}
		card.Testbed, _ = s.Testbed() // checked when the study was parsed
		for _, r := range s.Ratios {
			card.Ratios = append(card.Ratios, fmt.Sprintf("%s = %s", r.Label, r.Paper))
		}
		if first != nil {
			if small, ok := smallScale(s, *first, h.DataDir); ok {
				card.SmallDataset, card.SmallLimits, card.SmallRuns = first.Name, strings.Join(small.MemLimits, ", "), studyRuns(small)
				if b, err := small.Grid(first.Name); err == nil {
					if g, err := grid.ParseGrid(b); err == nil {
						refused := h.Queue.Refusals(g, nil)
						card.SmallRefused = len(refused)
						card.SmallEstimate = gridEstimate(g, *first, past, refused)
					}
				}
			}
		}
		for _, e := range exps {
			if st, ok := studies.ByExperiment(e.Name); ok && st.ID == s.ID {
				card.Experiments = append(card.Experiments, views.StudyExperiment{ID: e.ID, Dataset: e.Dataset, State: e.Counts.State(),
					Limits: strings.Join(studies.LimitsOfGrid(e.Grid), ", ")})
			}
		}
		v.Studies = append(v.Studies, card)
	}
	return v, nil
}

// studyValue writes a value of a study's metric in its unit: seconds,
// a hit ratio as a percentage, bytes, or a count (rows, a counter's mean
// per epoch).
func studyValue(metric string, x float64) string {
	unit := ""
	if f, ok := fields.Find(metric); ok {
		unit = f.Unit
	} else if f, ok := fields.FindRun(metric); ok {
		unit = f.Unit
	}
	switch {
	case metric == studies.MetricHitRatio:
		return fmt.Sprintf("%.1f %%", 100*x)
	case unit == "bytes":
		return units.Bytes(int64(math.Round(x)))
	case unit == "rows" || unit == "count" || strings.HasPrefix(metric, report.CounterPrefix):
		return fmtInt(int64(math.Round(x)))
	case unit == "ratio":
		return fmt.Sprintf("%.3f", x)
	}
	return fmt.Sprintf("%.1f s", x)
}

// studyRuns is the number of runs of s's grid: a run per system and
// limit times the values of any other axis it sweeps (a batch axis, the
// structure studies' ids axis).
func studyRuns(s studies.Study) int {
	if b, err := s.Grid(""); err == nil {
		if g, err := grid.ParseGrid(b); err == nil {
			return g.Count()
		}
	}
	return len(s.Systems) * len(s.MemLimits)
}

// StudyCSV handles GET /experiments/:id/study.csv: the study table of an
// experiment made for a reproduction study, as CSV (404 for another
// experiment).
func (h *ExperimentsHandler) StudyCSV(c *fiber.Ctx) error {
	e, err := experimentParam(c, h.Store)
	if err != nil {
		return err
	}
	id, ctx := e.ID, c.UserContext()
	t, ok, err := compareStudy(ctx, h.Store, h.Digests, h.DataDir, e)
	if err != nil {
		return err
	}
	if !ok {
		return fiber.NewError(fiber.StatusNotFound, fmt.Sprintf("experiment %d was not made for a reproduction study", id))
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="experiment-%d-study-%s.csv"`, id, t.Study.ID))
	return report.WriteStudyCSV(c.Response().BodyWriter(), t)
}

// compareStudy compares an experiment made for a study with the paper
// (report.LoadStudyTable). ok is false for any other experiment.
func compareStudy(ctx context.Context, src report.Source, cache *report.DigestCache, dataDir string, e store.Experiment) (report.StudyTable, bool, error) {
	return report.LoadStudyTable(ctx, src, cache, dataDir, e)
}

// studyTable is the paper-beside-ours table of an experiment made for a
// study, nil for any other experiment. Runs are read with their epochs
// (digests cached); limits are matched as shares of the dataset's feature
// bytes.
func studyTable(ctx context.Context, src report.Source, cache *report.DigestCache, dataDir string, e store.Experiment) (*views.StudyTableView, error) {
	t, ok, err := compareStudy(ctx, src, cache, dataDir, e)
	if err != nil || !ok {
		return nil, err
	}
	s := t.Study
	v := &views.StudyTableView{Dataset: e.Dataset, Limits: strings.Join(studies.LimitsOfGrid(e.Grid), ", "), CSV: fmt.Sprintf("/experiments/%d/study.csv", e.ID),
		ID: s.ID, Paper: s.Paper.Name, Figure: s.Figure, Title: s.Title,
		PaperSetting: s.PaperSetting, OurSetting: s.OurSetting, Metric: s.Metric, Differ: s.Differ, MinEvidence: report.MinEvidence}
	secs := func(x float64, have bool) string {
		if !have {
			return "–"
		}
		return studyValue(s.Metric, x)
	}
	for _, r := range t.Rows {
		runs := fmt.Sprintf("%d of %d done", r.Done, r.Runs)
		if r.Runs == 0 {
			runs = "no run"
		}
		if r.Outcomes != "" {
			runs += "; " + r.Outcomes
		}
		if r.Done > 0 {
			runs += "; " + r.Side.Words()
		}
		v.Rows = append(v.Rows, views.StudyRowView{Label: r.Label, System: r.System, MemLimit: r.MemLimit,
			Paper: secs(r.Paper, r.Paper > 0), Ours: secs(r.Ours, r.HaveOurs), Runs: runs})
	}
	for _, r := range t.Ratios {
		rv := views.StudyRatioView{Label: r.Label, Paper: r.Paper, Ours: "–", Verdict: "pending: a side has no finished run"}
		switch {
		case r.NumOOM && r.DenOOM:
			rv.Ours, rv.Verdict = "OOM", "both sides ran out of memory at this limit"
		case r.NumOOM:
			rv.Ours, rv.Verdict = "OOM", s.Label(r.Num)+" ran out of memory at this limit"
		case r.DenOOM:
			rv.Ours, rv.Verdict = "OOM", s.Label(r.Den)+" ran out of memory at this limit"
		}
		rv.Evidence = fmt.Sprintf("%s: %s · %s: %s", s.Label(r.Num), r.NumSide.Words(), s.Label(r.Den), r.DenSide.Words())
		if r.HaveOurs {
			rv.Ours = fmt.Sprintf("%.2f×", r.OursMedian) // the ratio of the sides' medians, as the claims table
			side := fmt.Sprintf("outside ±%.0f %% of the paper's", 100*report.ClaimTolerance)
			if r.Within {
				side = fmt.Sprintf("within ±%.0f %% of the paper's", 100*report.ClaimTolerance)
			}
			if r.Evidence {
				rv.Verdict = side + fmt.Sprintf(" (over the quiet warm runs: %d and %d)", r.NumSide.QuietWarm, r.DenSide.QuietWarm)
			} else {
				rv.Verdict = fmt.Sprintf("not enough evidence: a verdict needs %d quiet runs with warm epochs a side (it reads %s so far)", report.MinEvidence, side)
			}
		}
		v.Ratios = append(v.Ratios, rv)
	}
	return v, nil
}
