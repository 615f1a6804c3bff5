package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"outcore/internal/units"
	"outcore/report"
	"outcore/store"
	"outcore/store/storetest"
)

// exportFixture is a data directory whose store holds the storetest grid
// (pyg+ and gnndrive at two memory limits, pyg+ OOM at the smaller).
func exportFixture(t *testing.T) (dir, expID string, runs []store.Run) {
	t.Helper()
	dir = t.TempDir()
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, runs, err := storetest.Experiment(ctx, st, "grid", storetest.Grid())
	if err != nil {
		t.Fatal(err)
	}
	return dir, strconv.FormatInt(e.ID, 10), runs
}

func TestExpExportFigure(t *testing.T) {
	dir, id, runs := exportFixture(t)
	out := t.TempDir()
	export := func(args ...string) (int, string, string) {
		return runCLI(append(append([]string{"exp", "export"}, args...), "--data-dir", dir)...)
	}

	// PDF to a named file.
	pdf := filepath.Join(out, "mem.pdf")
	code, stdout, stderr := export(id, "--figure", "epoch-vs-mem", "--format", "pdf", "--out", pdf)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "wrote "+pdf) {
		t.Fatalf("pdf: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(pdf)
	if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b[len(b)-32:], []byte("%%EOF")) || len(b) < 2000 {
		t.Fatalf("pdf: %d bytes, %v, starts %q", len(b), err, b[:min(len(b), 8)])
	}

	// SVG on stdout: the variants' legend and the OOM cell are drawn.
	code, stdout, stderr = export(id, "--figure", "epoch-vs-mem", "--format", "svg", "-o", "-")
	if code != 0 || !strings.Contains(stdout, "<svg") {
		t.Fatalf("svg: exit %d, stderr %q, stdout %.100q", code, stderr, stdout)
	}
	for _, want := range []string{"pyg+", "gnndrive", "OOM", "Epoch time vs memory limit", "n = 2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("svg lacks %q", want)
		}
	}

	// The figure's data as CSV: pyg+ at 128 MiB is an OOM cell of 2 runs.
	code, stdout, _ = export(id, "--figure", "epoch-vs-mem", "--format", "csv", "--out", "-")
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if code != 0 || err != nil || len(recs) != 5 || recs[0][0] != "chart" {
		t.Fatalf("csv: exit %d, %v, %q", code, err, stdout)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	oom := false
	for _, r := range recs[1:] {
		oom = oom || (r[col["series"]] == "pyg+" && r[col["x"]] == "134217728" && r[col["x_label"]] == "128MiB" &&
			r[col["status"]] == "oom" && len(strings.Fields(r[col["run_ids"]])) == 2)
	}
	if !oom {
		t.Errorf("no OOM row for pyg+ at 128 MiB:\n%s", stdout)
	}

	// Without --out, the dashboard's file name in the current directory.
	t.Chdir(out)
	if code, _, stderr := export(id, "--figure", "stages", "--format", "pdf"); code != 0 {
		t.Fatalf("default name: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "experiment-"+id+"-stages.pdf")); err != nil {
		t.Errorf("default file: %v", err)
	}

	// A run's figure.
	runID := strconv.FormatInt(runs[len(runs)-1].ID, 10)
	if code, _, stderr := runCLI("exp", "export", "--run", runID, "--figure", "run-memory", "--format", "svg", "--data-dir", dir); code != 0 {
		t.Errorf("run figure: exit %d, %s", code, stderr)
	} else if _, err := os.Stat(filepath.Join(out, "run-"+runID+"-run-memory.svg")); err != nil {
		t.Errorf("run figure file: %v", err)
	}

	// Mistakes exit 2 and say what is known; a figure without data exits 1
	// and writes no file.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{id, "--figure", "nope"}, 2, strings.Join(report.ChartIDs, ", ")},
		{[]string{id, "--figure", "run-memory"}, 2, `no chart "run-memory"`},
		{[]string{"--run", runID, "--figure", "stages"}, 2, strings.Join(report.RunChartIDs, ", ")},
		{[]string{id, "--figure", "stages", "--format", "png"}, 2, "csv, svg, pdf"},
		{[]string{id, "--figure", "normalised", "--baseline", "ginex"}, 2, "have pyg+, gnndrive"},
		{[]string{id}, 2, "--csv or --figure"},
		{[]string{id, "--csv", "--figure", "stages"}, 2, "exclude each other"},
		{[]string{id, "--figure", "epoch-vs-dim", "--out", filepath.Join(out, "dim.pdf"), "--format", "pdf"}, 1, "not varied"},
		{[]string{"99", "--figure", "stages"}, 1, "not found"},
	} {
		code, _, stderr := export(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("export %v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "dim.pdf")); !os.IsNotExist(err) {
		t.Errorf("a figure without data left a file: %v", err)
	}

	// The tidy tables still come out of --csv.
	code, stdout, stderr = export(id, "--csv", "--what", "epochs")
	if code != 0 || strings.Count(stdout, "\n") != 1+6*3 { // header + 6 finished runs × 3 epochs
		t.Errorf("--csv --what epochs: exit %d, %d lines, stderr %q", code, strings.Count(stdout, "\n"), stderr)
	}
}

// TestExpExportBundle: --bundle writes the paper bundle; it excludes the
// other exports.
func TestExpExportBundle(t *testing.T) {
	dir, id, _ := exportFixture(t)
	out := filepath.Join(t.TempDir(), "b.zip")
	code, _, stderr := runCLI("exp", "export", id, "--bundle", out, "--size", "column", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	names := map[string]bool{}
	for _, f := range zr.File {
		names[f.Name] = true
	}
	for _, want := range []string{"runs.csv", "epochs.csv", "samples.csv", "charts/epoch-vs-mem.csv", "figures/epoch-vs-mem.svg", "figures/stages.pdf", "grid.json", "host.json", "VERSION", "replot.py", "README.md"} {
		if !names[want] {
			t.Errorf("bundle lacks %s (has %v)", want, names)
		}
	}
	if code, _, _ := runCLI("exp", "export", id, "--bundle", out, "--csv", "--data-dir", dir); code != 2 {
		t.Errorf("--bundle with --csv: exit %d, want 2", code)
	}
}

// TestCgroupLimitCell: exp show's CGROUP_LIMIT is the limit that bound the
// run — the larger one its deviations name where it held its model step or
// GPU tiers beside the budget, else the enforced budget, else "-".
func TestCgroupLimitCell(t *testing.T) {
	const mib = int64(1) << 20
	devs := func(s ...string) json.RawMessage { b, _ := json.Marshal(s); return b }
	cases := []struct {
		name string
		run  store.Run
		want string
	}{
		{"beside the budget", store.Run{MemLimitBytes: 614 * mib, LimitEnforced: true,
			Deviations: devs("x", "feature buffer held outside the 614 MiB host budget ...; the cgroup limit is 884 MiB")}, units.Bytes(884 * mib)},
		{"the budget itself", store.Run{MemLimitBytes: 614 * mib, LimitEnforced: true, Deviations: devs("x")}, units.Bytes(614 * mib)},
		{"a smaller number named", store.Run{MemLimitBytes: 614 * mib, LimitEnforced: true,
			Deviations: devs("the cgroup limit is 100 MiB")}, units.Bytes(614 * mib)},
		{"not enforced", store.Run{MemLimitBytes: 614 * mib}, "-"},
		{"no limit", store.Run{LimitEnforced: true, Deviations: devs("the cgroup limit is 884 MiB")}, "-"},
	}
	for _, c := range cases {
		if got := cgroupLimitCell(c.run); got != c.want {
			t.Errorf("%s: CGROUP_LIMIT %q, want %q", c.name, got, c.want)
		}
	}
}
