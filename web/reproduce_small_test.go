package web

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/experiments/studies"
)

// TestReproduceSmallFormStartsEveryStudy: on a fresh data directory's
// default dataset (serve's default preset, small), every reproduction
// study's small-scale form creates its experiment with runs, under the
// real floors. The newcomer's browser test runs one study a paper to the
// end (newcomerStudies); this one starts them all, without running them.
func TestReproduceSmallFormStartsEveryStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("generates small")
	}
	e := newEnv(t)
	cfg, err := dataset.Preset("small")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Generate(t.Context(), dataset.DatasetsDir(e.dir), "default", cfg, nil); err != nil {
		t.Fatal(err)
	}
	e.login()
	for _, s := range studies.Papers() {
		resp := e.post("/reproduce/"+s.ID, url.Values{"dataset": {"default"}, "scale": {"small"}})
		if resp.StatusCode != 303 {
			t.Errorf("study %s at small scale: %d %.300s", s.ID, resp.StatusCode, body(t, resp))
			continue
		}
		var id int64
		if _, err := fmt.Sscanf(resp.Header.Get("Location"), "/experiments/%d", &id); err != nil {
			t.Errorf("study %s: redirect to %q", s.ID, resp.Header.Get("Location"))
			continue
		}
		runs := e.runs(id)
		if len(runs) == 0 {
			t.Errorf("study %s at small scale: no run queued", s.ID)
		}
		tb, _ := s.Testbed()
		for _, r := range runs { // the small scale keeps the paper's testbed
			if !strings.Contains(string(r.Config), `"testbed":"`+tb+`"`) {
				t.Errorf("study %s at small scale: run %d's config names no testbed %s: %.300s", s.ID, r.ID, tb, r.Config)
				break
			}
		}
	}
}
