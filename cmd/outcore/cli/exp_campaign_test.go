package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"outcore/experiments/studies"
	"outcore/report"
	"outcore/store"
)

// TestExpClaimsAndEstimate runs a reproduction study on a real store
// (helios-fig6-inmem on tiny, its 200 % raised to what helios starts in
// there, as the small-scale form raises it; 3 repeats) and checks the
// campaign's commands against its runs: exp estimate says "unknown"
// before any run and, after, the runs' median epoch time × epochs per
// variant; --budget --fitting picks it or not; exp claims writes the
// paper's ratio beside the ratio of the sides' medians as the store has
// them, with a verdict its count line agrees with; exp export --what
// study writes the study table.
func TestExpClaimsAndEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six training runs")
	}
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	st, ok := studies.Lookup("helios-fig6-inmem")
	if !ok {
		t.Fatal("study helios-fig6-inmem not in the registry")
	}
	b, err := st.GridIn("tiny", "", 3)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	g["axes"].(map[string]any)["mem_limit"] = []string{"10000%"} // 100 MiB of tiny's 1 MiB: above helios's floor
	b, _ = json.Marshal(g)
	gridFile := filepath.Join(dir, "grid.json")
	if err := os.WriteFile(gridFile, b, 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCLI("exp", "estimate", "--file", gridFile, "--data-dir", dir)
	if code != 0 || !regexp.MustCompile(`grid\.json\s+6\s+0\s+unknown\s+6`).MatchString(stdout) {
		t.Fatalf("estimate before any run: exit %d; want 6 runs, unknown\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("exp", "create", "--file", gridFile, "--wait", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exp create: exit %d\n%s\n%s", code, stdout, stderr)
	}
	id := regexp.MustCompile(`experiment (\d+) created`).FindStringSubmatch(stdout)
	if id == nil {
		t.Fatalf("exp create printed no experiment id:\n%s", stdout)
	}

	// the medians as the store has them
	ctx := context.Background()
	s, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, store.RunFilter{Statuses: []string{store.StatusDone}})
	s.Close()
	if err != nil || len(runs) != 6 {
		t.Fatalf("done runs: %d, %v; want 6", len(runs), err)
	}
	bySys := map[string][]float64{}
	for _, r := range runs {
		bySys[r.System] = append(bySys[r.System], *r.MeanEpochS)
	}
	med := func(xs []float64) float64 { xs = slices.Clone(xs); slices.Sort(xs); return xs[len(xs)/2] }
	num, den := med(bySys["helios:cpu_cache=10%"]), med(bySys["helios:cpu_cache=100%"])
	epochs := g["epochs"].(float64)
	want := report.Duration(3 * epochs * (num + den))

	code, stdout, _ = runCLI("exp", "estimate", "--file", gridFile, "--data-dir", dir)
	if code != 0 || !regexp.MustCompile(`grid\.json\s+6\s+0\s+`+regexp.QuoteMeta(want)+`\s+0`).MatchString(stdout) {
		t.Errorf("estimate after the runs: exit %d; want 6 runs in %s (3 × %g epochs × (%.3f + %.3f s))\n%s", code, want, epochs, num, den, stdout)
	}
	for _, c := range []struct {
		budget string
		fits   bool
	}{{"1ns", false}, {"1000h", true}} {
		code, stdout, _ = runCLI("exp", "estimate", "--file", gridFile, "--budget", c.budget, "--fitting", "--data-dir", dir)
		if code != 0 || strings.Contains(stdout, "grid.json") != c.fits {
			t.Errorf("estimate --budget %s --fitting: exit %d, %q; fits %v", c.budget, code, stdout, c.fits)
		}
	}

	code, stdout, stderr = runCLI("exp", "claims", id[1], "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exp claims: exit %d\n%s", code, stderr)
	}
	row := regexp.MustCompile(`(?m)^\| Helios .*Helios / Helios-InMem \(epoch time\) \| 10000%, ` + "`tiny`" + `, helios-preprint \(exp \d+\) \| 1\.01–1\.10× [^|]*\| ([0-9.]+)× \| n=3[^|]*; n=3[^|]* \| ([^|]+) \|$`).FindStringSubmatch(stdout)
	if row == nil {
		t.Fatalf("exp claims: no row for the study's ratio with n=3 a side:\n%s", stdout)
	}
	ours, _ := strconv.ParseFloat(row[1], 64)
	if math.Abs(ours/(num/den)-1) > 0.02 {
		t.Errorf("exp claims: ours %.2f×; the store's medians give %.2f×", ours, num/den)
	}
	holds := "0 of 1 claims hold"
	if strings.Contains(row[2], "**yes**") {
		holds = "1 of 1 claims hold"
	}
	if !strings.Contains(stdout, holds) {
		t.Errorf("exp claims: verdict %q but no %q:\n%s", row[2], holds, stdout)
	}

	code, stdout, stderr = runCLI("exp", "export", id[1], "--csv", "--what", "study", "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "helios-fig6-inmem,ratio,Helios / Helios-InMem (epoch time),") {
		t.Errorf("export --what study: exit %d\n%s%s", code, stdout, stderr)
	}
	// an experiment made for no study has neither
	if code, _, stderr = runCLI("exp", "claims", "999", "--data-dir", dir); code == 0 {
		t.Errorf("exp claims of a missing experiment: exit 0 (%s)", stderr)
	}
}

// TestExpRetryWait: `exp retry ID --wait` continues an experiment as the
// campaign script does after a kill: its cancelled run is queued again,
// its queued ones run, and it waits until every run is done.
func TestExpRetryWait(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	code, stdout, stderr := runCLI("exp", "create", "--study", "gids-fig11-window", "--study-dataset", "tiny", "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "experiment 1 created: 3 runs queued") {
		t.Fatalf("exp create: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI("exp", "cancel", "--run", "1", "--data-dir", dir); code != 0 {
		t.Fatalf("exp cancel --run 1: %s", stderr)
	}
	if code, _, stderr := runCLI("exp", "retry", "--run", "1", "--wait", "--data-dir", dir); code != 2 || !strings.Contains(stderr, "--wait takes an experiment ID") {
		t.Errorf("retry --run --wait: exit %d, %q; want a usage error", code, firstLine(stderr))
	}
	code, stdout, stderr = runCLI("exp", "retry", "1", "--wait", "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "experiment 1: 1 runs queued again, 0 of 3 done") ||
		!strings.Contains(stdout, "experiment 1 finished: 3 done, 0 oom, 0 failed, 0 cancelled, 0 interrupted") {
		t.Fatalf("exp retry 1 --wait: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestExpEstimateClaimsUsage: the campaign commands' mistakes are usage
// errors naming what is wrong.
func TestExpEstimateClaimsUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exp", "estimate", "--fitting"}, "--fitting needs --budget"},
		{[]string{"exp", "estimate", "--file", "g.json", "gnndrive-table2"}, "give study ids or --file, not both"},
		{[]string{"exp", "estimate", "nosuch"}, `study "nosuch": no such study`},
		{[]string{"exp", "estimate", "--study-repeats", "0"}, "--study-repeats 0, want at least 1"},
		{[]string{"exp", "claims"}, "argument"},
		{[]string{"exp", "claims", "x"}, `experiment id "x" is not a positive integer`},
	} {
		code, _, stderr := runCLI(append(c.args, "--data-dir", dir)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", c.args, code, firstLine(stderr), c.want)
		}
	}
}
