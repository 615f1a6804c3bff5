package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"outcore/store"
)

// idsOf is the table's ids of one scope, in table order.
func idsOf(s ChartScope) []string {
	var out []string
	for _, e := range ChartTable() {
		if e.Scope == s {
			out = append(out, e.ID)
		}
	}
	return out
}

// TestChartTableIsTheCatalogue: every list of chart ids is the table's, in
// its order, and every entry is whole: an id used once, a title, a scope,
// a builder, and a chart built from it that carries its id, title and
// paper reference.
func TestChartTableIsTheCatalogue(t *testing.T) {
	if got, want := ChartIDs, idsOf(ScopeExperiment); !slices.Equal(got, want) {
		t.Errorf("ChartIDs %v, table %v", got, want)
	}
	if got, want := RunChartIDs, idsOf(ScopeRun); !slices.Equal(got, want) {
		t.Errorf("RunChartIDs %v, table %v", got, want)
	}
	if got, want := ScaleChartIDs, idsOf(ScopeScale); !slices.Equal(got, want) {
		t.Errorf("ScaleChartIDs %v, table %v", got, want)
	}
	if len(ChartIDs) < 16 || len(RunChartIDs) < 8 || len(ScaleChartIDs) < 2 {
		t.Fatalf("table too short: %d, %d, %d", len(ChartIDs), len(RunChartIDs), len(ScaleChartIDs))
	}
	seen := map[string]bool{}
	cmp := NewComparison(nil)
	for _, e := range ChartTable() {
		if e.ID == "" || e.Title == "" || e.Build == nil || e.Caption == "" {
			t.Errorf("entry %q: want an id, a title, a caption and a builder", e.ID)
			continue
		}
		if seen[e.ID] {
			t.Errorf("id %q twice in the table", e.ID)
		}
		seen[e.ID] = true
		var ch Chart
		var err error
		switch e.Scope {
		case ScopeExperiment:
			var ok bool
			ch, ok = cmp.Chart(e.ID, "")
			if !ok {
				t.Errorf("%s: Comparison.Chart does not know it", e.ID)
			}
		case ScopeRun:
			var ok bool
			ch, ok = RunChart(e.ID, store.Run{}, nil, nil)
			if !ok {
				t.Errorf("%s: RunChart does not know it", e.ID)
			}
		case ScopeScale:
			ch, err = ScaleChart(e.ID, nil, 0.25)
			if err != nil {
				t.Errorf("%s: %v", e.ID, err)
			}
		default:
			t.Errorf("%s: scope %q", e.ID, e.Scope)
			continue
		}
		if ch.ID != e.ID || !strings.HasPrefix(ch.Title, e.Title) {
			t.Errorf("%s: built chart %q %q, table title %q", e.ID, ch.ID, ch.Title, e.Title)
		}
		if e.Paper != "" && !strings.Contains(ch.Note, e.Paper) {
			t.Errorf("%s: note does not name %q: %s", e.ID, e.Paper, ch.Note)
		}
		if e.Axis != "" && e.Scope != ScopeExperiment {
			t.Errorf("%s: an axis on a %s chart", e.ID, e.Scope)
		}
		if ChartAxis(e.ID) != e.Axis {
			t.Errorf("%s: ChartAxis %q, table %q", e.ID, ChartAxis(e.ID), e.Axis)
		}
		for _, p := range e.Pages {
			if !slices.Contains(Pages, p) {
				t.Errorf("%s: page %q", e.ID, p)
			}
		}
	}
	// the experiment page's cards: every comparison chart but the accuracy, a table below them
	var cards []string
	for _, e := range ChartsOn(PageExperiment) {
		cards = append(cards, e.ID)
	}
	if len(cards) != len(ChartIDs)-1 || slices.Contains(cards, "accuracy") {
		t.Errorf("experiment page cards %v", cards)
	}
}

// throwaway is a chart entry a test adds to the table.
func throwaway(id string, scope ChartScope, pages ...Page) ChartEntry {
	return ChartEntry{ID: id, Title: "A throwaway chart", Caption: "nothing at all", Scope: scope, Pages: pages, Wide: true,
		Build: func(e ChartEntry, in ChartInput) (Chart, error) {
			return Chart{ID: e.ID, Title: e.Title, XLabel: "x", YLabel: "y", XType: "category", YType: "value", Kind: "bar",
				Note: "A chart a test adds in one place."}, nil
		}}
}

// TestAddingAChartInOnePlace: an entry added to the table is in the
// catalogue, built by Comparison.Chart and Charts, written by WriteChart
// and listed by CheckChart; taking it out leaves the catalogue as it was.
func TestAddingAChartInOnePlace(t *testing.T) {
	before := slices.Clone(ChartIDs)
	undo := RegisterChart(throwaway("throwaway-chart", ScopeExperiment, PageExperiment, PageCompare))
	if !slices.Contains(ChartIDs, "throwaway-chart") || ChartIDs[len(ChartIDs)-1] != "throwaway-chart" {
		t.Errorf("ChartIDs %v", ChartIDs)
	}
	if err := CheckChart("throwaway-chart", ChartIDs); err != nil {
		t.Error(err)
	}
	cmp := NewComparison(nil)
	ch, ok := cmp.Chart("throwaway-chart", "")
	if !ok || ch.Title != "A throwaway chart" || ch.Empty == "" {
		t.Errorf("Chart: %v %+v", ok, ch)
	}
	all := cmp.Charts("")
	if len(all) != len(ChartIDs) || all[len(all)-1].ID != "throwaway-chart" {
		t.Errorf("Charts: %d charts", len(all))
	}
	if b, _ := json.Marshal(all); !strings.Contains(string(b), `"id":"throwaway-chart"`) {
		t.Error("charts JSON without the new chart")
	}
	var csv strings.Builder
	if err := WriteChart(&csv, ch, FormatCSV); err != nil {
		t.Error(err)
	}
	if e, ok := ChartByID("throwaway-chart"); !ok || !e.Wide {
		t.Errorf("ChartByID: %v %+v", ok, e)
	}
	undo()
	if !slices.Equal(ChartIDs, before) {
		t.Errorf("after undo: %v", ChartIDs)
	}
	if _, ok := cmp.Chart("throwaway-chart", ""); ok {
		t.Error("built after undo")
	}
}

// TestRegisterChartRefusesHalfEntries: an entry without a builder, or
// with an id the table has, is refused.
func TestRegisterChartRefusesHalfEntries(t *testing.T) {
	for name, e := range map[string]ChartEntry{
		"no builder": {ID: "half-chart", Title: "t", Caption: "c", Scope: ScopeExperiment},
		"same id":    throwaway(ChartIDs[0], ScopeExperiment),
		"no scope":   throwaway("scopeless-chart", ""),
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			RegisterChart(e)()
		}()
	}
}

// runChart is the run chart of that id (RunChart), for tests of one.
func runChart(id string, run store.Run, epochs []store.Epoch, samples []store.Sample) Chart {
	ch, _ := RunChart(id, run, epochs, samples)
	return ch
}

// TestFigureSubtitleFromTheTable: a figure's subtitle says one run where
// the table's entry is a run's chart, whatever its id, and adds the
// entry's legend.
func TestFigureSubtitleFromTheTable(t *testing.T) {
	e := throwaway("solo-chart", ScopeRun, PageRun)
	e.Legend = "; a legend of its own"
	defer RegisterChart(e)()
	ch, _ := RunChart("solo-chart", store.Run{}, nil, nil)
	if s := figureSubtitle(ch); !strings.HasPrefix(s, "one run (n = 1)") || !strings.HasSuffix(s, "; a legend of its own") {
		t.Errorf("subtitle %q", s)
	}
}
