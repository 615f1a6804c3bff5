package web

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/store"
	"outcore/store/storetest"
)

// The compare page of experiments on two datasets links the scale figures,
// even where it refuses to pool their cells; the figure files draw each
// variant at the share asked, and bad requests get a clear 4xx.
func TestCompareScaleFigure(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, tinyDir, filepath.Join(dataset.DatasetsDir(dir), "tiny-b"))
	e := newEnvIn(t, dir)
	e.login()
	ctx := context.Background()
	mk := func(ds string) int64 {
		var runs []storetest.Run
		for _, sys := range []string{"pyg+", "gnndrive"} {
			runs = append(runs, storetest.Run{System: sys, Dataset: ds, MemLimit: 1 << 18, Epochs: 2, EpochS: 1, Outcome: store.StatusDone})
		}
		x, _, err := storetest.Experiment(ctx, e.st, "on "+ds, runs)
		if err != nil {
			t.Fatal(err)
		}
		return x.ID
	}
	a, b := mk("tiny"), mk("tiny-b")
	q := fmt.Sprintf("exp=%d&exp=%d", a, b)
	_, page := e.get("/compare?" + q)
	link := "/compare/scale/scale-epoch.svg?" + strings.ReplaceAll(q, "&", "&amp;") + "&amp;share=25%25"
	if !strings.Contains(page, `id="compare-scale"`) || !strings.Contains(page, link) {
		t.Fatalf("compare page of two datasets lacks the scale figures' links (want %s)", link)
	}
	if _, one := e.get(fmt.Sprintf("/compare?exp=%d&exp=%d", a, a)); strings.Contains(one, `id="compare-scale"`) {
		t.Errorf("one dataset: no scale figure to link")
	}
	code, svg := e.get("/compare/scale/scale-epoch.svg?" + q + "&share=25%25")
	if code != 200 || !strings.Contains(svg, "<svg") || !strings.Contains(svg, "gnndrive") {
		t.Errorf("scale-epoch.svg: %d %.200s", code, svg)
	}
	code, csv := e.get("/compare/scale/scale-read.csv?" + q + "&share=0.25")
	if code != 200 || !strings.Contains(csv, "scale-read,pyg+,line,,1048576,bytes,") {
		t.Errorf("scale-read.csv: %d\n%s", code, csv)
	}
	for _, c := range []struct {
		url  string
		code int
	}{
		{"/compare/scale/scale-epoch.svg?" + q + "&share=lots", 400},
		{"/compare/scale/epoch-vs-mem.svg?" + q, 404},
		{"/compare/scale/scale-epoch.svg", 400},
		{"/compare/scale/scale-epoch.svg?" + q + "&share=50%25", 409}, // no run at 50 %
	} {
		if code, body := e.get(c.url); code != c.code {
			t.Errorf("%s: %d, want %d (%.200s)", c.url, code, c.code, body)
		}
	}
}
