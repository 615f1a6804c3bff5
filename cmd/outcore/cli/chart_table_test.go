package cli

import (
	"archive/zip"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"outcore/report"
)

// throwawayChart is a chart a test adds to report's chart table, the one
// place docs/ARCHITECTURE.md's "Adding a chart" names.
func throwawayChart(id string, scope report.ChartScope) report.ChartEntry {
	return report.ChartEntry{ID: id, Title: "Throwaway " + id, Caption: "nothing at all", Scope: scope,
		Build: func(e report.ChartEntry, in report.ChartInput) (report.Chart, error) {
			y := 1.0
			return report.Chart{ID: e.ID, Title: e.Title, XLabel: "x", YLabel: "y", XType: "category", YType: "value", Kind: "bar",
				Categories: []string{"a"}, Note: "Added in one place.",
				Series: []report.Series{{Name: "s", Color: "#000000", Marker: "circle", Points: []report.Point{{Label: "a", Y: &y, N: 1, Status: report.StatusOK}}}}}, nil
		}}
}

// TestExportFigureAddedInOnePlace: a chart added to the table alone is a
// choice of `exp export --figure` (an experiment's, a run's) and of `exp
// scale --figure`, named with its title or caption in their help, exported,
// and in the paper bundle.
func TestExportFigureAddedInOnePlace(t *testing.T) {
	defer report.RegisterChart(throwawayChart("throwaway-exp", report.ScopeExperiment))()
	defer report.RegisterChart(throwawayChart("throwaway-run", report.ScopeRun))()
	defer report.RegisterChart(throwawayChart("throwaway-scale", report.ScopeScale))()
	dir, id, runs := exportFixture(t)
	_, help, stderr := runCLI("exp", "export", "--help")
	help += stderr
	for _, want := range []string{"throwaway-exp     Throwaway throwaway-exp", "throwaway-run     Throwaway throwaway-run"} {
		if !strings.Contains(help, want) {
			t.Errorf("exp export --help lacks %q:\n%s", want, help)
		}
	}
	_, help, stderr = runCLI("exp", "scale", "--help")
	help += stderr
	for _, want := range []string{"scale-epoch|scale-read|throwaway-scale", "throwaway-scale (nothing at all)", "nothing at all (throwaway-scale)"} {
		if !strings.Contains(help, want) {
			t.Errorf("exp scale --help lacks %q:\n%s", want, help)
		}
	}
	if code, stdout, stderr := runCLI("exp", "export", id, "--figure", "throwaway-exp", "--format", "csv", "--out", "-", "--data-dir", dir); code != 0 || !strings.Contains(stdout, "throwaway-exp") {
		t.Errorf("export throwaway-exp: exit %d, %s %s", code, stdout, stderr)
	}
	run := strconv.FormatInt(runs[len(runs)-1].ID, 10)
	if code, _, stderr := runCLI("exp", "export", "--run", run, "--figure", "throwaway-run", "--format", "svg", "--out", filepath.Join(t.TempDir(), "r.svg"), "--data-dir", dir); code != 0 {
		t.Errorf("export throwaway-run: exit %d, %s", code, stderr)
	}
	if _, _, stderr := runCLI("exp", "export", id, "--figure", "nope", "--data-dir", dir); !strings.Contains(stderr, strings.Join(report.ChartIDs, ", ")) || !strings.Contains(stderr, "throwaway-exp") {
		t.Errorf("unknown figure: %s", stderr)
	}
	out := filepath.Join(t.TempDir(), "b.zip")
	if code, _, stderr := runCLI("exp", "export", id, "--bundle", out, "--data-dir", dir); code != 0 {
		t.Fatalf("bundle: exit %d, %s", code, stderr)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var has bool
	for _, f := range zr.File {
		has = has || strings.HasSuffix(f.Name, "charts/throwaway-exp.csv")
	}
	if !has {
		t.Error("bundle without charts/throwaway-exp.csv")
	}
}
