package web

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"outcore/report"
)

// throwawayChart is a chart a test adds to report's chart table, the one
// place docs/ARCHITECTURE.md's "Adding a chart" names.
func throwawayChart(id string, scope report.ChartScope, pages ...report.Page) report.ChartEntry {
	return report.ChartEntry{ID: id, Title: "Throwaway " + id, Caption: "nothing", Scope: scope, Pages: pages, Wide: true,
		Build: func(e report.ChartEntry, in report.ChartInput) (report.Chart, error) {
			return report.Chart{ID: e.ID, Title: e.Title, XLabel: "x", YLabel: "y", XType: "category", YType: "value", Kind: "bar",
				Note: "Added in one place."}, nil
		}}
}

// TestAddingAChartInOnePlaceWeb: a chart added to the table alone is a
// card of the pages it names (as wide as the table says), in the page's
// charts.json and downloadable as CSV; a page it does not name has no card.
func TestAddingAChartInOnePlaceWeb(t *testing.T) {
	defer report.RegisterChart(throwawayChart("throwaway-exp", report.ScopeExperiment, report.PageExperiment))()
	defer report.RegisterChart(throwawayChart("throwaway-run", report.ScopeRun, report.PageRun))()
	defer report.RegisterChart(throwawayChart("throwaway-cmp", report.ScopeExperiment, report.PageCompare))()
	e := newEnv(t)
	x := e.create(`{"name":"throwaway","dataset":"tiny","epochs":1,"axes":{"system":["pyg+"]}}`)
	y := e.create(`{"name":"throwaway too","dataset":"tiny","epochs":1,"axes":{"system":["ginex"]}}`)
	card := func(page, id string) string {
		return regexp.MustCompile(`<div class="chart-card"[^>]*data-chart-card="` + id + `"[^>]*>`).FindString(page)
	}
	code, page := e.get(fmt.Sprintf("/experiments/%d", x.ID))
	if c := card(page, "throwaway-exp"); code != 200 || !strings.Contains(c, "grid-column: 1 / -1") {
		t.Errorf("experiment page %d: card %q, want a wide one", code, c)
	}
	if c := card(page, "throwaway-cmp"); c != "" {
		t.Errorf("experiment page: card %q of a chart not on it", c)
	}
	if code, body := e.get(fmt.Sprintf("/experiments/%d/charts.json", x.ID)); code != 200 || !strings.Contains(body, `"id":"throwaway-exp"`) {
		t.Errorf("charts.json %d without the chart", code)
	}
	if code, body := e.get(fmt.Sprintf("/experiments/%d/charts/throwaway-exp.csv", x.ID)); code != 200 {
		t.Errorf("chart CSV %d: %s", code, body)
	}
	code, page = e.get(fmt.Sprintf("/compare?exp=%d&exp=%d", x.ID, y.ID))
	if c := card(page, "throwaway-exp"); code != 200 || c != "" {
		t.Errorf("compare page %d: card %q of a chart not on it", code, c)
	}
	if c := card(page, "throwaway-cmp"); !strings.Contains(c, "grid-column: 1 / -1") {
		t.Errorf("compare page: card %q, want a wide one", c)
	}
	r := e.runs(x.ID)[0]
	code, page = e.get(fmt.Sprintf("/runs/%d", r.ID))
	if c := card(page, "throwaway-run"); code != 200 || !strings.Contains(c, "grid-column: 1 / -1") {
		t.Errorf("run page %d: card %q, want a wide one", code, c)
	}
	if code, body := e.get(fmt.Sprintf("/runs/%d/charts/throwaway-run.csv", r.ID)); code != 200 {
		t.Errorf("run chart CSV %d: %s", code, body)
	}
}
