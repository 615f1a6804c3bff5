package web

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"outcore/report"
	"outcore/web/views"
)

// CompareHandler serves a comparison across experiments: the runs of two
// or more experiments (?exp=3&exp=5), optionally only the cells a run
// filter picks (?runs=system=ginex), drawn with the experiment page's
// charts and a table of the cells that changed between them (DESIGN §6).
type CompareHandler struct {
	Store   Store
	Digests *report.DigestCache
	DataDir string // the datasets' sizes for the scale figure
}

// compareArgs reads ?exp= (repeated or comma-separated) and ?runs=.
func compareArgs(c *fiber.Ctx) (ids []int64, runs string, f report.Filter, err error) {
	var vals []string
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if string(k) == "exp" {
			vals = append(vals, string(v))
		}
	})
	if ids, err = report.ParseIDs(vals); err != nil {
		return nil, "", f, err
	}
	// In the order they were made: changes read from the earlier to the later.
	slices.Sort(ids)
	runs = strings.Clone(c.Query("runs"))
	if f, err = report.ParseFilter(runs); err != nil {
		return ids, runs, f, err
	}
	if !f.OnlyRunTerms() {
		return ids, runs, f, fmt.Errorf("%w: pick cells with run keys only (system, outcome, limit, dim, batch, repeat, model, fanout, epoch_s, val)", report.ErrFilter)
	}
	return ids, runs, f, nil
}

// query is the comparison's own query string (for its chart links).
func compareQuery(ids []int64, runs string) string {
	v := url.Values{}
	for _, id := range ids {
		v.Add("exp", strconv.FormatInt(id, 10))
	}
	if runs != "" {
		v.Set("runs", runs)
	}
	return v.Encode()
}

func (h *CompareHandler) load(ctx context.Context, ids []int64, f report.Filter) (*report.Comparison, error) {
	return report.LoadCrossComparison(ctx, h.Store, h.Digests, ids, f.RunConds())
}

// Show handles GET /compare.
func (h *CompareHandler) Show(c *fiber.Ctx) error {
	ctx := c.UserContext()
	ids, runs, f, err := compareArgs(c)
	v := views.CompareView{RunFilter: runs}
	for _, id := range ids {
		e, gerr := h.Store.Experiment(ctx, id)
		if gerr != nil {
			return gerr
		}
		v.Experiments = append(v.Experiments, views.CompareExp{ID: e.ID, Name: experimentTitle(e), Dataset: e.Dataset, Runs: e.Counts.Total})
	}
	if err == nil {
		v.Scale = scaleLinks(v.Experiments, compareQuery(ids, ""))
	}
	switch {
	case err != nil:
		v.Problem = err.Error()
	case len(ids) < 2:
		v.Problem = "Pick two or more experiments to compare (tick them in the experiment list)."
	}
	if v.Problem != "" {
		c.Status(fiber.StatusBadRequest)
		return renderPage(c, views.ComparePage(pageMeta(c, "Compare experiments", "experiments"), v))
	}
	cmp, err := h.load(ctx, ids, f)
	if err != nil {
		return err
	}
	q := compareQuery(ids, runs)
	cv := cmp.Caveats()
	if cv.MixedData != "" {
		if !mixedAllowed(c) {
			v.Problem = "Not compared: " + cv.MixedData + "."
			v.MixedURL = "/compare?" + q + "&mixed=ok"
			c.Status(fiber.StatusConflict)
			return renderPage(c, views.ComparePage(pageMeta(c, "Compare experiments", "experiments"), v))
		}
		v.Caveats = append(v.Caveats, "Compared as asked although "+cv.MixedData+".")
		q += "&mixed=ok"
	}
	v.Caveats = append(v.Caveats, cv.Flags...)
	v.ChartsURL = "/compare/charts.json?" + q
	frames := report.NewComparison(nil)
	for _, entry := range report.ChartsOn(report.PageCompare) {
		if entry.Scope != report.ScopeExperiment {
			continue // the scale figures: links below
		}
		ch, _ := frames.Chart(entry.ID, "")
		slot := chartSlot("/compare", ch, entry.Wide)
		slot.CSV, slot.SVG, slot.PDF = slot.CSV+"?"+q, slot.SVG+"?"+q, slot.PDF+"?"+q
		v.Charts = append(v.Charts, slot)
	}
	for _, ch := range cmp.Changes() {
		if ch.Unlike != "" {
			v.Changes = append(v.Changes, views.ChangeRow{Variant: ch.Variant, Cell: ch.Cell, FromExp: ch.FromExp, ToExp: ch.ToExp,
				From: "–", To: "–", Change: "not compared", Epochs: ch.Unlike, Unlike: true, Color: cmp.Color(ch.Variant)})
			continue
		}
		v.Changes = append(v.Changes, views.ChangeRow{Variant: ch.Variant, Cell: ch.Cell, From: fmtMeanSD(ch.From) + " s (n=" + strconv.Itoa(ch.From.N) + ")",
			To: fmtMeanSD(ch.To) + " s (n=" + strconv.Itoa(ch.To.N) + ")", FromExp: ch.FromExp, ToExp: ch.ToExp, Epochs: ch.Epochs,
			Change: fmt.Sprintf("%+.1f%%", 100*(ch.Ratio-1)), Slower: ch.Slower, Color: cmp.Color(ch.Variant)})
	}
	v.Variants = cmp.Variants()
	return renderPage(c, views.ComparePage(pageMeta(c, "Compare experiments", "experiments"), v))
}

// ChartsJSON handles GET /compare/charts.json.
func (h *CompareHandler) ChartsJSON(c *fiber.Ctx) error {
	ids, _, f, err := compareArgs(c)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	cmp, err := h.load(c.UserContext(), ids, f)
	if err != nil {
		if errors.Is(err, report.ErrFilter) {
			return fiber.NewError(fiber.StatusBadRequest, err.Error())
		}
		return err
	}
	if err := refuseMixed(c, cmp); err != nil {
		return err
	}
	baseline, err := baselineParam(c, cmp)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	cv := cmp.Caveats()
	return c.JSON(fiber.Map{"charts": cmp.Charts(baseline), "mixed_data": cv.MixedData, "caveats": cv.Flags})
}

// ChartFile handles GET /compare/charts/<chart>.{csv,svg,pdf}.
func (h *CompareHandler) ChartFile(c *fiber.Ctx) error {
	ids, _, f, err := compareArgs(c)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	chartID, ext, err := splitChartFile(c.Params("file"), report.ChartIDs)
	if err != nil {
		return err
	}
	cmp, err := h.load(c.UserContext(), ids, f)
	if err != nil {
		return err
	}
	if err := refuseMixed(c, cmp); err != nil {
		return err
	}
	baseline, err := baselineParam(c, cmp)
	if err != nil {
		return err
	}
	ch, _ := cmp.Chart(chartID, baseline)
	if cv := cmp.Caveats(); cv.MixedData != "" {
		ch.Note = "Caution: " + cv.MixedData + ". " + ch.Note
	}
	name := fmt.Sprintf("compare-%s-%s.%s", joinIDs(ids), chartID, ext)
	return sendChart(c, ch, ext, name, cmp.Meta())
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, "-")
}

// mixedAllowed reports whether the comparison was asked for although its
// experiments ran on different data (?mixed=ok).
func mixedAllowed(c *fiber.Ctx) bool { return c.Query("mixed") == "ok" }

// refuseMixed is the 409 of a comparison of different data that was not
// asked for (DESIGN §6).
func refuseMixed(c *fiber.Ctx, cmp *report.Comparison) error {
	if cv := cmp.Caveats(); cv.MixedData != "" && !mixedAllowed(c) {
		return fiber.NewError(fiber.StatusConflict, "not compared: "+cv.MixedData+"; add mixed=ok to compare them anyway")
	}
	return nil
}
