package web

import (
	"fmt"
	"net/url"
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
		if runs := e.runs(id); len(runs) == 0 {
			t.Errorf("study %s at small scale: no run queued", s.ID)
		}
	}
}
