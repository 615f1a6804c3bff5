package web

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"outcore/report"
	"outcore/web/views"
)

// The scale figure on the compare page (report.ScaleChart): experiments
// on datasets of different sizes are not pooled into one chart (their
// cells are different data), but each variant's epoch time and device
// reads can be drawn against the dataset's size at one memory share.

// scaleShares are the shares the compare page links the scale figure at.
var scaleShares = []string{"25%", "50%", "100%", "none"}

// scaleLinks are the compare page's links to the scale figures of the
// experiments ids (query q), when they ran on at least two datasets.
func scaleLinks(exps []views.CompareExp, q string) []views.ScaleLink {
	datasets := map[string]bool{}
	for _, e := range exps {
		datasets[e.Dataset] = true
	}
	if len(datasets) < 2 {
		return nil
	}
	var out []views.ScaleLink
	for _, share := range scaleShares {
		l := views.ScaleLink{Share: share}
		for _, entry := range report.ChartsOn(report.PageCompare) {
			if entry.Scope != report.ScopeScale {
				continue // the comparison's charts: cards above
			}
			id := entry.ID
			base := "/compare/scale/" + id
			args := "?" + q + "&share=" + url.QueryEscape(share)
			l.Figures = append(l.Figures, views.ScaleFigure{Name: strings.TrimPrefix(id, "scale-"), SVG: base + ".svg" + args, CSV: base + ".csv" + args})
		}
		out = append(out, l)
	}
	return out
}

// ScaleFile handles GET /compare/scale/<figure>.{csv,svg,pdf}?exp=..&share=25%.
func (h *CompareHandler) ScaleFile(c *fiber.Ctx) error {
	ids, _, _, err := compareArgs(c)
	if err != nil || len(ids) == 0 {
		msg := "pick the experiments with ?exp="
		if err != nil {
			msg = err.Error()
		}
		return fiber.NewError(fiber.StatusBadRequest, msg)
	}
	chartID, ext, err := splitChartFile(c.Params("file"), report.ScaleChartIDs)
	if err != nil {
		return err
	}
	share, err := report.ParseShare(c.Query("share", "25%"))
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "share: "+err.Error())
	}
	sets, meta, err := report.LoadScaleSets(c.UserContext(), h.Store, h.Digests, ids, h.DataDir)
	if err != nil {
		return err
	}
	ch, err := report.ScaleChart(chartID, sets, share)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	name := fmt.Sprintf("compare-%s-%s-%s.%s", joinIDs(ids), chartID, strings.TrimSuffix(c.Query("share", "25%"), "%"), ext)
	return sendChart(c, ch, ext, name, meta)
}
