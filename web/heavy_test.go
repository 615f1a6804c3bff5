package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"outcore/report"
)

// TestHeavyAnswersLimited: pages, charts and PDFs draw from one budget of
// renders (Limits.MaxRenders): with it spent a render is refused at once
// with 503 and Retry-After; each answer gives its slot back once written.
func TestHeavyAnswersLimited(t *testing.T) {
	ls := serveAttacked(t, func(c *Config) { c.Limits.MaxRenders = 1 })
	e := ls.create(`{"name":"h","dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["none"]}}`)
	paths := []string{
		fmt.Sprintf("/experiments/%d", e.ID),
		fmt.Sprintf("/experiments/%d/charts.json", e.ID),
		fmt.Sprintf("/experiments/%d/charts/%s.pdf", e.ID, report.ChartIDs[0]),
		fmt.Sprintf("/compare?exp=%d", e.ID),
	}
	if err := ls.live.renders.take(); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		resp, body := ls.do(t, "GET", p, nil, "")
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "being rendered") {
			t.Errorf("GET %s with the render budget spent: %d %.200s", p, resp.StatusCode, body)
		}
		wantSecurityHeaders(t, "503", resp)
	}
	ls.live.renders.release()
	for i := 0; i < 2; i++ {
		for _, p := range paths {
			if resp, body := ls.do(t, "GET", p, nil, ""); resp.StatusCode == 503 {
				t.Errorf("GET %s with a free slot: %d %.200s", p, resp.StatusCode, body)
			}
			waitFor(t, 5*time.Second, "the slot given back", func() bool { return ls.live.renders.used() == 0 })
		}
	}
	if resp, _ := ls.do(t, "HEAD", paths[0], nil, ""); resp.StatusCode != 200 {
		t.Errorf("HEAD %s: %d", paths[0], resp.StatusCode)
	}
	waitFor(t, 5*time.Second, "the slot given back after HEAD", func() bool { return ls.live.renders.used() == 0 })
}

// TestCostlyAnswersRefuseOtherSites: downloads (chart files, exports,
// bundles) are refused (403) to requests a browser marks as sent by
// another site, or whose Origin is another; pages are refused to another
// site's subresource requests but open from its links.
func TestCostlyAnswersRefuseOtherSites(t *testing.T) {
	ls := serveAttacked(t, nil)
	e := ls.create(`{"name":"x","dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["none"]}}`)
	pdf := fmt.Sprintf("/experiments/%d/charts/%s.pdf", e.ID, report.ChartIDs[0])
	page := fmt.Sprintf("/experiments/%d", e.ID)
	link := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
	for _, tc := range []struct {
		path string
		hdr  map[string]string
		want int // 0: anything but 403
	}{
		{pdf, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{pdf, map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{pdf, link, 403},
		{pdf, map[string]string{"Origin": "http://evil.example"}, 403},
		{fmt.Sprintf("/experiments/%d/charts/%s.csv", e.ID, report.ChartIDs[0]), map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{fmt.Sprintf("/experiments/%d/export/runs.csv", e.ID), map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{fmt.Sprintf("/experiments/%d/bundle.zip", e.ID), map[string]string{"Origin": "http://localhost:1"}, 403},
		{fmt.Sprintf("/compare/charts/%s.svg?exp=%d", report.ChartIDs[0], e.ID), map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{page, map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, 403},
		{fmt.Sprintf("/experiments/%d/charts.json", e.ID), map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}, 403},
		{pdf, map[string]string{"Sec-Fetch-Site": "same-origin"}, 0},
		{pdf, map[string]string{"Sec-Fetch-Site": "none"}, 0},
		{pdf, nil, 0},
		{page, link, 200},
		{page, map[string]string{"Sec-Fetch-Site": "same-origin"}, 200},
	} {
		resp, body := ls.do(t, "GET", tc.path, tc.hdr, "")
		if (tc.want == 0 && resp.StatusCode == 403) || (tc.want != 0 && resp.StatusCode != tc.want) {
			t.Errorf("GET %s %v: %d %.200s", tc.path, tc.hdr, resp.StatusCode, body)
		}
		if resp.StatusCode == 403 && !strings.Contains(body, "another site") {
			t.Errorf("GET %s %v: 403 without the reason: %.200s", tc.path, tc.hdr, body)
		}
	}
}
