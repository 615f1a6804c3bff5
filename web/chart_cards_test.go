package web

import (
	"fmt"
	"regexp"
	"testing"
)

// TestChartCardsOnlyForVaryingAxes: the experiment page is served without
// the cards of charts against grid axes the experiment does not vary
// (hidden from the first paint, not once charts.json has loaded), and with
// the card of the axis it varies.
func TestChartCardsOnlyForVaryingAxes(t *testing.T) {
	e := newEnv(t)
	x := e.create(`{"name":"cards","dataset":"tiny","epochs":1,"axes":{"system":["pyg+","ginex"],"mem_limit":["128MiB","256MiB"]}}`)
	code, page := e.get(fmt.Sprintf("/experiments/%d", x.ID))
	if code != 200 {
		t.Fatalf("GET experiment: %d", code)
	}
	for id, hidden := range map[string]bool{"epoch-vs-mem": false, "epoch-vs-dim": true, "epoch-vs-batch": true, "stages": false} {
		card := regexp.MustCompile(`<div class="chart-card"[^>]*data-chart-card="` + id + `"[^>]*>`).FindString(page)
		if card == "" {
			t.Errorf("no card for %s", id)
			continue
		}
		if got := regexp.MustCompile(`\shidden[\s>=]`).MatchString(card); got != hidden {
			t.Errorf("%s: card %s, want hidden %v", id, card, hidden)
		}
	}
}
