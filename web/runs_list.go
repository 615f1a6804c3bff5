package web

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"outcore/report"
	"outcore/store"
	"outcore/web/views"
)

// maxRunsListed bounds the runs list across experiments (newest first).
const maxRunsListed = 500

// List handles GET /runs?q=FILTER: the runs of every experiment, newest
// first (the current attempt of each cell), filtered by run keys as the
// experiment list is (system=ginex outcome=oom limit<128MiB …).
func (h *RunsHandler) List(c *fiber.Ctx) error {
	ctx := c.UserContext()
	v := views.RunsListView{Filter: strings.Clone(c.Query("q")), Keys: report.FilterKeys()}
	f, err := report.ParseFilter(v.Filter)
	if bad := unknownParams(c, "q"); bad != "" {
		v.Problem = fmt.Sprintf("unknown parameter %q: /runs takes q (a filter) alone", bad)
		c.Status(fiber.StatusBadRequest)
		return renderPage(c, views.RunsListPage(pageMeta(c, "Runs", "runs"), v))
	}
	if err != nil {
		if !errors.Is(err, report.ErrFilter) {
			return err
		}
		v.Problem = err.Error()
		c.Status(fiber.StatusBadRequest)
	}
	runs, err := h.Store.Runs(ctx, store.RunFilter{Current: true, Brief: true, Conds: f.RunConds()})
	if err != nil {
		return err
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].ID > runs[j].ID })
	v.Total = len(runs)
	if len(runs) > maxRunsListed {
		runs = runs[:maxRunsListed]
	}
	names := map[int64]string{}
	if exps, err := h.Store.ListExperiments(ctx); err == nil {
		for _, e := range exps {
			names[e.ID] = experimentTitle(e)
		}
	}
	for _, r := range runs {
		v.Rows = append(v.Rows, views.RunsListRow{RunRow: runRow(r), Experiment: names[r.ExperimentID], Dataset: r.Dataset})
	}
	return renderPage(c, views.RunsListPage(pageMeta(c, "Runs", "runs"), v))
}

// unknownParams is the first query parameter not among known ("" when
// there is none).
func unknownParams(c *fiber.Ctx, known ...string) string {
	bad := ""
	c.Context().QueryArgs().VisitAll(func(k, _ []byte) {
		if bad == "" && !contains(known, string(k)) {
			bad = string(k)
		}
	})
	return bad
}
